# Adapted from TensorFlow's tutorial program mnist_with_summaries.py (TensorFlow r1.15):
# https://github.com/tensorflow/tensorflow/blob/r1.15/tensorflow/examples/tutorials/mnist/mnist_with_summaries.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 100 steps; summaries go to a temporary directory; the loss is printed.
"""A simple digits classifier which displays summaries in TensorBoard."""

import argparse
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

FLAGS = None


def train():
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    sess = tf.InteractiveSession()
    with tf.name_scope("input"):
        x = tf.placeholder(tf.float32, [None, 64], name="x-input")
        y_ = tf.placeholder(tf.int64, [None], name="y-input")
    with tf.name_scope("input_reshape"):
        image_shaped_input = tf.reshape(x, [-1, 8, 8, 1])
        tf.summary.image("input", image_shaped_input, 10)

    def weight_variable(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))

    def bias_variable(shape):
        return tf.Variable(tf.constant(0.1, shape=shape))

    def variable_summaries(var):
        with tf.name_scope("summaries"):
            mean = tf.reduce_mean(var)
            tf.summary.scalar("mean", mean)
            with tf.name_scope("stddev"):
                stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
            tf.summary.scalar("stddev", stddev)
            tf.summary.scalar("max", tf.reduce_max(var))
            tf.summary.scalar("min", tf.reduce_min(var))
            tf.summary.histogram("histogram", var)

    def nn_layer(input_tensor, input_dim, output_dim, layer_name, act=tf.nn.relu):
        with tf.name_scope(layer_name):
            with tf.name_scope("weights"):
                weights = weight_variable([input_dim, output_dim])
                variable_summaries(weights)
            with tf.name_scope("biases"):
                biases = bias_variable([output_dim])
                variable_summaries(biases)
            with tf.name_scope("Wx_plus_b"):
                preactivate = tf.matmul(input_tensor, weights) + biases
                tf.summary.histogram("pre_activations", preactivate)
            activations = act(preactivate, name="activation")
            tf.summary.histogram("activations", activations)
            return activations

    hidden1 = nn_layer(x, 64, 100, "layer1")
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32)
        tf.summary.scalar("dropout_keep_probability", keep_prob)
        dropped = tf.nn.dropout(hidden1, keep_prob)
    y = nn_layer(dropped, 100, 10, "layer2", act=tf.identity)
    with tf.name_scope("cross_entropy"):
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
    tf.summary.scalar("cross_entropy", cross_entropy)
    with tf.name_scope("train"):
        train_step = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        with tf.name_scope("correct_prediction"):
            correct_prediction = tf.equal(tf.argmax(y, 1), y_)
        with tf.name_scope("accuracy"):
            accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    tf.summary.scalar("accuracy", accuracy)
    merged = tf.summary.merge_all()
    train_writer = tf.summary.FileWriter(FLAGS.log_dir + "/train", sess.graph)
    test_writer = tf.summary.FileWriter(FLAGS.log_dir + "/test")
    tf.global_variables_initializer().run()
    rng = np.random.RandomState(0)

    def feed_dict(train):
        if train:
            batch = rng.choice(len(images), 100)
            return {x: images[batch], y_: labels[batch], keep_prob: FLAGS.dropout}
        return {x: images[-300:], y_: labels[-300:], keep_prob: 1.0}

    for i in range(FLAGS.max_steps):
        if i % 10 == 0:
            summary, acc, loss = sess.run(
                [merged, accuracy, cross_entropy], feed_dict=feed_dict(False)
            )
            test_writer.add_summary(summary, i)
            print(f"Accuracy at step {i}: {acc} loss = {loss}")
        else:
            summary, _ = sess.run([merged, train_step], feed_dict=feed_dict(True))
            train_writer.add_summary(summary, i)
    train_writer.close()
    test_writer.close()


def main(_):
    if tf.gfile.Exists(FLAGS.log_dir):
        tf.gfile.DeleteRecursively(FLAGS.log_dir)
    tf.gfile.MakeDirs(FLAGS.log_dir)
    train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_steps", type=int, default=100)
    parser.add_argument("--learning_rate", type=float, default=0.001)
    parser.add_argument("--dropout", type=float, default=0.9)
    parser.add_argument("--log_dir", type=str, default=os.path.join(tempfile.mkdtemp(), "logs"))
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
