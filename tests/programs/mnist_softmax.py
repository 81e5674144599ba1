# Adapted from TensorFlow's "MNIST For ML Beginners" tutorial program, mnist_softmax.py
# (TensorFlow r1.0): https://github.com/tensorflow/tensorflow/blob/r1.0/tensorflow/examples/tutorials/mnist/mnist_softmax.py
# Licence: Apache License 2.0, Copyright 2015 The TensorFlow Authors.
# Changes for nbflow's tests: `import nbflow as tf`; MNIST download replaced by scikit-learn's
# bundled 8x8 digits; 100 steps; the loss is printed.
"""A very simple digits classifier: softmax regression trained with flags and tf.app.run."""

import sys

import numpy as np
from sklearn.datasets import load_digits

import nbflow as tf

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 100, "training steps")
flags.DEFINE_float("learning_rate", 0.5, "gradient descent step size")


def main(_):
    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]

    x = tf.placeholder(tf.float32, [None, 64])
    W = tf.Variable(tf.zeros([64, 10]))
    b = tf.Variable(tf.zeros([10]))
    y = tf.matmul(x, W) + b
    y_ = tf.placeholder(tf.float32, [None, 10])
    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
    train_step = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(cross_entropy)

    sess = tf.InteractiveSession()
    tf.global_variables_initializer().run()
    rng = np.random.RandomState(0)
    for step in range(FLAGS.steps):
        batch = rng.choice(len(images), 100)
        _, loss = sess.run([train_step, cross_entropy], {x: images[batch], y_: labels[batch]})
        if step % 10 == 0:
            tf.logging.info("step %d", step)
            print(f"step {step}: loss = {loss:.4f}")
    correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    print("accuracy", sess.run(accuracy, feed_dict={x: images, y_: labels}))


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main=main, argv=[sys.argv[0]])
