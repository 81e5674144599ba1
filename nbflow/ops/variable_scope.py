"""``tf.get_variable`` and ``tf.variable_scope``: variables named by scope, created or shared.

Each graph keeps a ``_VariableStore`` (``graph._variable_store``): the variables made by
``get_variable`` by full name, how often each variable scope name was opened, and (per thread)
the current ``VariableScope``. A variable's name depends only on the variable scopes
(``"layer1/weights"``), never on name scopes; ``variable_scope`` also opens a name scope for the
ops created inside, which TensorFlow uniquifies on re-entry (``"layer1_1/"``) while the variable
scope name stays ``"layer1"``.

Sharing is explicit: in a scope with ``reuse=False`` (the default) ``get_variable`` must create,
with ``reuse=True`` it must find, with ``reuse=tf.AUTO_REUSE`` it does whichever applies.

    with tf.variable_scope("layer1"):
        w = tf.get_variable("weights", [784, 100])     # layer1/weights:0
    with tf.variable_scope("layer1", reuse=True):
        assert tf.get_variable("weights") is w

With ``partitioner=`` (or a scope's partitioner) ``get_variable`` returns a
``PartitionedVariable`` whose shards are ``name/part_0``... (``ops/partitioned_variables.py``).
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import threading
from typing import Any
from collections.abc import Callable, Iterator

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.framework.tensor_shape import TensorShape, as_shape
from nbflow.ops import init_ops
from nbflow.ops.variables import Variable
from nbflow.ops import array_ops, partitioned_variables as pv


class _ReuseMode(enum.Enum):
    """Reuse modes beyond True/None; ``AUTO_REUSE`` creates when missing, else shares."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope:
    """A variable scope: a name prefix, a reuse mode and defaults for ``get_variable``."""

    def __init__(
        self,
        reuse: Any,
        name: str = "",
        initializer: Any = None,
        regularizer: Callable[[Any], Any] | None = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Callable[..., Any] | None = None,
        name_scope: str = "",
        dtype: Any = dtypes.float32,
        use_resource: bool | None = None,
        constraint: Callable[[Any], Any] | None = None,
    ):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name_scope(self) -> str:
        return self._name_scope

    @property
    def reuse(self) -> Any:
        return self._reuse

    @property
    def initializer(self) -> Any:
        return self._initializer

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def regularizer(self) -> Any:
        return self._regularizer

    @property
    def caching_device(self) -> Any:
        return self._caching_device

    @property
    def partitioner(self) -> Any:
        return self._partitioner

    @property
    def custom_getter(self) -> Any:
        return self._custom_getter

    @property
    def use_resource(self) -> bool | None:
        return self._use_resource

    @property
    def constraint(self) -> Any:
        return self._constraint

    def reuse_variables(self) -> None:
        """Share variables from now on in this scope (and the scopes opened inside it)."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer: Any) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype: Any) -> None:
        self._dtype = dtypes.as_dtype(dtype)

    def set_caching_device(self, caching_device: Any) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        self._custom_getter = custom_getter

    def set_use_resource(self, use_resource: bool | None) -> None:
        self._use_resource = use_resource

    def global_variables(self) -> list[Any]:
        return ops_lib.get_collection(GraphKeys.GLOBAL_VARIABLES, self._prefix())

    def trainable_variables(self) -> list[Any]:
        return ops_lib.get_collection(GraphKeys.TRAINABLE_VARIABLES, self._prefix())

    def local_variables(self) -> list[Any]:
        return ops_lib.get_collection(GraphKeys.LOCAL_VARIABLES, self._prefix())

    def _prefix(self) -> str:
        return self._name + "/" if self._name else ""

    def _derive(self, name: str, name_scope: str, **overrides: Any) -> VariableScope:
        """A scope inheriting this one's settings, with ``overrides`` that are not None."""
        settings = {
            "reuse": self._reuse,
            "initializer": self._initializer,
            "regularizer": self._regularizer,
            "caching_device": self._caching_device,
            "partitioner": self._partitioner,
            "custom_getter": self._custom_getter,
            "dtype": self._dtype,
            "use_resource": self._use_resource,
            "constraint": self._constraint,
        }
        settings.update({k: v for k, v in overrides.items() if v is not None})
        return VariableScope(name=name, name_scope=name_scope, **settings)

    def get_variable(self, var_store: _VariableStore, name: str, **kwargs: Any) -> Variable:
        """``get_variable`` with this scope's prefix and defaults."""
        full_name = self._prefix() + name
        for key in ("initializer", "regularizer", "caching_device", "partitioner", "constraint"):
            if kwargs.get(key) is None:
                kwargs[key] = getattr(self, "_" + key)
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = self._dtype
        reuse = self._reuse
        getter: Callable[..., Any] = var_store.get_variable
        if self._custom_getter is not None:
            custom = self._custom_getter
            inner = getter

            def custom_getter(name: str, **kw: Any) -> Variable:  # wraps the store
                return custom(inner, name, **kw)

            getter = custom_getter

        # Variable names depend on variable scopes only: create them in the root name scope.
        with ops_lib.get_default_graph().name_scope(None):
            return getter(full_name, reuse=reuse, **kwargs)


