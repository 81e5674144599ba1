# ruff: noqa: UP031, UP032 - the original program's string formatting, kept
# Adapted from Aymeric Damien's TensorFlow-Examples, logistic_regression.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/2_BasicModels/logistic_regression.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 10 epochs.
"""A logistic regression learning algorithm example using TensorFlow's graph API."""

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits.target]

learning_rate = 0.5
training_epochs = 10
batch_size = 100
display_step = 1

x = tf.placeholder(tf.float32, [None, 64])
y = tf.placeholder(tf.float32, [None, 10])
W = tf.Variable(tf.zeros([64, 10]))
b = tf.Variable(tf.zeros([10]))
pred = tf.nn.softmax(tf.matmul(x, W) + b)
cost = tf.reduce_mean(-tf.reduce_sum(y * tf.log(pred), reduction_indices=1))
optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(training_epochs):
        avg_cost = 0.0
        total_batch = int(len(images) / batch_size)
        for i in range(total_batch):
            batch_xs = images[i * batch_size : (i + 1) * batch_size]
            batch_ys = labels[i * batch_size : (i + 1) * batch_size]
            _, c = sess.run([optimizer, cost], feed_dict={x: batch_xs, y: batch_ys})
            avg_cost += c / total_batch
        if (epoch + 1) % display_step == 0:
            print("Epoch:", "%04d" % (epoch + 1), "loss =", "{:.9f}".format(avg_cost))
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    print("Accuracy:", accuracy.eval({x: images, y: labels}))
