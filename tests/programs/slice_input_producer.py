# Written after the queue-based input pipelines of TensorFlow 1.x's "Reading data" guide
# (TensorFlow r1.15 programmer's guide, "Threading and Queues"):
# https://github.com/tensorflow/docs/blob/master/site/en/r1/guide/datasets.md and
# https://github.com/tensorflow/tensorflow/blob/r1.15/tensorflow/python/training/input.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; in-memory generated data; 80 steps.
"""Logistic regression fed by tf.train.slice_input_producer + tf.train.batch queue runners."""

import numpy as np

import nbflow as tf

rng = np.random.RandomState(0)
features = rng.normal(size=(500, 4)).astype(np.float32)
true_w = np.array([[1.5], [-2.0], [0.5], [1.0]], np.float32)
targets = (features @ true_w > 0).astype(np.float32)

feature, target = tf.train.slice_input_producer([features, targets], shuffle=True, seed=1)
feature_batch, target_batch = tf.train.batch([feature, target], batch_size=32)
w = tf.Variable(tf.zeros([4, 1]))
b = tf.Variable(0.0)
logits = tf.matmul(feature_batch, w) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=target_batch, logits=logits))
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    for step in range(80):
        _, loss_value = sess.run([train_op, loss])
        if step % 20 == 0 or step == 79:
            print(f"step {step}: loss = {loss_value:.4f}")
    coord.request_stop()
    coord.join(threads)
