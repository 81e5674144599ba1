# Adapted from Aymeric Damien's TensorFlow-Examples, neural_network.py (the tf.estimator and
# tf.layers version):
# https://github.com/aymericdamien/TensorFlow-Examples/blob/master/examples/3_NeuralNetworks/neural_network.py
# Licence: MIT, Copyright (c) 2016 Aymeric Damien.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST replaced by scikit-learn's bundled 8x8
# digits; 150 steps; the loss is evaluated before and after training.
"""A 2-hidden-layer network as a tf.estimator.Estimator, with tf.layers."""

import tempfile

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

digits = load_digits()
images = (digits.data / 16.0).astype(np.float32)
labels = digits.target.astype(np.int32)

learning_rate = 0.1
num_steps = 150
batch_size = 128
n_hidden_1, n_hidden_2, num_classes = 64, 64, 10


def neural_net(x_dict):
    x = x_dict["images"]
    layer_1 = tf.layers.dense(x, n_hidden_1)
    layer_2 = tf.layers.dense(layer_1, n_hidden_2)
    return tf.layers.dense(layer_2, num_classes)


def model_fn(features, labels, mode):
    logits = neural_net(features)
    pred_classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=pred_classes)
    loss_op = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=logits, labels=tf.cast(labels, dtype=tf.int32)
        )
    )
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op, global_step=tf.train.get_global_step())
    acc_op = tf.metrics.accuracy(labels=labels, predictions=pred_classes)
    return tf.estimator.EstimatorSpec(
        mode=mode,
        predictions=pred_classes,
        loss=loss_op,
        train_op=train_op,
        eval_metric_ops={"accuracy": acc_op},
    )


model = tf.estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp())
input_fn = tf.estimator.inputs.numpy_input_fn(
    x={"images": images}, y=labels, batch_size=batch_size, num_epochs=None, shuffle=True
)
eval_fn = tf.estimator.inputs.numpy_input_fn(
    x={"images": images}, y=labels, batch_size=batch_size, shuffle=False
)
model.train(input_fn, steps=1)
print("before: loss =", model.evaluate(eval_fn)["loss"])
model.train(input_fn, steps=num_steps)
e = model.evaluate(eval_fn)
print("after: loss =", e["loss"], "Testing Accuracy:", e["accuracy"])
