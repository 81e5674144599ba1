"""``tf.nest``: nested structures of lists, tuples, namedtuples and dicts, as TensorFlow's.

    >>> flatten({"b": [1, (2, 3)], "a": 4})
    [4, 1, 2, 3]
    >>> pack_sequence_as({"b": [0, (0, 0)], "a": 0}, [4, 1, 2, 3])
    {'b': [1, (2, 3)], 'a': 4}
    >>> map_structure(lambda x, y: x + y, (1, [2]), (10, [20]))
    (11, [22])

Dicts flatten in sorted key order and come back with the original's keys; strings and None are
leaves. (``tf.data`` elements use ``nbflow.data.structure``, where a list is one tensor.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def is_nested(structure: Any) -> bool:
    """Whether ``structure`` is a list, tuple (namedtuple included) or dict."""
    return isinstance(structure, (list, tuple, Mapping))


def _children(structure: Any) -> list[Any]:
    if isinstance(structure, Mapping):
        return [structure[k] for k in sorted(structure)]
    return list(structure)


def _rebuild(structure: Any, children: list[Any]) -> Any:
    if isinstance(structure, Mapping):
        by_key = dict(zip(sorted(structure), children))
        mapping_type: Any = type(structure)  # a dict, OrderedDict, ... built from pairs
        return mapping_type((k, by_key[k]) for k in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*children)
    return type(structure)(children)


def flatten(structure: Any, expand_composites: bool = False) -> list[Any]:
    """The leaves of ``structure``, depth first, dicts by sorted key."""
    del expand_composites
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """``flat_sequence`` arranged in the nesting of ``structure``."""
    del expand_composites
    flat = list(flat_sequence)
    expected = len(flatten(structure))
    if len(flat) != expected:
        raise ValueError(
            f"Could not pack sequence. Structure had {expected} elements, but flat_sequence "
            f"had {len(flat)} elements. Structure: {structure!r}, flat_sequence: {flat!r}."
        )
    leaves = iter(flat)

    def pack(s: Any) -> Any:
        if not is_nested(s):
            return next(leaves)
        return _rebuild(s, [pack(c) for c in _children(s)])

    return pack(structure)


def assert_same_structure(
    nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False
) -> None:
    """ValueError if the two nest differently; TypeError if ``check_types`` and a sequence's
    type differs (list vs tuple, or two namedtuple classes)."""
    del expand_composites
    if is_nested(nest1) != is_nested(nest2):
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: "
            f"{nest1!r}\n\nSecond structure: {nest2!r}"
        )
    if not is_nested(nest1):
        return
    if check_types and type(nest1) is not type(nest2):
        raise TypeError(
            f"The two structures don't have the same sequence type. Input structure has type "
            f"{type(nest1)}, while shallow structure has type {type(nest2)}."
        )
    if isinstance(nest1, Mapping) and sorted(nest1) != sorted(nest2):
        raise ValueError(
            f"The two dictionaries don't have the same set of keys: {sorted(nest1)} vs "
            f"{sorted(nest2)}"
        )
    a, b = _children(nest1), _children(nest2)
    if len(a) != len(b):
        raise ValueError(
            f"The two structures don't have the same number of elements.\n\nFirst structure: "
            f"{nest1!r}\n\nSecond structure: {nest2!r}"
        )
    for x, y in zip(a, b):
        assert_same_structure(x, y, check_types)


def map_structure(func: Callable[..., Any], *structure: Any, **kwargs: Any) -> Any:
    """``func`` applied to the corresponding leaves of the structures, in the first's nesting."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are check_types, got {sorted(kwargs)}")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure", "pack_sequence_as"]
