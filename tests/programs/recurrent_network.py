# Adapted from Aymeric Damien's TensorFlow-Examples, recurrent_network.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/recurrent_network.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; tf.contrib.rnn replaced by its core names
# (tf.nn.rnn_cell.BasicLSTMCell, tf.nn.static_rnn); MNIST replaced by scikit-learn's bundled 8x8
# digits read as 8 time steps of 8 pixels; 60 steps.
"""An LSTM classifying digits row by row."""

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32).reshape(-1, 8, 8)
labels = np.eye(10, dtype=np.float32)[digits.target]

learning_rate = 0.5
training_steps = 60
batch_size = 64
display_step = 10
num_input, timesteps, num_hidden, num_classes = 8, 8, 32, 10

X = tf.placeholder("float", [None, timesteps, num_input])
Y = tf.placeholder("float", [None, num_classes])
weights = {"out": tf.Variable(tf.random_normal([num_hidden, num_classes]))}
biases = {"out": tf.Variable(tf.random_normal([num_classes]))}


def RNN(x, weights, biases):
    x = tf.unstack(x, timesteps, 1)
    lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(num_hidden, forget_bias=1.0)
    outputs, states = tf.nn.static_rnn(lstm_cell, x, dtype=tf.float32)
    return tf.matmul(outputs[-1], weights["out"]) + biases["out"]


logits = RNN(X, weights, biases)
prediction = tf.nn.softmax(logits)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
init = tf.global_variables_initializer()

rng = np.random.RandomState(0)
with tf.Session() as sess:
    sess.run(init)
    for step in range(1, training_steps + 1):
        batch = rng.choice(len(images), batch_size)
        sess.run(train_op, feed_dict={X: images[batch], Y: labels[batch]})
        if step % display_step == 0 or step == 1:
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: images[:300], Y: labels[:300]})
            print(f"Step {step}, Minibatch loss = {loss:.4f}, Training Accuracy= {acc:.3f}")
    print("Optimization Finished!")