class _VariableStore:
    """A graph's variables from ``get_variable`` and its variable-scope bookkeeping."""

    def __init__(self) -> None:
        self.vars: dict[str, Any] = {}  # a Variable or a PartitionedVariable
        self.scope_counts: dict[str, int] = {}
        self._local = threading.local()

    @property
    def current_scope(self) -> VariableScope:
        scope = getattr(self._local, "scope", None)
        if scope is None:
            scope = self._local.scope = VariableScope(False)
        return scope

    @current_scope.setter
    def current_scope(self, scope: VariableScope) -> None:
        self._local.scope = scope

    def open_scope(self, name: str) -> None:
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        for key in self.scope_counts:
            if key.startswith(name + "/"):
                self.scope_counts[key] = 0

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Callable[[Any], Any] | None = None,
        reuse: Any = None,
        trainable: bool | None = None,
        collections: list[str] | None = None,
        caching_device: Any = None,
        partitioner: Any = None,
        validate_shape: bool = True,
        use_resource: bool | None = None,
        constraint: Callable[[Any], Any] | None = None,
        **unused: Any,
    ) -> Variable:
        dtype = dtypes.as_dtype(dtype).base_dtype
        shape_ = None if shape is None else as_shape(shape)
        found = self.vars.get(name)
        if partitioner is not None and found is None and reuse is not True:
            return self._create_partitioned(
                name, shape_, dtype, initializer, partitioner, regularizer=regularizer,
                trainable=trainable, collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, constraint=constraint,
            )  # fmt: skip
        if found is not None:
            if reuse is False or reuse is None:
                raise ValueError(
                    f"Variable {name} already exists, disallowed. Did you mean to set "
                    "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
                )
            if shape_ is not None and not shape_.is_compatible_with(found.get_shape()):
                raise ValueError(
                    f"Trying to share variable {name}, but specified shape {shape_} and found "
                    f"shape {found.get_shape()}."
                )
            if not dtype.is_compatible_with(found.dtype.base_dtype):
                raise ValueError(
                    f"Trying to share variable {name}, but specified dtype {dtype.name} and "
                    f"found dtype {found.dtype.base_dtype.name}."
                )
            return found
        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). "
                "Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
            )
        initial_value, variable_dtype = _initial_value(name, shape_, dtype, initializer)
        variable = Variable(
            initial_value=initial_value,
            trainable=True if trainable is None else trainable,
            collections=collections,
            caching_device=caching_device,
            name=name,
            dtype=variable_dtype,
            validate_shape=validate_shape,
            constraint=constraint,
        )
        self.vars[name] = variable
        if regularizer is not None:
            graph = ops_lib.get_default_graph()
            with graph.colocate_with(variable.op), graph.name_scope(name + "/Regularizer/"):
                loss = regularizer(variable)
            if loss is not None:
                ops_lib.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return variable

    def _create_partitioned(
        self,
        name: str,
        shape: TensorShape | None,
        dtype: dtypes.DType,
        initializer: Any,
        partitioner: Any,
        **options: Any,
    ) -> Any:
        """A ``PartitionedVariable`` of shards ``name/part_i`` (``ops/partitioned_variables``)."""
        if shape is None or not shape.is_fully_defined():
            raise ValueError(f"Partitioned variable {name} needs a fully defined shape")
        partitions = list(partitioner(shape=shape, dtype=dtype))

        def make_shard(shard_name: str, shard_shape: list[int], shard_init: Any) -> Variable:
            return self.get_variable(
                shard_name, shard_shape, dtype, initializer=shard_init, reuse=False, **options
            )

        variable = pv.create_partitioned_variables(
            name, shape, dtype, partitions, make_shard, initializer
        )
        self.vars[name] = variable
        return variable


