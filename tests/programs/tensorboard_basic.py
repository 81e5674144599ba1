# Adapted from Aymeric Damien's TensorFlow-Examples, tensorboard_basic.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/4_Utils/tensorboard_basic.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 6 epochs; logs go to a temporary directory.
"""Logistic regression that writes its graph and loss/accuracy summaries for TensorBoard."""

import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits.target]
learning_rate, training_epochs, batch_size = 0.5, 6, 100
logs_path = tempfile.mkdtemp()

x = tf.placeholder(tf.float32, [None, 64], name="InputData")
y = tf.placeholder(tf.float32, [None, 10], name="LabelData")
W = tf.Variable(tf.zeros([64, 10]), name="Weights")
b = tf.Variable(tf.zeros([10]), name="Bias")
with tf.name_scope("Model"):
    pred = tf.nn.softmax(tf.matmul(x, W) + b)
with tf.name_scope("Loss"):
    cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
with tf.name_scope("SGD"):
    optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
with tf.name_scope("Accuracy"):
    acc = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    acc = tf.reduce_mean(tf.cast(acc, tf.float32))
init = tf.global_variables_initializer()
tf.summary.scalar("loss", cost)
tf.summary.scalar("accuracy", acc)
merged_summary_op = tf.summary.merge_all()

with tf.Session() as sess:
    sess.run(init)
    summary_writer = tf.summary.FileWriter(logs_path, graph=tf.get_default_graph())
    total_batch = len(images) // batch_size
    for epoch in range(training_epochs):
        avg_cost = 0.0
        for i in range(total_batch):
            feed = {x: images[i * batch_size : (i + 1) * batch_size], y: labels[i * batch_size : (i + 1) * batch_size]}  # fmt: skip
            _, c, summary = sess.run([optimizer, cost, merged_summary_op], feed_dict=feed)
            summary_writer.add_summary(summary, epoch * total_batch + i)
            avg_cost += c / total_batch
        print(f"Epoch: {epoch + 1:04d} loss = {avg_cost:.9f}")
    summary_writer.close()
    print("Accuracy:", acc.eval({x: images, y: labels}))
