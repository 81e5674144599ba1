"""``tf.data``'s module functions of TensorFlow 1.15 (``tf.compat.v1.data``): iterators and the
element structure of a dataset or iterator, as functions rather than methods.

    iterator = tf.data.make_one_shot_iterator(dataset)
    tf.data.get_output_shapes(dataset)      # the same as dataset.output_shapes
"""

from __future__ import annotations

from typing import Any

from nbflow.data.iterator_ops import Iterator


def make_one_shot_iterator(dataset: Any) -> Iterator:
    """An iterator over ``dataset`` that initializes itself on first use."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Any, shared_name: str | None = None) -> Iterator:
    """An iterator over ``dataset``; run its ``initializer`` before ``get_next``."""
    return dataset.make_initializable_iterator(shared_name=shared_name)


def get_output_types(dataset_or_iterator: Any) -> Any:
    """The dtypes of the elements of a dataset or iterator (nested as the elements)."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    """The static shapes of the elements of a dataset or iterator."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    """The classes (Tensor, SparseTensor) of the elements of a dataset or iterator."""
    return dataset_or_iterator.output_classes
