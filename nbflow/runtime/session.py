"""``Session``: runs steps of a graph. The master of the whitepaper's §3, in one process.

``run(fetches, feed_dict)`` takes the step signature (fetched tensors, target ops, fed tensors)
to a cached executor, building it on the first call of that signature: the plan (prune, order,
bind) and the executor strategy. A repeated call only normalises fetches and feeds (both cached
per structure), converts the feed values, and calls the executor.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np

from nbflow import errors
from nbflow.devices.device import Device, local_cpu_devices
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext
from nbflow.framework.ops import Graph, Operation, Tensor
from nbflow.runtime import executor as executor_lib
from nbflow.runtime.config import ConfigProto, RunMetadata, RunOptions
from nbflow.runtime.plan import build_plan


class _FetchHandler:
    """Flattens a nested fetch structure to unique graph elements and rebuilds the results."""

    def __init__(self, graph: Graph, fetches: Any):
        self.tensors: list[Tensor] = []
        self.targets: list[Operation] = []
        self._tensor_pos: dict[Tensor, int] = {}
        self._build = self._compile(graph, fetches)
        self.signature = (tuple(self.tensors), tuple(self.targets))

    def _element(self, graph: Graph, fetch: Any) -> Callable[[tuple], Any]:
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(
                f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or "
                f"Tensor. ({e})"
            ) from None
        except (KeyError, ValueError) as e:
            raise ValueError(
                f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. "
                f"({e.args[0] if e.args else e})"
            ) from None
        if isinstance(element, Operation):
            if element not in self.targets:
                self.targets.append(element)
            return lambda results: None
        pos = self._tensor_pos.get(element)
        if pos is None:
            pos = self._tensor_pos[element] = len(self.tensors)
            self.tensors.append(element)
        return lambda results: results[pos]

    def _compile(self, graph: Graph, fetch: Any) -> Callable[[tuple], Any]:
        if fetch is None:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}")
        if isinstance(fetch, (Tensor, Operation, str)) or hasattr(fetch, "_as_graph_element"):
            return self._element(graph, fetch)
        if isinstance(fetch, Mapping):
            keys = list(fetch.keys())
            builders = [self._compile(graph, fetch[k]) for k in keys]
            kind = type(fetch)
            return lambda r: kind(zip(keys, (b(r) for b in builders)))
        if isinstance(fetch, (list, tuple)):
            builders = [self._compile(graph, f) for f in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):
                kind = type(fetch)
                return lambda r: kind(*(b(r) for b in builders))
            if isinstance(fetch, tuple):
                return lambda r: tuple(b(r) for b in builders)
            return lambda r: [b(r) for b in builders]
        values = getattr(fetch, "_nbflow_fetches", None)  # composite objects (IndexedSlices)
        if values is not None:
            parts, rebuild = values()
            builders = [self._compile(graph, p) for p in parts]
            return lambda r: rebuild([b(r) for b in builders])
        return self._element(graph, fetch)

    def build(self, results: tuple) -> Any:
        return self._build(results)


def _fetch_key(fetches: Any) -> Any:
    """A hashable key for a fetch structure (None when it cannot be keyed cheaply)."""
    kind = type(fetches)
    if kind is Tensor or kind is Operation or kind is str:
        return fetches
    if kind is list or kind is tuple:
        parts = tuple(_fetch_key(f) for f in fetches)
        return None if None in parts else (kind, parts)
    if kind is dict:
        parts = tuple((k, _fetch_key(v)) for k, v in fetches.items())
        return None if any(p[1] is None for p in parts) else (kind, parts)
    try:
        hash(fetches)
    except TypeError:
        return None
    return (kind, fetches) if not isinstance(fetches, (list, dict)) else None


class _FeedSlot:
    """How to convert and check a value fed for one tensor."""

    __slots__ = ("tensor", "np_dtype", "dims", "exact", "name", "dtype")

    def __init__(self, tensor: Tensor):
        self.tensor = tensor
        self.dtype = tensor.dtype.base_dtype
        self.np_dtype = None if self.dtype is dtypes.string else self.dtype.np
        shape = tensor.shape
        self.dims = None if shape.ndims is None else tuple(shape.as_list())
        self.exact = shape.is_fully_defined()
        self.name = tensor.name

    def convert(self, value: Any) -> Any:
        if isinstance(value, (Tensor, Operation)):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                f"(fed {value!r} for {self.name})"
            )
        np_dtype = self.np_dtype
        if type(value) is np.ndarray and value.dtype == np_dtype:
            array = value
        elif np_dtype is None:
            from nbflow.ops.array_ops import _string_array

            array = _string_array(value)
        else:
            array = np.asarray(value)
            if array.dtype != np_dtype:
                if array.dtype.kind in "USO" or not np.can_cast(array.dtype, np_dtype, "same_kind"):
                    if not (array.dtype.kind in "iub" and np_dtype.kind in "iufc"):
                        raise TypeError(
                            f"Cannot feed value of dtype {array.dtype} for Tensor '{self.name}', "
                            f"which has dtype {self.dtype.name}"
                        )
                array = array.astype(np_dtype)
        dims = self.dims
        if dims is not None and array.shape != dims:
            if (
                self.exact
                or len(array.shape) != len(dims)
                or any(d is not None and d != s for d, s in zip(dims, array.shape))
            ):
                shown = (
                    "("
                    + ", ".join("?" if d is None else str(d) for d in dims)
                    + (",)" if len(dims) == 1 else ")")
                )
                raise ValueError(
                    f"Cannot feed value of shape {array.shape} for Tensor '{self.name}', "
                    f"which has shape '{shown}'"
                )
        return array


class _Step:
    """A cached step signature: its plan's executor and how to reassemble fetches."""

    __slots__ = ("executor", "parallel", "plan")

    def __init__(self, executor: Any, parallel: bool, plan: Any):
        self.executor = executor
        self.parallel = parallel
        self.plan = plan


