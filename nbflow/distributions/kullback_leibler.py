"""``kl_divergence`` and ``RegisterKL``: closed-form KL divergences registered by class pair.

``@RegisterKL(Normal, Normal)`` registers ``fn(a, b, name)`` for that pair. ``kl_divergence(a,
b)`` looks up the pair of classes nearest to ``type(a)`` and ``type(b)`` along their method
resolution orders (an ``Exponential`` finds the ``Gamma``/``Gamma`` divergence), so a subclass
inherits its parents' divergences unless it registers its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops import check_ops, math_ops

_DIVERGENCES: dict[tuple[type, type], Callable[..., Any]] = {}


def _registered_kl(type_a: type, type_b: type) -> Callable[..., Any] | None:
    """The divergence of the registered pair nearest to (type_a, type_b), or None."""
    best, best_distance = None, None
    for i, parent_a in enumerate(type_a.__mro__):
        for j, parent_b in enumerate(type_b.__mro__):
            fn = _DIVERGENCES.get((parent_a, parent_b))
            if fn is not None and (best_distance is None or i + j < best_distance):
                best, best_distance = fn, i + j
    return best


def kl_divergence(
    distribution_a: Any, distribution_b: Any, allow_nan_stats: bool = True, name: str | None = None
) -> Any:
    """KL(distribution_a || distribution_b), batched, from the registered closed form.

    >>> import nbflow as tf
    >>> kl = tf.distributions.kl_divergence(tf.distributions.Normal(0.0, 1.0),
    ...                                     tf.distributions.Normal(0.0, 1.0))
    >>> float(tf.Session().run(kl))
    0.0
    """
    fn = _registered_kl(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(
            f"No KL(distribution_a || distribution_b) registered for distribution_a type "
            f"{type(distribution_a).__name__} and distribution_b type "
            f"{type(distribution_b).__name__}"
        )
    with ops_lib.name_scope(name, "KullbackLeibler"):
        kl = fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl
        kl = ops_lib.convert_to_tensor(kl, name="kl")
        check = check_ops.assert_equal(
            math_ops.reduce_any(math_ops.is_nan(kl)),
            False,
            message=f"KL calculation between {distribution_a.name} and {distribution_b.name} "
            "returned NaN values (and was called with allow_nan_stats=False)",
        )
        with ops_lib.control_dependencies([check]):
            return kl + 0


class RegisterKL:
    """Decorator registering ``fn(a, b, name=None)`` as KL(a || b) for a pair of classes.

    >>> import nbflow as tf
    >>> class MyNormal(tf.distributions.Normal): pass
    >>> @tf.distributions.RegisterKL(MyNormal, MyNormal)
    ... def _kl(a, b, name=None): return tf.zeros(a.batch_shape)
    """

    def __init__(self, dist_cls_a: type, dist_cls_b: type):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _DIVERGENCES:
            a, b = (c.__name__ for c in self._key)
            raise ValueError(f"KL({a} || {b}) has already been registered")
        _DIVERGENCES[self._key] = kl_fn
        return kl_fn


__all__ = ["RegisterKL", "kl_divergence"]
