# Written after the tf.data section of TensorFlow 1.x's programmer's guide, "Importing Data"
# (TensorFlow r1.15): https://github.com/tensorflow/docs/blob/master/site/en/r1/guide/datasets.md
# Licence: Apache License 2.0 (code samples), Copyright The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; generated regression data; 3 epochs.
"""Linear regression fed by tf.data: from_tensor_slices, shuffle, batch and an initializable
iterator re-initialized every epoch, with placeholders for the data."""

import numpy as np

import nbflow as tf

rng = np.random.RandomState(0)
features_np = rng.normal(size=(1000, 3)).astype(np.float32)
labels_np = (features_np @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3).astype(np.float32)

features_placeholder = tf.placeholder(features_np.dtype, features_np.shape)
labels_placeholder = tf.placeholder(labels_np.dtype, labels_np.shape)
dataset = tf.data.Dataset.from_tensor_slices((features_placeholder, labels_placeholder))
dataset = dataset.shuffle(buffer_size=1000).batch(50)
iterator = dataset.make_initializable_iterator()
next_features, next_labels = iterator.get_next()

w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
loss = tf.losses.mean_squared_error(next_labels, tf.matmul(next_features, w) + b)
train_op = tf.train.MomentumOptimizer(0.05, momentum=0.9).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(3):
        sess.run(
            iterator.initializer, {features_placeholder: features_np, labels_placeholder: labels_np}
        )
        step = 0
        while True:
            try:
                _, loss_value = sess.run([train_op, loss])
            except tf.errors.OutOfRangeError:
                break
            if step % 10 == 0:
                print(f"epoch {epoch} step {step}: loss = {loss_value:.5f}")
            step += 1
