"""``tf.layers``: TensorFlow 1.x's layers, as classes and as functions, built from nbflow ops.

Each layer is a ``Layer`` (``base.py``) that creates its variables with ``get_variable`` in its
own variable scope, so the names, sharing (``reuse=``) and collections are TensorFlow's:
``dense/kernel``, ``conv2d/bias``, ``batch_normalization/moving_mean``; regularizers add to
REGULARIZATION_LOSSES and batch normalization's moving averages to UPDATE_OPS. The modules
follow TensorFlow's: ``core`` (Dense, Dropout, Flatten), ``convolutional`` (Conv2D), ``pooling``
and ``normalization`` (BatchNormalization).

    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 10)
"""

from nbflow.layers.base import Layer
from nbflow.layers.convolutional import Conv2D, conv2d
from nbflow.layers.core import Dense, Dropout, Flatten, dense, dropout, flatten
from nbflow.layers.normalization import BatchNormalization, batch_normalization
from nbflow.layers.pooling import (
    AveragePool2D,
    AveragePooling2D,
    MaxPool2D,
    MaxPooling2D,
    average_pooling2d,
    max_pooling2d,
)

Convolution2D = Conv2D

__all__ = [
    "AveragePool2D",
    "AveragePooling2D",
    "BatchNormalization",
    "Conv2D",
    "Convolution2D",
    "Dense",
    "Dropout",
    "Flatten",
    "Layer",
    "MaxPool2D",
    "MaxPooling2D",
    "average_pooling2d",
    "batch_normalization",
    "conv2d",
    "dense",
    "dropout",
    "flatten",
    "max_pooling2d",
]
