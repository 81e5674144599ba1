"""Nested loop and branch values: flatten them to tensors, and pack tensors back into their shape.

``cond`` results and ``while_loop`` variables may be nests of lists, tuples, namedtuples and
dicts (keys in sorted order, as ``tf.nest``). A TensorArray travels through a branch or a loop
as its flow tensor (``_loop_flow``) and is rebuilt around the flow that comes out
(``_with_flow``).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import Tensor
from nbflow.framework.tensor_shape import TensorShape


def _loop_tensor(value: Any) -> Tensor:
    flow = getattr(value, "_loop_flow", None)
    if flow is not None:
        return flow
    return ops_lib.convert_to_tensor(value)


def _rewrap(template: Any, tensor: Tensor) -> Any:
    rebuild = getattr(template, "_with_flow", None)
    return rebuild(tensor) if rebuild is not None else tensor


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, builtins.tuple) and hasattr(value, "_fields")


def _flatten(structure: Any, shapes: bool = False) -> list[Any]:
    """The leaves of a nest of lists, tuples, namedtuples and dicts (sorted keys), in order."""
    if shapes and isinstance(structure, TensorShape):
        return [structure]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k], shapes)]
    if isinstance(structure, (list, builtins.tuple)):
        if shapes and structure and all(isinstance(d, (int, type(None))) for d in structure):
            return [TensorShape(list(structure))]
        return [leaf for v in structure for leaf in _flatten(v, shapes)]
    return [structure]


def _pack_as(structure: Any, flat: Sequence[Any], unwrap_single: bool = False) -> Any:
    """Rebuild ``structure`` with ``flat`` as its leaves."""
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            values = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, values[k]) for k in s)
        if _is_namedtuple(s):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, builtins.tuple):
            return builtins.tuple(build(v) for v in s)
        if isinstance(s, list):
            return [build(v) for v in s]
        return next(it)

    out = build(structure)
    if (
        unwrap_single
        and isinstance(out, (list, builtins.tuple))
        and len(out) == 1
        and not (_is_namedtuple(out))
    ):
        return out[0]
    return out
