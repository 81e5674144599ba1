"""Static shapes that may be partly unknown: TensorShape and Dimension, as in TensorFlow.

A shape of unknown rank is ``TensorShape(None)``; a dimension of unknown size is
``Dimension(None)``. Shape functions merge and check these at graph construction time.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Iterator


class Dimension:
    """One dimension of a shape; ``value`` is an int or None when unknown."""

    __slots__ = ("_value",)

    def __init__(self, value: Any):
        if isinstance(value, Dimension):
            value = value.value
        if value is not None:
            value = int(value)
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self) -> int | None:
        return self._value

    def __repr__(self) -> str:
        return f"Dimension({self._value})"

    def __str__(self) -> str:
        return "?" if self._value is None else str(self._value)

    def __int__(self) -> int:
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to int")
        return self._value

    __index__ = __int__

    def __eq__(self, other: object) -> Any:
        other_value = other.value if isinstance(other, Dimension) else other
        if self._value is None or other_value is None:
            return None
        return self._value == other_value

    def __ne__(self, other: object) -> Any:
        eq = self.__eq__(other)
        return None if eq is None else not eq

    def __hash__(self) -> int:
        return hash(self._value)

    def is_compatible_with(self, other: Any) -> bool:
        other = as_dimension(other)
        return self._value is None or other.value is None or self._value == other.value

    def merge_with(self, other: Any) -> Dimension:
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return self if self._value is not None else other

    def _arith(self, other: Any, fn) -> Dimension:
        other = as_dimension(other)
        if self._value is None or other.value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other.value))

    def __add__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other: Any) -> Dimension:
        return self._arith(other, lambda a, b: a // b)


def as_dimension(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)


def dimension_value(dim: Any) -> int | None:
    return dim.value if isinstance(dim, Dimension) else dim


class TensorShape:
    """A possibly partial shape.

    >>> TensorShape([2, None]).merge_with([None, 3])
    TensorShape([2, 3])
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        if isinstance(dims, TensorShape):
            self._dims: tuple[Dimension, ...] | None = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (int, Dimension)):
            self._dims = (as_dimension(dims),)
        else:
            self._dims = tuple(as_dimension(d) for d in dims)

    @property
    def dims(self) -> list[Dimension] | None:
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self) -> int | None:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def __repr__(self) -> str:
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[d.value for d in self._dims]})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join(str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __iter__(self) -> Iterator[Any]:
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(d.value for d in self._dims)

    def __getitem__(self, key: Any) -> Any:
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key].value

    def __eq__(self, other: object) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return (
            self._dims == other._dims
            if self._dims is None or other._dims is None
            else ([d.value for d in self._dims] == [d.value for d in other._dims])
        )

    def __hash__(self) -> int:
        return hash(None if self._dims is None else tuple(d.value for d in self._dims))

    def __reduce__(self):
        return (TensorShape, (self.as_list() if self._dims is not None else None,))

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d.value is not None for d in self._dims)

    def as_list(self) -> list[int | None]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d.value for d in self._dims]

    def num_elements(self) -> int | None:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:  # type: ignore[union-attr]
            n *= d.value  # type: ignore[operator]
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        try:
            return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])
        except ValueError:
            raise ValueError(f"Shapes {self} and {other} are not compatible") from None

    def assert_is_compatible_with(self, other: Any) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def assert_has_rank(self, rank: int) -> None:
        if self.ndims not in (None, rank):
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank: int) -> TensorShape:
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def concatenate(self, other: Any) -> TensorShape:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def assert_same_rank(self, other: Any) -> None:
        other = as_shape(other)
        if self.ndims is not None and other.ndims is not None and self.ndims != other.ndims:
            raise ValueError(f"Shapes {self} and {other} must have the same rank")


def as_shape(shape: Any) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: int | None = None) -> TensorShape:
    return TensorShape(None if rank is None else [None] * rank)


def scalar() -> TensorShape:
    return TensorShape([])


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting on partial shapes; raises ValueError when the shapes cannot broadcast."""
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = a.dims, b.dims
    assert da is not None and db is not None
    n = max(len(da), len(db))
    da = [Dimension(1)] * (n - len(da)) + da
    db = [Dimension(1)] * (n - len(db)) + db
    out = []
    for x, y in zip(da, db):
        if x.value == 1:
            out.append(y)
        elif y.value == 1:
            out.append(x)
        elif x.value is None or y.value is None:
            out.append(x if y.value is None else y)
        elif x.value == y.value:
            out.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out)
