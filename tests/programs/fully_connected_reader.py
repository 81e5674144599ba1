# Adapted from TensorFlow's "Reading data" how-to programs convert_to_records.py and
# fully_connected_reader.py (TensorFlow r1.12):
# https://github.com/tensorflow/tensorflow/tree/r1.12/tensorflow/examples/how_tos/reading_data
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits written to a temporary TFRecord file; the input queue replaced by the tf.data pipeline
# the r1.12 version uses; 100 steps; one hidden layer.
"""Train a digits classifier from TFRecords of tf.train.Example protos."""

import os
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf


def _int64_feature(value):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes_feature(value):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def convert_to(images, labels, filename):
    with tf.python_io.TFRecordWriter(filename) as writer:
        for image, label in zip(images, labels):
            example = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "label": _int64_feature(int(label)),
                        "image_raw": _bytes_feature(image.tobytes()),
                    }
                )
            )
            writer.write(example.SerializeToString())


def decode(serialized_example):
    features = tf.parse_single_example(
        serialized_example,
        features={
            "image_raw": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.decode_raw(features["image_raw"], tf.uint8)
    image.set_shape([64])
    image = tf.cast(image, tf.float32) * (1.0 / 16.0)
    label = tf.cast(features["label"], tf.int32)
    return image, label


def run_training(filename):
    with tf.Graph().as_default():
        dataset = tf.data.TFRecordDataset(filename).map(decode).shuffle(500).repeat().batch(100)
        image_batch, label_batch = dataset.make_one_shot_iterator().get_next()
        hidden = tf.layers.dense(image_batch, 64, activation=tf.nn.relu)
        logits = tf.layers.dense(hidden, 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=label_batch, logits=logits)
        train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(100):
                _, loss_value = sess.run([train_op, loss])
                if step % 20 == 0:
                    print(f"Step {step}: loss = {loss_value:.2f}")


digits = load_digits()
filename = os.path.join(tempfile.mkdtemp(), "train.tfrecords")
convert_to(digits.data.astype(np.uint8), digits.target, filename)
run_training(filename)
