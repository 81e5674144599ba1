# Adapted from Aymeric Damien's TensorFlow-Examples, dynamic_rnn.py:
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/dynamic_rnn.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; tf.contrib.rnn replaced by its core names
# (tf.nn.rnn_cell.BasicLSTMCell, tf.nn.dynamic_rnn); smaller data set; 120 steps.
"""An LSTM over sequences of variable length: linear sequences vs random ones."""

import random


import nbflow as tf


class ToySequenceData:
    """Sequences of 1-D values: linear (class 0) or random (class 1), padded to max_seq_len."""

    def __init__(self, n_samples=500, max_seq_len=12, min_seq_len=3, max_value=1000):
        rnd = random.Random(0)
        self.data, self.labels, self.seqlen = [], [], []
        for _ in range(n_samples):
            length = rnd.randint(min_seq_len, max_seq_len)
            self.seqlen.append(length)
            if rnd.random() < 0.5:
                start = rnd.randint(0, max_value - length)
                s = [[float(i) / max_value] for i in range(start, start + length)]
                self.labels.append([1.0, 0.0])
            else:
                s = [[float(rnd.randint(0, max_value)) / max_value] for _ in range(length)]
                self.labels.append([0.0, 1.0])
            s += [[0.0] for _ in range(max_seq_len - length)]
            self.data.append(s)
        self.batch_id = 0

    def next(self, batch_size):
        if self.batch_id == len(self.data):
            self.batch_id = 0
        end = min(self.batch_id + batch_size, len(self.data))
        batch = (self.data[self.batch_id : end], self.labels[self.batch_id : end], self.seqlen[self.batch_id : end])  # fmt: skip
        self.batch_id = end
        return batch


learning_rate = 0.05
training_steps = 120
batch_size = 64
display_step = 20
seq_max_len, n_hidden, n_classes = 12, 32, 2

trainset = ToySequenceData(n_samples=500, max_seq_len=seq_max_len)
x = tf.placeholder("float", [None, seq_max_len, 1])
y = tf.placeholder("float", [None, n_classes])
seqlen = tf.placeholder(tf.int32, [None])
weights = {"out": tf.Variable(tf.random_normal([n_hidden, n_classes]))}
biases = {"out": tf.Variable(tf.random_normal([n_classes]))}


def dynamicRNN(x, seqlen, weights, biases):
    lstm_cell = tf.nn.rnn_cell.BasicLSTMCell(n_hidden)
    outputs, states = tf.nn.dynamic_rnn(lstm_cell, x, dtype=tf.float32, sequence_length=seqlen)
    batch_size = tf.shape(outputs)[0]
    index = tf.range(0, batch_size) * seq_max_len + (seqlen - 1)
    outputs = tf.gather(tf.reshape(outputs, [-1, n_hidden]), index)
    return tf.matmul(outputs, weights["out"]) + biases["out"]


pred = dynamicRNN(x, seqlen, weights, biases)
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(cost)
correct_pred = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    all_x, all_y, all_len = trainset.data, trainset.labels, trainset.seqlen
    for step in range(1, training_steps + 1):
        batch_x, batch_y, batch_seqlen = trainset.next(batch_size)
        sess.run(optimizer, feed_dict={x: batch_x, y: batch_y, seqlen: batch_seqlen})
        if step % display_step == 0 or step == 1:
            acc, loss = sess.run([accuracy, cost], feed_dict={x: all_x, y: all_y, seqlen: all_len})
            print(f"Step {step}, Minibatch loss = {loss:.6f}, Training Accuracy= {acc:.5f}")
    print("Optimization Finished!")