class BaseSession:
    """A session runs steps of one graph on the devices of this process."""

    def __init__(
        self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None
    ):
        if target:
            raise errors.UnimplementedError(
                None,
                None,
                f"Session target {target!r}: remote targets are served by nbflow.distributed",
            )
        self._graph = graph if graph is not None else ops_lib.get_default_graph()
        self._config = config or ConfigProto()
        self._closed = False
        self._opened = True
        cpus = max(1, self._config.device_count.get("CPU", 1))
        self._devices: list[Device] = local_cpu_devices(cpus)
        self._device = self._devices[0]
        self._fetch_cache: dict[Any, _FetchHandler] = {}
        self._feed_slots: dict[Tensor, _FeedSlot] = {}
        self._steps: dict[Any, _Step] = {}
        self._steps_version = self._graph._mutation_version
        self._lock = threading.RLock()
        self._pool = executor_lib.shared_pool(self._config.inter_op_parallelism_threads)
        self._executor_choice = "auto"  # "auto" | "inline" | "parallel"
        self._default_context: Any = None

    # --- properties --------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> dict:
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return ""

    def list_devices(self) -> list[Any]:
        return list(self._devices)

    # --- running -------------------------------------------------------------------------------
    def run(
        self,
        fetches: Any,
        feed_dict: dict | None = None,
        options: RunOptions | None = None,
        run_metadata: RunMetadata | None = None,
    ) -> Any:
        """Run the ops needed for ``fetches`` given ``feed_dict``; return the fetched values."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        key = _fetch_key(fetches)
        handler = self._fetch_cache.get(key) if key is not None else None
        if handler is None:
            handler = _FetchHandler(self._graph, fetches)
            if key is not None:
                self._fetch_cache[key] = handler
        if feed_dict:
            feed_tensors, feed_values = self._convert_feeds(feed_dict)
        else:
            feed_tensors, feed_values = (), ()
        if self._graph._mutation_version != self._steps_version:
            with self._lock:
                self._steps.clear()
                self._steps_version = self._graph._mutation_version
        step_key = (handler.signature, feed_tensors)
        step = self._steps.get(step_key)
        if step is None:
            step = self._build_step(handler, feed_tensors)
            self._steps[step_key] = step
        ctx = KernelContext(
            self._device.name,
            self._device.xp,
            self._device.resources,
            executor_lib.next_step_id(),
            None,
            options,
        )
        if step.parallel:
            timeout = None
            ms = (options.timeout_in_ms if options else 0) or self._config.operation_timeout_in_ms
            if ms and ms > 0:
                timeout = ms / 1000.0
            results = step.executor.run(ctx, feed_values, timeout)
        else:
            results = step.executor.run(ctx, feed_values)
        return handler.build(results)

    def _convert_feeds(self, feed_dict: dict) -> tuple[tuple, tuple]:
        tensors = []
        values = []
        slots = self._feed_slots
        for key, value in feed_dict.items():
            slot = slots.get(key) if type(key) is Tensor else None
            if slot is None:
                tensor = self._feed_tensor(key)
                slot = slots.get(tensor)
                if slot is None:
                    slot = slots[tensor] = _FeedSlot(tensor)
            tensors.append(slot.tensor)
            values.append(slot.convert(value))
        return tuple(tensors), tuple(values)

    def _feed_tensor(self, key: Any) -> Tensor:
        try:
            element = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError, TypeError) as e:
            raise TypeError(
                f"Cannot interpret feed_dict key as Tensor: {e.args[0] if e.args else e}"
            ) from None
        if not isinstance(element, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r} is not a tensor")
        return element

    def _build_step(self, handler: _FetchHandler, feeds: tuple) -> _Step:
        with self._lock:
            plan = build_plan(handler.tensors, handler.targets, list(feeds), self._bind)
            choice = self._executor_choice
            parallel = choice == "parallel" or (
                choice == "auto"
                and (plan.has_async or executor_lib.has_parallel_work(plan))
                and self._config.inter_op_parallelism_threads != 1
            )
            if parallel:
                return _Step(executor_lib.ParallelExecutor(plan, self._pool), True, plan)
            return _Step(executor_lib.InlineExecutor(plan), False, plan)

    def _bind(self, op: Operation) -> tuple[Any, Any]:
        opdef = op.op_def
        if not opdef.has_kernel_for(self._device.device_type):
            raise errors.UnimplementedError(
                op.node_def,
                op,
                f"No {self._device.device_type} kernel registered for op {op.type} "
                f"(node {op.name})",
            )
        return opdef.bind(op, self._device.device_type), self._device.name

    def partial_run_setup(self, fetches: Any, feeds: Sequence[Any] | None = None) -> str:
        raise errors.UnimplementedError(
            None, None, "partial_run is not supported; feed intermediates with run() instead"
        )

    # --- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Free the session's resources; using it afterwards raises RuntimeError."""
        if not self._closed:
            self._closed = True
            self._steps.clear()
            for device in self._devices:
                device.resources.reset()

    def as_default(self):
        return ops_lib.default_session(self)

    def __enter__(self) -> BaseSession:
        self._default_context = self.as_default()
        self._default_context.__enter__()
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._graph_context.__exit__(*exc)
        self._default_context.__exit__(*exc)
        self._default_context = None
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        raise errors.UnimplementedError(None, None, "Session.reset applies to remote targets")


class Session(BaseSession):
    """``tf.Session``: use it as a context manager or call ``close()``."""


class InteractiveSession(BaseSession):
    """A session that installs itself as the default session on construction (for notebooks)."""

    def __init__(
        self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None
    ):
        super().__init__(target, graph, config)
        ops_lib._push_session(self)

    def close(self) -> None:
        super().close()
        ops_lib._remove_session(self)
