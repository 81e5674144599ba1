# ruff: noqa: UP031, UP032 - the original program's string formatting, kept
# Adapted from Aymeric Damien's TensorFlow-Examples, linear_regression.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/2_BasicModels/linear_regression.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; 60 epochs; the cost is printed.
"""A linear regression learning algorithm example using TensorFlow's graph API."""

import numpy

import nbflow as tf

rng = numpy.random

learning_rate = 0.01
training_epochs = 60
display_step = 10

train_X = numpy.asarray([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779, 6.182, 7.59, 2.167,
                         7.042, 10.791, 5.313, 7.997, 5.654, 9.27, 3.1])  # fmt: skip
train_Y = numpy.asarray([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366, 2.596, 2.53, 1.221,
                         2.827, 3.465, 1.65, 2.904, 2.42, 2.94, 1.3])  # fmt: skip
n_samples = train_X.shape[0]

X = tf.placeholder("float")
Y = tf.placeholder("float")
rng.seed(0)
W = tf.Variable(rng.randn(), name="weight")
b = tf.Variable(rng.randn(), name="bias")
pred = tf.add(tf.multiply(X, W), b)
cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * n_samples)
optimizer = tf.train.GradientDescentOptimizer(learning_rate).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(training_epochs):
        for x, y in zip(train_X, train_Y):
            sess.run(optimizer, feed_dict={X: x, Y: y})
        if epoch % display_step == 0 or epoch == training_epochs - 1:
            c = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
            print("Epoch:", "%04d" % (epoch + 1), "loss =", "{:.9f}".format(c),
                  "W=", sess.run(W), "b=", sess.run(b))  # fmt: skip
    print("Optimization Finished!")
