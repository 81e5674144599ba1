# Adapted from TensorFlow's tutorial programs tensorflow/examples/tutorials/mnist/mnist.py and
# fully_connected_feed.py (TensorFlow r1.15):
# https://github.com/tensorflow/tensorflow/tree/r1.15/tensorflow/examples/tutorials/mnist
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 200 steps; logs and checkpoints go to a temporary directory.
"""Trains and evaluates a two-hidden-layer digits network using a feed dictionary."""

import argparse
import math
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

NUM_CLASSES = 10
IMAGE_PIXELS = 64
FLAGS = None


def inference(images, hidden1_units, hidden2_units):
    with tf.name_scope("hidden1"):
        weights = tf.Variable(
            tf.truncated_normal(
                [IMAGE_PIXELS, hidden1_units], stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))
            ),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([hidden1_units]), name="biases")
        hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
    with tf.name_scope("hidden2"):
        weights = tf.Variable(
            tf.truncated_normal(
                [hidden1_units, hidden2_units], stddev=1.0 / math.sqrt(float(hidden1_units))
            ),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([hidden2_units]), name="biases")
        hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
    with tf.name_scope("softmax_linear"):
        weights = tf.Variable(
            tf.truncated_normal(
                [hidden2_units, NUM_CLASSES], stddev=1.0 / math.sqrt(float(hidden2_units))
            ),
            name="weights",
        )
        biases = tf.Variable(tf.zeros([NUM_CLASSES]), name="biases")
        logits = tf.matmul(hidden2, weights) + biases
    return logits


def loss(logits, labels):
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss, learning_rate):
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return optimizer.minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))


def run_training():
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    with tf.Graph().as_default():
        images_placeholder = tf.placeholder(tf.float32, shape=(FLAGS.batch_size, IMAGE_PIXELS))
        labels_placeholder = tf.placeholder(tf.int32, shape=(FLAGS.batch_size))
        logits = inference(images_placeholder, FLAGS.hidden1, FLAGS.hidden2)
        loss_op = loss(logits, labels_placeholder)
        train_op = training(loss_op, FLAGS.learning_rate)
        eval_correct = evaluation(logits, labels_placeholder)
        summary = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
        sess = tf.Session()
        summary_writer = tf.summary.FileWriter(FLAGS.log_dir, sess.graph)
        sess.run(init)
        rng = np.random.RandomState(1)
        for step in range(FLAGS.max_steps):
            batch = rng.choice(len(images), FLAGS.batch_size)
            feed_dict = {images_placeholder: images[batch], labels_placeholder: labels[batch]}
            _, loss_value = sess.run([train_op, loss_op], feed_dict=feed_dict)
            if step % 20 == 0:
                print(f"Step {step}: loss = {loss_value:.2f}")
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
        checkpoint_file = os.path.join(FLAGS.log_dir, "model.ckpt")
        saver.save(sess, checkpoint_file, global_step=FLAGS.max_steps)
        true_count = 0
        for start in range(0, len(images) - FLAGS.batch_size + 1, FLAGS.batch_size):
            feed_dict = {
                images_placeholder: images[start : start + FLAGS.batch_size],
                labels_placeholder: labels[start : start + FLAGS.batch_size],
            }
            true_count += sess.run(eval_correct, feed_dict=feed_dict)
        print("Num correct:", true_count)


def main(_):
    if tf.gfile.Exists(FLAGS.log_dir):
        tf.gfile.DeleteRecursively(FLAGS.log_dir)
    tf.gfile.MakeDirs(FLAGS.log_dir)
    run_training()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--max_steps", type=int, default=200)
    parser.add_argument("--hidden1", type=int, default=64)
    parser.add_argument("--hidden2", type=int, default=32)
    parser.add_argument("--batch_size", type=int, default=100)
    parser.add_argument("--log_dir", type=str, default=os.path.join(tempfile.mkdtemp(), "logs"))
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
