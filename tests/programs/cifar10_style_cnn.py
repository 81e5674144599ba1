# Adapted from TensorFlow's CIFAR-10 tutorial model, cifar10.py and cifar10_train.py
# (tensorflow/models, tutorials/image/cifar10, TensorFlow 1.x):
# https://github.com/tensorflow/models/blob/r1.13.0/tutorials/image/cifar10/cifar10.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; CIFAR-10 download replaced by generated
# 12x12 colour images of two classes (bright square top-left or bottom-right); smaller layers;
# 40 steps; the queue-runner input pipeline replaced by feeds.
"""The CIFAR-10 tutorial network: conv, pool, local response normalization, weight decay,
exponential learning-rate decay and moving averages of the trained variables."""

import re

import numpy as np

import nbflow as tf

NUM_CLASSES = 2
MOVING_AVERAGE_DECAY = 0.9999
TOWER_NAME = "tower"


def _activation_summary(x):
    tensor_name = re.sub(f"{TOWER_NAME}_[0-9]*/", "", x.op.name)
    tf.summary.histogram(tensor_name + "/activations", x)
    tf.summary.scalar(tensor_name + "/sparsity", tf.nn.zero_fraction(x))


def _variable_with_weight_decay(name, shape, stddev, wd):
    var = tf.get_variable(
        name, shape, initializer=tf.truncated_normal_initializer(stddev=stddev, dtype=tf.float32)
    )
    if wd is not None:
        weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")
        tf.add_to_collection("losses", weight_decay)
    return var


def inference(images):
    with tf.variable_scope("conv1") as scope:
        kernel = _variable_with_weight_decay("weights", shape=[3, 3, 3, 16], stddev=5e-2, wd=None)
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding="SAME")
        biases = tf.get_variable("biases", [16], initializer=tf.constant_initializer(0.0))
        conv1 = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
        _activation_summary(conv1)
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding="SAME")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")
    with tf.variable_scope("local3") as scope:
        reshape = tf.reshape(norm1, [tf.shape(images)[0], -1])
        weights = _variable_with_weight_decay(
            "weights", shape=[6 * 6 * 16, 32], stddev=0.04, wd=0.004
        )
        biases = tf.get_variable("biases", [32], initializer=tf.constant_initializer(0.1))
        local3 = tf.nn.relu(tf.matmul(reshape, weights) + biases, name=scope.name)
    with tf.variable_scope("softmax_linear") as scope:
        weights = _variable_with_weight_decay(
            "weights", [32, NUM_CLASSES], stddev=1 / 32.0, wd=None
        )
        biases = tf.get_variable("biases", [NUM_CLASSES], initializer=tf.constant_initializer(0.0))
        softmax_linear = tf.add(tf.matmul(local3, weights), biases, name=scope.name)
    return softmax_linear


def loss(logits, labels):
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example"
    )
    cross_entropy_mean = tf.reduce_mean(cross_entropy, name="cross_entropy")
    tf.add_to_collection("losses", cross_entropy_mean)
    return tf.add_n(tf.get_collection("losses"), name="total_loss")


def train(total_loss, global_step):
    lr = tf.train.exponential_decay(0.1, global_step, 100, 0.1, staircase=True)
    opt = tf.train.GradientDescentOptimizer(lr)
    apply_gradient_op = opt.apply_gradients(
        opt.compute_gradients(total_loss), global_step=global_step
    )
    variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY, global_step)
    with tf.control_dependencies([apply_gradient_op]):
        variables_averages_op = variable_averages.apply(tf.trainable_variables())
    return variables_averages_op


def generated_images(rng, n):
    images = rng.uniform(0, 0.3, (n, 12, 12, 3)).astype(np.float32)
    labels = rng.randint(0, 2, n).astype(np.int32)
    for image, label in zip(images, labels):
        corner = slice(0, 6) if label == 0 else slice(6, 12)
        image[corner, corner] += 0.7
    return images, labels


rng = np.random.RandomState(0)
images_ph = tf.placeholder(tf.float32, [None, 12, 12, 3])
labels_ph = tf.placeholder(tf.int32, [None])
global_step = tf.train.get_or_create_global_step()
logits = inference(images_ph)
total_loss = loss(logits, labels_ph)
train_op = train(total_loss, global_step)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(40):
        images, labels = generated_images(rng, 64)
        _, loss_value = sess.run([train_op, total_loss], {images_ph: images, labels_ph: labels})
        if step % 10 == 0 or step == 39:
            print(f"step {step}, loss = {loss_value:.2f}")
