# Adapted from Aymeric Damien's TensorFlow-Examples, save_restore_model.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/4_Utils/save_restore_model.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 3 + 4 epochs; the model path is temporary.
"""Train a perceptron, save it with tf.train.Saver, restore it in a new session, train on."""

import os
import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits.target]
learning_rate, batch_size = 0.001, 100
model_path = os.path.join(tempfile.mkdtemp(), "model.ckpt")

x = tf.placeholder("float", [None, 64])
y = tf.placeholder("float", [None, 10])
weights = {
    "h1": tf.Variable(tf.random_normal([64, 64])),
    "h2": tf.Variable(tf.random_normal([64, 64])),
    "out": tf.Variable(tf.random_normal([64, 10])),
}
biases = {
    "b1": tf.Variable(tf.random_normal([64])),
    "b2": tf.Variable(tf.random_normal([64])),
    "out": tf.Variable(tf.random_normal([10])),
}
layer_1 = tf.nn.relu(tf.add(tf.matmul(x, weights["h1"]), biases["b1"]))
layer_2 = tf.nn.relu(tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"]))
pred = tf.matmul(layer_2, weights["out"]) + biases["out"]
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(cost)
init = tf.global_variables_initializer()
saver = tf.train.Saver()


def train(sess, epochs):
    for epoch in range(epochs):
        avg_cost, total_batch = 0.0, len(images) // batch_size
        for i in range(total_batch):
            feed = {x: images[i * batch_size : (i + 1) * batch_size],
                    y: labels[i * batch_size : (i + 1) * batch_size]}  # fmt: skip
            _, c = sess.run([optimizer, cost], feed_dict=feed)
            avg_cost += c / total_batch
        print(f"Epoch: {epoch + 1:04d} loss = {avg_cost:.9f}")


print("Starting 1st session...")
with tf.Session() as sess:
    sess.run(init)
    train(sess, 3)
    save_path = saver.save(sess, model_path)
    print(f"Model saved in file: {save_path}")

print("Starting 2nd session...")
with tf.Session() as sess:
    sess.run(init)
    saver.restore(sess, model_path)
    print(f"Model restored from file: {save_path}")
    train(sess, 4)
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({x: images, y: labels}))
