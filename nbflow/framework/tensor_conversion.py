"""``convert_to_tensor``: a Tensor for any value an op may take as input.

A Tensor passes through (its dtype checked); a type that registered a conversion function
(``register_tensor_conversion_function``: Variables, IndexedSlices...) converts itself; a
list holding tensors is packed (``Pack``); any other Python or NumPy value becomes a ``Const``.
The packing and constant builders live in ``nbflow/ops`` and register themselves here when
imported, so the graph layer names no op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nbflow.framework import dtypes
from nbflow.framework.operation import Operation, Tensor


# --- conversion to tensors ---------------------------------------------------------------
_conversion_functions: list[tuple[type, Callable[..., Tensor]]] = []
_constant_fn: list[Callable[..., Tensor]] = []


def register_tensor_conversion_function(base_type: type, conversion_func: Callable[..., Any]):
    """Teach ``convert_to_tensor`` a new type (Variables register themselves this way)."""
    _conversion_functions.append((base_type, conversion_func))


def _register_constant_fn(fn: Callable[..., Tensor]) -> None:
    _constant_fn[:] = [fn]


def convert_to_tensor(
    value: Any, dtype: Any = None, name: str | None = None, preferred_dtype: Any = None
) -> Tensor:
    """A Tensor for ``value``: tensors pass through, Python and NumPy values become constants."""
    if isinstance(value, Tensor):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for Tensor "
                f"with dtype {value.dtype.name}: {value!r}"
            )
        return value
    for base, fn in _conversion_functions:
        if isinstance(value, base):
            return fn(value, dtype=dtype, name=name)
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor (target dtype={dtype})")
    if isinstance(value, (list, tuple)) and any(_contains_tensor(v) for v in value):
        return _pack_fn[0](list(value), name=name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return _constant_fn[0](value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return _constant_fn[0](value, dtype=dtype, name=name or "Const")


_pack_fn: list[Callable[..., Tensor]] = []


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, Tensor) or any(isinstance(value, b) for b, _ in _conversion_functions):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def convert_n_to_tensor(values: Sequence[Any], dtype: Any = None, name: str | None = None):
    return [convert_to_tensor(v, dtype=dtype) for v in values]


def is_tensor(value: Any) -> bool:
    return isinstance(value, Tensor)