def _initial_value(
    name: str, shape: TensorShape | None, dtype: dtypes.DType, initializer: Any
) -> tuple[Any, dtypes.DType | None]:
    """What to pass to Variable: a value or a no-argument callable, and the dtype to ask."""
    if initializer is None:
        initializer = _default_initializer(name, dtype)
    if isinstance(initializer, ops_lib.Tensor) or not callable(initializer):
        if shape is not None and not isinstance(initializer, ops_lib.Tensor):
            # A Python or NumPy value must have the variable's shape.

            return (lambda: array_ops.constant(initializer, dtype=dtype, shape=shape)), None
        if shape is not None:
            raise ValueError("If initializer is a constant, do not specify shape.")
        return initializer, None
    if inspect.isclass(initializer):
        initializer = initializer()
    if shape is not None and shape.is_fully_defined():
        dims = shape.as_list()
        return (lambda: initializer(dims, dtype=dtype, partition_info=None)), dtype
    if _takes_no_arguments(initializer):
        return initializer, None
    raise ValueError(
        f"The initializer passed for variable {name} is not valid. It should be a callable with "
        "no arguments and the shape should not be provided, or an initializer object and "
        f"`shape` should be fully defined (got shape {shape})."
    )


def _takes_no_arguments(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    )


def _default_initializer(name: str, dtype: dtypes.DType) -> Any:
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_unsigned or dtype.is_bool:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _store(graph: ops_lib.Graph | None = None) -> _VariableStore:
    graph = graph or ops_lib.get_default_graph()
    store = getattr(graph, "_variable_store", None)
    if store is None:
        with graph._lock:
            store = getattr(graph, "_variable_store", None)
            if store is None:
                store = graph._variable_store = _VariableStore()  # type: ignore[attr-defined]
    return store


def get_variable_scope() -> VariableScope:
    """The current variable scope (the root scope has the name "")."""
    return _store().current_scope


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Callable[[Any], Any] | None = None,
    trainable: bool | None = None,
    collections: list[str] | None = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: bool | None = None,
    custom_getter: Callable[..., Any] | None = None,
    constraint: Callable[[Any], Any] | None = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Variable:
    """The variable ``<scope>/<name>``: created, or shared under ``reuse``.

    >>> import nbflow as tf
    >>> tf.reset_default_graph()
    >>> with tf.variable_scope("layer1"):
    ...     tf.get_variable("weights", [2, 3]).name
    'layer1/weights:0'
    """
    kwargs = {
        "shape": shape,
        "dtype": dtype,
        "initializer": initializer,
        "regularizer": regularizer,
        "trainable": trainable,
        "collections": collections,
        "caching_device": caching_device,
        "partitioner": partitioner,
        "validate_shape": validate_shape,
        "use_resource": use_resource,
        "constraint": constraint,
    }
    store = _store()
    scope = store.current_scope
    if custom_getter is not None:
        return custom_getter(
            lambda name, **kw: scope.get_variable(store, name, **kw), name, **kwargs
        )
    return scope.get_variable(store, name, **kwargs)


