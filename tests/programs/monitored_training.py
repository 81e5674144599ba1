# Written after the training-loop examples in TensorFlow 1.x's API documentation for
# tf.train.MonitoredTrainingSession and its hooks (TensorFlow r1.15):
# https://github.com/tensorflow/tensorflow/blob/r1.15/tensorflow/python/training/monitored_session.py
# Licence: Apache License 2.0, Copyright 2016 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; generated data; 200 steps; temporary
# checkpoint directory.
"""A softmax classifier trained in MonitoredTrainingSession with StopAtStepHook,
LoggingTensorHook and checkpoints, using the global step and a decaying learning rate."""

import tempfile

import numpy as np

import nbflow as tf

tf.logging.set_verbosity(tf.logging.INFO)
rng = np.random.RandomState(0)
centers = rng.normal(scale=3.0, size=(4, 2)).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 2])
y = tf.placeholder(tf.int64, [None])
logits = tf.layers.dense(tf.layers.dense(x, 16, activation=tf.nn.tanh), 4)
loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
global_step = tf.train.get_or_create_global_step()
learning_rate = tf.train.exponential_decay(0.5, global_step, 100, 0.5)
train_op = tf.train.AdagradOptimizer(learning_rate).minimize(loss, global_step=global_step)

hooks = [
    tf.train.StopAtStepHook(last_step=200),
    tf.train.LoggingTensorHook({"loss": loss, "step": global_step}, every_n_iter=50),
]
with tf.train.MonitoredTrainingSession(checkpoint_dir=tempfile.mkdtemp(), hooks=hooks) as sess:
    while not sess.should_stop():
        labels = rng.randint(0, 4, 64)
        points = centers[labels] + rng.normal(size=(64, 2)).astype(np.float32)
        _, step, loss_value = sess.run([train_op, global_step, loss], {x: points, y: labels})
        if step % 40 == 1:
            print(f"step {step}: loss = {loss_value:.4f}")
