"""The dataflow graph: ``Graph`` holds ``Operation`` nodes whose outputs are ``Tensor`` edges.

A graph is built once and run many times. Every op is created by ``Graph.create_op``, which
uniquifies its name within the current name scope (case-insensitively, as TensorFlow does),
adds control inputs from the active ``control_dependencies`` scopes, resolves its device from
the ``device`` scopes, runs the op's shape function, and records where in user code it was made.

This module owns ``Graph`` and the default graph. ``Operation`` and ``Tensor`` live in
framework/operation.py, ``convert_to_tensor`` in framework/tensor_conversion.py and the default
session in framework/default_session.py; all are re-exported here under TensorFlow's
``framework.ops`` path.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from typing import Any
from collections.abc import Callable, Iterator, Sequence

from nbflow.devices.spec import DeviceSpec, merge_device
from nbflow.framework.default_session import (  # noqa: F401 - re-exported
    _push_session,
    _remove_session,
    default_session,
    get_default_session,
)
from nbflow.framework.graph_def import graph_def_versions, graph_to_graph_def
from nbflow.framework.op_def import REQUIRED, OpDef, TensorSpec, get_op_def
from nbflow.framework.operation import (  # noqa: F401 - re-exported
    Operation,
    Tensor,
    _notebook_mimebundle,
    _run_with_session,
    register_mimebundle_renderer,
)
from nbflow.framework.tensor_conversion import (  # noqa: F401 - re-exported
    _contains_tensor,
    _pack_fn,
    _register_constant_fn,
    convert_n_to_tensor,
    convert_to_tensor,
    is_tensor,
    register_tensor_conversion_function,
)

_NBFLOW_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphKeys:
    """Standard names for graph collections."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A TensorFlow computation: a set of operations and the tensors flowing between them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ops_by_name: dict[str, Operation] = {}
        self._ops: list[Operation] = []
        self._names_in_use: dict[str, int] = {}
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._id_counter = 0
        self._version = 0  # bumps on every op added
        self._mutation_version = 0  # bumps when an existing op changes (plans must rebuild)
        self._seed: int | None = None
        self._local = threading.local()
        self._building_function = False
        self._graph_def_versions = graph_def_versions()
        # Hooks that the notebook layer uses to learn about new ops (cell-scoped building).
        self._op_observers: list[Callable[[Operation], None]] = []

    # --- thread-local construction state (TensorFlow keeps these per thread) ----------------
    @property
    def _state(self) -> threading.local:
        local = self._local
        if not hasattr(local, "name_stack"):
            local.name_stack = ""
            local.control_stack = []
            local.device_stack = []
            local.colocation_stack = []
            local.attr_scope = {}
            local.container = ""
            local.gradient_calls = []
        return local

    @contextlib.contextmanager
    def gradient_call(self, scope: str) -> Iterator[None]:
        """Mark ops built inside as part of the ``gradients()`` call named ``scope`` (even where
        they sit under another name scope, as a loop's backward pass does)."""
        calls = self._state.gradient_calls
        calls.append(scope)
        try:
            yield
        finally:
            calls.pop()

    def current_gradient_call(self) -> str | None:
        """The name scope of the innermost ``gradients()`` call being built, if any."""
        calls = self._state.gradient_calls
        return calls[-1] if calls else None

    # --- identity ---------------------------------------------------------------------------
    def _next_id(self) -> int:
        self._id_counter += 1
        return self._id_counter

    @property
    def version(self) -> int:
        return self._version

    @property
    def seed(self) -> int | None:
        return self._seed

    @seed.setter
    def seed(self, seed: int | None) -> None:
        self._seed = seed

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        """Make the graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def _mutated(self) -> None:
        self._mutation_version += 1

    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        """Make this the default graph in the ``with`` block."""
        _default_graph_stack().append(self)
        try:
            yield self
        finally:
            _default_graph_stack().pop()

    # --- names -------------------------------------------------------------------------------
    def get_name_scope(self) -> str:
        return self._state.name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """``name`` inside the current scope, made unique ("a", "a_1", ...) case-insensitively."""
        stack = self._state.name_stack
        if stack:
            name = f"{stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{count}"
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{count - 1}"
        return name

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Open a name scope; yields its prefix ending in "/" ("" for the root)."""
        state = self._state
        old = state.name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        state.name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            state.name_stack = old

    # --- scopes that shape new ops -------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Sequence[Any] | None) -> Iterator[None]:
        """Ops created inside run only after ``control_inputs``; None clears outer scopes."""
        state = self._state
        old = state.control_stack
        if control_inputs is None:
            state.control_stack = []
        else:
            ops = []
            for c in control_inputs:
                c = _as_operation(self, c)
                if c not in ops:
                    ops.append(c)
            state.control_stack = old + [ops]
        try:
            yield
        finally:
            state.control_stack = old

    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        """Place ops created inside on a device (a string, DeviceSpec, or function of the op)."""
        state = self._state
        state.device_stack.append(device_name_or_function)
        self._mutated()
        try:
            yield
        finally:
            state.device_stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """Place ops created inside on the same device as ``op``."""
        state = self._state
        old = state.colocation_stack
        if op is None:
            state.colocation_stack = []
        else:
            target = _as_operation(self, op)
            state.colocation_stack = ([] if ignore_existing else old) + [target]
        try:
            yield
        finally:
            state.colocation_stack = old

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[None]:
        """Stateful ops created inside keep their state in the named resource container."""
        state = self._state
        old = state.container
        state.container = container_name
        try:
            yield
        finally:
            state.container = old

    @contextlib.contextmanager
    def _attr_scope(self, attrs: dict[str, Any]) -> Iterator[None]:
        state = self._state
        old = state.attr_scope
        state.attr_scope = {**old, **attrs}
        try:
            yield
        finally:
            state.attr_scope = old

    # --- ops ------------------------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: Sequence[Any] = (),
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        control_inputs: Sequence[Operation] = (),
        output_specs: Sequence[TensorSpec] | None = None,
    ) -> Operation:
        """Create an op of a registered type; inputs may be tensors or lists (list inputs).

        Shape inference runs here, so a matmul of [2,3] by [4,5] raises ValueError now.
        """
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        opdef = get_op_def(op_type)
        attrs = dict(attrs or {})
        flat: list[Tensor] = []
        grouped: list[Any] = []
        for i, value in enumerate(inputs):
            if i in opdef.list_inputs:
                tensors = [self._as_input(v) for v in value]
                attrs.setdefault("N", len(tensors))
                grouped.append(tensors)
                flat.extend(tensors)
            else:
                tensor = self._as_input(value)
                grouped.append(tensor)
                flat.append(tensor)
        if len(grouped) != len(opdef.inputs):
            raise TypeError(
                f"{op_type} takes inputs {opdef.input_names}, got {len(grouped)} input(s)"
            )
        for key, default in opdef.attrs.items():
            if key not in attrs:
                if default is _required():
                    raise TypeError(f"{op_type} requires attr '{key}'")
                attrs[key] = default
        with self._lock:
            state = self._state
            if name and name.endswith("/"):
                op_name = name[:-1]
            else:
                op_name = self.unique_name(name or op_type)
            if output_specs is None:
                output_specs = _infer(opdef, op_name, grouped, attrs)
            controls = list(control_inputs)
            input_ops = {t.op for t in flat}
            for scope in state.control_stack:
                for c in scope:
                    if c not in controls and c not in input_ops:
                        controls.append(c)
            for key, value in state.attr_scope.items():
                attrs.setdefault(key, value)
            if opdef.stateful and "container" in opdef.attrs and not attrs.get("container"):
                attrs["container"] = state.container
            op = Operation(
                self,
                op_type,
                op_name,
                flat,
                attrs,
                output_specs,
                controls,
                "",
                opdef,
                _creation_site(),
            )
            self._place(op, state)
            self._ops_by_name[op_name] = op
            self._ops.append(op)
            self._version += 1
        for observer in self._op_observers:
            observer(op)
        return op

    def _place(self, op: Operation, state: threading.local) -> None:
        if state.colocation_stack:
            target = state.colocation_stack[-1]
            groups = list(target.attrs.get("_class", [f"loc:@{target.name}"]))
            op._attrs["_class"] = groups
            op._device = target.device
            return
        device = ""
        for spec in state.device_stack:
            if callable(spec) and not isinstance(spec, (str, DeviceSpec)):
                op._device = device
                spec = spec(op)
            if spec is None:
                device = ""  # tf.device(None) clears the outer device scopes
            elif spec:
                device = merge_device(device, spec)
        op._device = device

    def _as_input(self, value: Any) -> Tensor:
        tensor = convert_to_tensor(value)
        if tensor.graph is not self:
            raise ValueError(
                f"Tensor {tensor.name} must be from the same graph as the op being created."
            )
        return tensor

    def _add_op(self, op: Operation) -> None:  # used by import_graph_def for prebuilt ops
        self._ops_by_name[op.name] = op
        self._ops.append(op)
        self._version += 1

    def _remove_ops(self, ops: Sequence[Operation]) -> None:
        """Remove ops no other op consumes (the notebook layer's cell re-runs use this)."""
        doomed = set(ops)
        with self._lock:
            for op in ops:
                for t in op._inputs:
                    if op in t._consumers:
                        t._consumers.remove(op)
                for c in op._control_inputs:
                    if op in c._control_outputs:
                        c._control_outputs.remove(op)
                self._ops_by_name.pop(op.name, None)
            self._ops = [op for op in self._ops if op not in doomed]
            for values in self._collections.values():
                values[:] = [v for v in values if _owner_op(v) not in doomed]
            self._release_names([op.name for op in ops])
            self._version += 1
            self._mutated()

    def _release_names(self, names: Sequence[str]) -> None:
        """Free the names (and scopes) of removed ops so a rebuilt cell gets the same names."""
        in_use: set[str] = set()
        for op in self._ops:
            parts = op.name.lower().split("/")
            in_use.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        for name in names:
            parts = name.lower().split("/")
            for key in ("/".join(parts[: i + 1]) for i in range(len(parts))):
                if key in in_use or key not in self._names_in_use:
                    continue
                del self._names_in_use[key]
                base, sep, suffix = key.rpartition("_")
                if sep and suffix.isdigit() and base in self._names_in_use:
                    self._names_in_use[base] = 1  # unique_name probes upward from _1 again

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an Operation name, not a Tensor name "
                "(Tensor names look like '<op_name>:<output_index>')."
            )
        op = self._ops_by_name.get(op_name)
        if op is None:
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. "
                f"The operation, '{op_name}', does not exist in the graph."
            )
        i = int(index)
        if i >= len(op._outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                f"'{op_name}', exists but only has {len(op._outputs)} outputs."
            )
        return op._outputs[i]

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolve a Tensor, Operation, name or convertible object to an element of this graph."""
        if isinstance(obj, str):
            if ":" in obj and allow_tensor:
                return self.get_tensor_by_name(obj)
            if allow_operation:
                return self.get_operation_by_name(obj)
            return self.get_tensor_by_name(obj)
        if isinstance(obj, Tensor) and allow_tensor:
            element: Any = obj
        elif isinstance(obj, Operation) and allow_operation:
            element = obj
        elif hasattr(obj, "_as_graph_element"):
            element = obj._as_graph_element()
        else:
            raise TypeError(f"Can not convert a {type(obj).__name__} into a graph element.")
        if element.graph is not self:
            raise ValueError(f"{element} is not an element of this graph.")
        return element

    def is_fetchable(self, op: Any) -> bool:
        return True

    # --- collections ------------------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection(self, name: str, scope: str | None = None) -> list[Any]:
        values = self._collections.get(name, [])
        if scope is None:
            return list(values)
        pattern = re.compile(scope)
        return [v for v in values if hasattr(v, "name") and pattern.match(v.name)]

    def get_collection_ref(self, name: str) -> list[Any]:
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # --- serialisation --------------------------------------------------------------------------
    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> dict:
        return graph_to_graph_def(self, add_shapes=add_shapes)

    @property
    def graph_def_versions(self) -> dict[str, int]:
        return dict(self._graph_def_versions)

    def __repr__(self) -> str:
        return f"<nbflow.Graph {len(self._ops)} ops at 0x{id(self):x}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return _notebook_mimebundle(self, include, exclude)


def _required() -> Any:
    return REQUIRED


def _owner_op(value: Any) -> Any:
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    op = getattr(value, "op", None)
    return op if isinstance(op, Operation) else None


def _infer(opdef: OpDef, name: str, grouped: list[Any], attrs: dict[str, Any]) -> list[TensorSpec]:
    specs = [[_spec_of(t) for t in v] if isinstance(v, list) else _spec_of(v) for v in grouped]
    infer_attrs = {k: v for k, v in attrs.items() if not k.startswith("_") and k != "N"}
    try:
        result = opdef.infer(*specs, **infer_attrs)
    except (ValueError, TypeError) as e:
        shapes = ", ".join(_describe_spec(s) for s in specs)
        raise type(e)(f"{e} for '{name}' (op: '{opdef.type}') with input shapes: {shapes}.") from e
    if isinstance(result, TensorSpec):
        return [result]
    return list(result)


def _describe_spec(spec: Any) -> str:
    if isinstance(spec, list):
        return "[" + ", ".join(_describe_spec(s) for s in spec) + "]"
    return "?" if spec.shape.dims is None else str(spec.shape.as_list())


def _spec_of(t: Tensor) -> TensorSpec:
    return TensorSpec(t._shape, t._dtype, constant_value(t))


def constant_value(tensor: Tensor) -> Any:
    """The tensor's value if it is known at graph construction (constants and simple folds)."""
    op = tensor.op
    opdef = op.op_def
    if opdef.holds_constant:
        return op.get_attr("value")
    if opdef.passes_through:
        return constant_value(op.inputs[0])
    return opdef.static_value(op)