def get_local_variable(name: str, shape: Any = None, dtype: Any = None, **kwargs: Any):
    """A non-trainable variable in the LOCAL_VARIABLES collection."""
    collections = list(kwargs.pop("collections", None) or []) + [GraphKeys.LOCAL_VARIABLES]
    kwargs.pop("trainable", None)
    return get_variable(name, shape, dtype, trainable=False, collections=collections, **kwargs)


@contextlib.contextmanager
def variable_scope(
    name_or_scope: str | VariableScope | None,
    default_name: str | None = None,
    values: Any = None,
    initializer: Any = None,
    regularizer: Callable[[Any], Any] | None = None,
    caching_device: Any = None,
    partitioner: Any = None,
    custom_getter: Callable[..., Any] | None = None,
    reuse: Any = None,
    dtype: Any = None,
    use_resource: bool | None = None,
    constraint: Callable[[Any], Any] | None = None,
    auxiliary_name_scope: bool = True,
) -> Iterator[VariableScope]:
    """Open a variable scope (and a name scope) for ``get_variable`` and the ops inside.

    ``name_or_scope`` is a name, relative to the current variable scope, or a VariableScope
    (re-entered by its full name). With None, ``default_name`` is used, made unique.
    ``reuse``: True shares, AUTO_REUSE creates or shares, None/False inherits the parent's.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    if reuse is False:
        reuse = None  # scopes never turn reuse off: False inherits, as in TensorFlow
    graph = ops_lib._graph_of(values) or ops_lib.get_default_graph()
    store = _store(graph)
    old = store.current_scope
    overrides = {
        "initializer": initializer,
        "regularizer": regularizer,
        "caching_device": caching_device,
        "partitioner": partitioner,
        "custom_getter": custom_getter,
        "dtype": dtype,
        "use_resource": use_resource,
        "constraint": constraint,
    }
    if name_or_scope is None and reuse is True:
        raise ValueError("reuse=True cannot be used without a name_or_scope")
    with contextlib.ExitStack() as stack:
        if isinstance(name_or_scope, VariableScope):
            short = name_or_scope.name.split("/")[-1]
        elif name_or_scope is not None:
            short = name_or_scope
        else:
            short = default_name  # type: ignore[assignment]
        name_scope = old.original_name_scope
        if auxiliary_name_scope and short:
            name_scope = stack.enter_context(graph.name_scope(short))
        if isinstance(name_or_scope, VariableScope):
            new_name = name_or_scope.name
            base = name_or_scope
            original = name_or_scope.original_name_scope
            overrides["reuse"] = reuse or name_or_scope.reuse
        else:
            if name_or_scope is None:
                name_or_scope = _unique_scope_name(store, old, default_name)  # type: ignore[arg-type]
            new_name = f"{old.name}/{name_or_scope}" if old.name else name_or_scope
            base = old
            original = name_scope
            overrides["reuse"] = reuse or old.reuse
        scope = base._derive(new_name, original, **overrides)
        saved_counts = dict(store.scope_counts)
        store.open_scope(new_name)
        store.current_scope = scope
        try:
            yield scope
        finally:
            store.current_scope = old
            if base is not old:  # re-entered a scope object: restore the counts
                store.scope_counts = saved_counts
            else:
                store.close_subscopes(new_name)


def _unique_scope_name(store: _VariableStore, current: VariableScope, prefix: str) -> str:
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.scope_counts.get(name, 0) == 0:
        return prefix
    i = 1
    while store.scope_counts.get(f"{name}_{i}", 0) > 0:
        i += 1
    return f"{prefix}_{i}"


@contextlib.contextmanager
def variable_op_scope(values: Any, name_or_scope: Any, default_name: str | None = None, **kw):
    """The old argument order of ``variable_scope``."""
    with variable_scope(name_or_scope, default_name=default_name, values=values, **kw) as scope:
        yield scope


__all__ = [
    "AUTO_REUSE",
    "VariableScope",
    "get_local_variable",
    "get_variable",
    "get_variable_scope",
    "variable_op_scope",
    "variable_scope",
]
