# Adapted from Aymeric Damien's TensorFlow-Examples, multilayer_perceptron.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/multilayer_perceptron.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 8 epochs.
"""A 2-hidden-layer fully connected network (multilayer perceptron) on digits."""

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = np.eye(10, dtype=np.float32)[digits.target]

learning_rate = 0.001
training_epochs = 8
batch_size = 100
n_hidden_1, n_hidden_2, n_input, n_classes = 64, 64, 64, 10

X = tf.placeholder("float", [None, n_input])
Y = tf.placeholder("float", [None, n_classes])
weights = {
    "h1": tf.Variable(tf.random_normal([n_input, n_hidden_1])),
    "h2": tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2])),
    "out": tf.Variable(tf.random_normal([n_hidden_2, n_classes])),
}
biases = {
    "b1": tf.Variable(tf.random_normal([n_hidden_1])),
    "b2": tf.Variable(tf.random_normal([n_hidden_2])),
    "out": tf.Variable(tf.random_normal([n_classes])),
}


def multilayer_perceptron(x):
    layer_1 = tf.add(tf.matmul(x, weights["h1"]), biases["b1"])
    layer_2 = tf.add(tf.matmul(layer_1, weights["h2"]), biases["b2"])
    return tf.matmul(layer_2, weights["out"]) + biases["out"]


logits = multilayer_perceptron(X)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(training_epochs):
        avg_cost = 0.0
        total_batch = int(len(images) / batch_size)
        for i in range(total_batch):
            batch_x = images[i * batch_size : (i + 1) * batch_size]
            batch_y = labels[i * batch_size : (i + 1) * batch_size]
            _, c = sess.run([train_op, loss_op], feed_dict={X: batch_x, Y: batch_y})
            avg_cost += c / total_batch
        print(f"Epoch: {epoch + 1:04d} loss = {avg_cost:.9f}")
    pred = tf.nn.softmax(logits)
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({X: images, Y: labels}))