def _creation_site() -> tuple[str, int, str] | None:
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_NBFLOW_DIR):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def _as_operation(graph: Graph, value: Any) -> Operation:
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    element = graph.as_graph_element(value)
    return element if isinstance(element, Operation) else element.op


# --- the default graph -----------------------------------------------------------------------
class _DefaultStacks(threading.local):
    def __init__(self) -> None:
        self.graphs: list[Graph] = []


_stacks = _DefaultStacks()
_global_default_graph: Graph | None = None


def _default_graph_stack() -> list[Graph]:
    return _stacks.graphs


def get_default_graph() -> Graph:
    """The innermost graph of ``as_default()`` blocks, else the global default graph."""
    global _global_default_graph
    if _stacks.graphs:
        return _stacks.graphs[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Clear the global default graph (not allowed inside a ``Graph.as_default()`` block)."""
    global _global_default_graph
    if _stacks.graphs:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared "
            "graph, exit the nesting and create a new graph."
        )
    _global_default_graph = Graph()


# --- module-level conveniences on the default graph ----------------------------------------------
def name_scope(name: str | None, default_name: str | None = None, values: Any = None):
    """``tf.name_scope(name, default_name=None, values=None)``."""
    graph = _graph_of(values) or get_default_graph()
    return graph.name_scope(name if name is not None else default_name)


def _graph_of(values: Any) -> Graph | None:
    if not values:
        return None
    for v in values:
        if isinstance(v, (Tensor, Operation)):
            return v.graph
        op = getattr(v, "op", None)
        if isinstance(op, Operation):
            return op.graph
    return None


def control_dependencies(control_inputs: Sequence[Any] | None):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function: Any):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op: Any, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name: str):
    return get_default_graph().container(container_name)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)
