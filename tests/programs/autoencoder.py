# Adapted from Aymeric Damien's TensorFlow-Examples, autoencoder.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/autoencoder.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; smaller layers; 200 steps; the image plotting removed.
"""A 2-layer auto-encoder compressing digits to a low-dimensional code (RMSProp)."""

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

images = (load_digits().data / 16.0).astype(np.float32)

learning_rate = 0.01
num_steps = 200
batch_size = 128
display_step = 40
num_hidden_1, num_hidden_2, num_input = 32, 8, 64

X = tf.placeholder("float", [None, num_input])
weights = {
    "encoder_h1": tf.Variable(tf.random_normal([num_input, num_hidden_1])),
    "encoder_h2": tf.Variable(tf.random_normal([num_hidden_1, num_hidden_2])),
    "decoder_h1": tf.Variable(tf.random_normal([num_hidden_2, num_hidden_1])),
    "decoder_h2": tf.Variable(tf.random_normal([num_hidden_1, num_input])),
}
biases = {
    "encoder_b1": tf.Variable(tf.random_normal([num_hidden_1])),
    "encoder_b2": tf.Variable(tf.random_normal([num_hidden_2])),
    "decoder_b1": tf.Variable(tf.random_normal([num_hidden_1])),
    "decoder_b2": tf.Variable(tf.random_normal([num_input])),
}


def encoder(x):
    layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["encoder_h1"]), biases["encoder_b1"]))
    return tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["encoder_h2"]), biases["encoder_b2"]))


def decoder(x):
    layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["decoder_h1"]), biases["decoder_b1"]))
    return tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["decoder_h2"]), biases["decoder_b2"]))


encoder_op = encoder(X)
decoder_op = decoder(encoder_op)
y_pred, y_true = decoder_op, X
loss = tf.reduce_mean(tf.pow(y_true - y_pred, 2))
optimizer = tf.train.RMSPropOptimizer(learning_rate).minimize(loss)
init = tf.global_variables_initializer()

rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(init)
    for i in range(1, num_steps + 1):
        batch_x = images[rng.choice(len(images), batch_size)]
        _, l = sess.run([optimizer, loss], feed_dict={X: batch_x})
        if i % display_step == 0 or i == 1:
            print(f"Step {i}: Minibatch loss = {l:f}")
