# ruff: noqa: UP031, UP032 - the original program's string formatting, kept
# Adapted from TensorFlow's "Deep MNIST for Experts" tutorial program, mnist_deep.py
# (TensorFlow r1.12): https://github.com/tensorflow/tensorflow/blob/r1.12/tensorflow/examples/tutorials/mnist/mnist_deep.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits (so the two 2x2 poolings leave 2x2 maps, not 7x7); fewer filters; 40 steps; the loss is printed.
"""A deep digits classifier using convolutional layers."""

import argparse
import sys

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

FLAGS = None


def deepnn(x):
    with tf.name_scope("reshape"):
        x_image = tf.reshape(x, [-1, 8, 8, 1])
    with tf.name_scope("conv1"):
        W_conv1 = weight_variable([5, 5, 1, 8])
        b_conv1 = bias_variable([8])
        h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
    with tf.name_scope("pool1"):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope("conv2"):
        W_conv2 = weight_variable([5, 5, 8, 16])
        b_conv2 = bias_variable([16])
        h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
    with tf.name_scope("pool2"):
        h_pool2 = max_pool_2x2(h_conv2)
    with tf.name_scope("fc1"):
        W_fc1 = weight_variable([2 * 2 * 16, 64])
        b_fc1 = bias_variable([64])
        h_pool2_flat = tf.reshape(h_pool2, [-1, 2 * 2 * 16])
        h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope("fc2"):
        W_fc2 = weight_variable([64, 10])
        b_fc2 = bias_variable([10])
        y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    return y_conv, keep_prob


def conv2d(x, W):
    return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")


def max_pool_2x2(x):
    return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")


def weight_variable(shape):
    initial = tf.truncated_normal(shape, stddev=0.1)
    return tf.Variable(initial)


def bias_variable(shape):
    initial = tf.constant(0.1, shape=shape)
    return tf.Variable(initial)


def main(_):
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    x = tf.placeholder(tf.float32, [None, 64])
    y_ = tf.placeholder(tf.float32, [None, 10])
    y_conv, keep_prob = deepnn(x)
    with tf.name_scope("loss"):
        cross_entropy = tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y_conv)
    cross_entropy = tf.reduce_mean(cross_entropy)
    with tf.name_scope("adam_optimizer"):
        train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        correct_prediction = tf.equal(tf.argmax(y_conv, 1), tf.argmax(y_, 1))
        correct_prediction = tf.cast(correct_prediction, tf.float32)
    accuracy = tf.reduce_mean(correct_prediction)
    rng = np.random.RandomState(0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(40):
            batch = rng.choice(len(images), 50)
            if i % 10 == 0:
                train_accuracy, loss = sess.run(
                    [accuracy, cross_entropy],
                    feed_dict={x: images[:200], y_: labels[:200], keep_prob: 1.0},
                )
                print(f"step {i}, training accuracy {train_accuracy:g}, loss = {loss:g}")
            train_step.run(feed_dict={x: images[batch], y_: labels[batch], keep_prob: 0.5})
        print(
            "test accuracy %g"
            % accuracy.eval(feed_dict={x: images[-300:], y_: labels[-300:], keep_prob: 1.0})
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=str, default="/tmp/tensorflow/mnist/input_data")
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
