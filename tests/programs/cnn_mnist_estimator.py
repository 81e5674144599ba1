# Adapted from TensorFlow's tf.layers / Estimator tutorial program cnn_mnist.py (TensorFlow r1.15):
# https://github.com/tensorflow/tensorflow/blob/r1.15/tensorflow/examples/tutorials/layers/cnn_mnist.py
# Licence: Apache License 2.0, Copyright 2016 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 80 steps; the model directory is temporary; the loss is evaluated before and after.
"""Convolutional Neural Network Estimator for digits, built with tf.layers."""

import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

tf.logging.set_verbosity(tf.logging.INFO)


def cnn_model_fn(features, labels, mode):
    input_layer = tf.reshape(features["x"], [-1, 8, 8, 1])
    conv1 = tf.layers.conv2d(
        inputs=input_layer, filters=16, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
    )
    pool1 = tf.layers.max_pooling2d(inputs=conv1, pool_size=[2, 2], strides=2)
    conv2 = tf.layers.conv2d(
        inputs=pool1, filters=32, kernel_size=[3, 3], padding="same", activation=tf.nn.relu
    )
    pool2 = tf.layers.max_pooling2d(inputs=conv2, pool_size=[2, 2], strides=2)
    pool2_flat = tf.reshape(pool2, [-1, 2 * 2 * 32])
    dense = tf.layers.dense(inputs=pool2_flat, units=128, activation=tf.nn.relu)
    dropout = tf.layers.dropout(
        inputs=dense, rate=0.4, training=mode == tf.estimator.ModeKeys.TRAIN
    )
    logits = tf.layers.dense(inputs=dropout, units=10)
    predictions = {
        "classes": tf.argmax(input=logits, axis=1),
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.TRAIN:
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.05)
        train_op = optimizer.minimize(loss=loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)
    eval_metric_ops = {
        "accuracy": tf.metrics.accuracy(labels=labels, predictions=predictions["classes"])
    }
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=eval_metric_ops)


def main(unused_argv):
    digits = load_digits()
    train_data = (digits.data[:1500] / 16.0).astype(np.float32)
    train_labels = digits.target[:1500].astype(np.int32)
    eval_data = (digits.data[1500:] / 16.0).astype(np.float32)
    eval_labels = digits.target[1500:].astype(np.int32)
    mnist_classifier = tf.estimator.Estimator(model_fn=cnn_model_fn, model_dir=tempfile.mkdtemp())
    eval_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False
    )
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=50, num_epochs=None, shuffle=True
    )
    mnist_classifier.train(input_fn=train_input_fn, steps=1)
    print("before: loss =", mnist_classifier.evaluate(input_fn=eval_input_fn)["loss"])
    mnist_classifier.train(input_fn=train_input_fn, steps=80)
    eval_results = mnist_classifier.evaluate(input_fn=eval_input_fn)
    print("after: loss =", eval_results["loss"], "accuracy", eval_results["accuracy"])


if __name__ == "__main__":
    tf.app.run()
