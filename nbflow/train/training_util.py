"""The global step: an int64 scalar variable counting training steps (collection GLOBAL_STEP)."""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops.variables import Variable


def get_global_step(graph: Any = None) -> Any:
    """The graph's global step variable, or None if it has none.

    >>> import nbflow as tf
    >>> tf.train.get_global_step() is None
    True
    """
    graph = graph or ops_lib.get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise TypeError("There are multiple items in collection global_step: only one allowed")
    if steps:
        return steps[0]
    try:
        tensor = graph.get_tensor_by_name("global_step:0")
    except (KeyError, ValueError):
        return None
    return tensor if tensor.dtype.base_dtype.is_integer else None


def create_global_step(graph: Any = None) -> Any:
    """Create the global step variable (ValueError if the graph already has one)."""
    graph = graph or ops_lib.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    with graph.as_default(), graph.name_scope(None), ops_lib.control_dependencies(None):
        return Variable(
            np.array(0, dtype=np.int64),
            name="global_step",
            trainable=False,
            dtype=dtypes.int64,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Any = None) -> Any:
    """The global step variable, created if the graph has none yet."""
    graph = graph or ops_lib.get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The global step's current value, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor: Any) -> None:
    dtype = global_step_tensor.dtype.base_dtype
    if not dtype.is_integer:
        raise TypeError(f"Existing global_step does not have integer type: {dtype.name}")
    if global_step_tensor.shape.ndims != 0:
        raise TypeError(f"Existing global_step is not scalar: {global_step_tensor.shape}")
