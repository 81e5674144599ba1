"""``Session``: runs steps of a graph. The client side of the whitepaper's §3.

``run(fetches, feed_dict)`` normalises the fetch structure and the fed values
(``signature.py``, cached per structure), then takes the step signature to a cached step,
building it on the first call of that signature:

1. the master's graph work (``master.compile_step``): prune and copy, optimize, place,
   partition;
2. plan each partition with the kernel binder (``step.bind_kernels``) and pick its runner
   (``step.choose_runner``; several partitions: ``step.partition_runner``).

A repeated call only converts the feed values and calls the step's runner with a fresh
``KernelContext`` and the deadline (``RunOptions.timeout_in_ms`` or
``ConfigProto.operation_timeout_in_ms``). A runner that can wait is registered while it runs, so
``close()`` cancels it (``CancelledError``) through the step's cancellation manager. A traced
call (``RunOptions.trace_level``) runs a separately cached build of the same signature whose
kernels time themselves, and feeds the measured times to the placement cost model.

Where partitions run is the one thing session types change: ``tf.Session(target)`` picks its
class from the target's scheme in ``register_session_target``'s registry, the one plug-in
point (``import nbflow.distributed`` registers ``nbflow://``, whose ``DistributedSession`` runs
the partitions on the cluster's tasks).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Self

from nbflow import errors
from nbflow.devices import device as device_lib
from nbflow.devices.device import Device, local_devices
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext
from nbflow.framework.ops import Graph, Tensor
from nbflow.runtime import executor as executor_lib
from nbflow.runtime import context as runtime_context
from nbflow.runtime import placement
from nbflow.runtime.config import ConfigProto, RunMetadata, RunOptions
from nbflow.runtime.session_handles import TensorHandle
from nbflow.runtime.partial_run import PartialRun, new_handle
from nbflow.runtime.partition import transfer_orders
from nbflow.runtime.master import (
    CompiledStep,
    StepSignature,
    blame_user_ops,
    compile_step,
    plan_partition,
)
from nbflow.runtime.signature import FeedSlot, FetchHandler, convert_feeds, fetch_key
from nbflow.runtime.step import (
    RunnerPolicy,
    Step,
    bind_kernels,
    choose_runner,
    partition_runner,
)
from nbflow.runtime.step_stats import StepStatsCollector


class BaseSession:
    """A session runs steps of one graph; this one on the devices of this process."""

    for_cluster = False  # compile steps for a cluster's tasks (master.compile_step)

    def __init__(
        self, target: str = "", graph: Graph | None = None, config: ConfigProto | None = None
    ):
        self._graph = graph if graph is not None else ops_lib.get_default_graph()
        self._config = config if config is not None else runtime_context.default_config()
        self._closed = False
        self._opened = True
        self._devices: list[Device] = self._open_devices(target)
        self._device = self._devices[0]
        self._devices_by_name = {d.name: d for d in self._devices}
        self._cost_model = placement.CostModel()
        self._fetch_cache: dict[Any, FetchHandler] = {}
        self._feed_slots: dict[Tensor, FeedSlot] = {}
        self._partial_runs: dict[str, PartialRun] = {}
        self._steps: dict[Any, Step] = {}
        self._steps_version = self._graph._mutation_version
        self._lock = threading.RLock()
        self._pool = executor_lib.shared_pool(self._config.inter_op_parallelism_threads)
        self._executor_choice = "auto"  # "auto" | "inline" | "parallel"
        self._default_context: Any = None
        self._running: set[KernelContext] = set()  # steps that can wait, for close()
        self._new_step_id: Callable[[], int] = executor_lib.next_step_id
        self._handle_ops: dict[Any, Any] = {}  # TensorHandle's readers and deleters, per graph

    def _open_devices(self, target: str) -> list[Device]:
        """The devices partitions are placed on (here: this process's)."""
        if target:
            raise errors.UnimplementedError(
                None, None, f"Session target {target!r}: open remote targets with tf.Session"
            )
        device_lib.limit_intra_op_threads(self._config.intra_op_parallelism_threads)
        device_lib.retain_freed_host_memory()
        return local_devices(
            dict(self._config.device_count), self._config.gpu_options.visible_device_list
        )

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
        handler, step_key, feed_tensors, feed_values = self._step_signature(fetches, feed_dict)
        if handler.handles and not self.supports_session_handles:
            raise errors.UnimplementedError(
                None,
                None,
                f"{type(self).__name__} cannot keep tensors across run calls "
                "(tf.get_session_handle); fetch the value, or keep it in a tf.Variable",
            )
        traced = options is not None and options.trace_level > 0
        key = (step_key, "traced") if traced else step_key
        step = self._steps.get(key)
        if step is None:
            step = self._steps[key] = self._build_step(handler, feed_tensors, traced)
        device = step.device
        ctx = KernelContext(
            device.name, device.xp, device.resources, self._new_step_id(), None, options
        )
        deadline = None
        if options is not None or self._config.operation_timeout_in_ms:
            deadline = self._deadline(options)
            if traced:
                ctx.stats = StepStatsCollector()
        if step.runner.can_wait:
            results = self._run_cancellable(step.runner, ctx, feed_values, deadline)
        else:
            results = step.runner.run(ctx, feed_values, deadline)
        if options is not None:
            self._report(step, step_key, ctx, options, run_metadata)
        if handler.handles:
            results = self._wrap_handles(handler, results)
        return handler.build(results)

    # --- session handles ---------------------------------------------------------------------
    supports_session_handles = True  # fetching tf.get_session_handle gives a TensorHandle

    def _wrap_handles(self, handler: FetchHandler, results: tuple) -> tuple:
        """Fetched ``get_session_handle`` strings as ``TensorHandle``s bound to this session."""
        out = list(results)
        for pos, dtype in handler.handles:
            out[pos] = TensorHandle.fetched(out[pos], dtype, self)
        return tuple(out)

    def _handle_op(self, key: Any, make: Callable[[], Any]) -> Any:
        """The reader or deleter ops ``TensorHandle`` runs, built once in this session's graph."""
        with self._lock:
            found = self._handle_ops.get(key)
            if found is None:
                with self._graph.as_default():
                    found = self._handle_ops[key] = make()
            return found

    def _deadline(self, options: RunOptions | None) -> float | None:
        ms = (options.timeout_in_ms if options else 0) or self._config.operation_timeout_in_ms
        return time.monotonic() + ms / 1000.0 if ms and ms > 0 else None

    def _run_cancellable(
        self, runner: Any, ctx: KernelContext, feeds: tuple, deadline: float | None
    ) -> tuple:
        """Run a step that can wait, cancellable by ``close()`` while it runs."""
        self._running.add(ctx)
        try:
            if self._closed:
                ctx.cancellation.cancel(_closed_error())
            return runner.run(ctx, feeds, deadline)
        finally:
            self._running.discard(ctx)

    def _report(
        self,
        step: Step,
        step_key: Any,
        ctx: KernelContext,
        options: RunOptions,
        run_metadata: RunMetadata | None,
    ) -> None:
        """Fill ``run_metadata``; a traced step's statistics also go to the placement cost
        model (a multi-device step placed without them is rebuilt on its next run)."""
        if ctx.stats is not None:
            stats = ctx.stats.finish(step.plans)
            self._cost_model.record(stats)
            with self._lock:
                plain = self._steps.get(step_key)
                if plain is not None and plain.multi_device and not plain.measured:
                    del self._steps[step_key]
            if run_metadata is not None:
                run_metadata.step_stats = stats
        if run_metadata is not None and options.output_partition_graphs:
            run_metadata.partition_graphs = step.partition_graphs

    def _step_signature(self, fetches: Any, feed_dict: dict | None) -> tuple:
        """(fetch handler, step key, fed tensors, converted feed values), with fetch handlers
        cached per structure and cached steps dropped when the graph's existing ops changed."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        key = fetch_key(fetches)
        handler = self._fetch_cache.get(key) if key is not None else None
        if handler is None:
            handler = FetchHandler(self._graph, fetches)
            if key is not None:
                self._fetch_cache[key] = handler
        if feed_dict:
            feed_tensors, feed_values = convert_feeds(self._graph, self._feed_slots, feed_dict)
        else:
            feed_tensors, feed_values = (), ()
        if self._graph._mutation_version != self._steps_version:
            with self._lock:
                self._steps.clear()
                self._steps_version = self._graph._mutation_version
        return handler, (handler.signature, feed_tensors), feed_tensors, feed_values

    def _build_step(self, handler: FetchHandler, feeds: tuple, traced: bool) -> Step:
        with self._lock:
            signature = StepSignature(tuple(handler.tensors), tuple(handler.targets), feeds)
            compiled = compile_step(
                signature,
                self._devices,
                self._config,
                self._cost_model,
                log_placement=not traced,
                for_cluster=self.for_cluster,
            )
            return self._place_partitions(compiled, traced)

    def _place_partitions(self, compiled: CompiledStep, traced: bool) -> Step:
        """Where partitions run, here: plan each one and pick its runner."""
        policy = RunnerPolicy(self._executor_choice, self._config.inter_op_parallelism_threads)
        parts, plans, partition_ops = [], [], []
        for part in compiled.partitions:
            plan = plan_partition(part, bind_kernels(part.device, traced))
            partition_ops.append((part.device.name, blame_user_ops(plan, compiled.step_graph)))
            plans.append((part.device.name, plan))
            feed_indices = [i for i, _ in part.feeds]
            parts.append((part.device, plan, feed_indices, [i for i, _ in part.fetches]))
        if compiled.whole:
            device, plan = parts[0][0], parts[0][1]
            runner = choose_runner(plan, self._pool, policy)
        else:
            device = self._device
            runner = partition_runner(
                parts,
                self._pool,
                policy,
                compiled.num_fetches,
                compiled.fed_fetches,
                self._devices_by_name,
                transfer_orders(compiled.partitions),
            )
        multi = not compiled.whole
        return Step(runner, device, plans, partition_ops, compiled.measured, multi)

    # --- partial runs (``runtime.partial_run``) ----------------------------------------------
    def partial_run_setup(self, fetches: Any, feeds: Sequence[Any] | None = None) -> str:
        """Start a step taken in pieces: ``fetches`` are all the pieces may fetch, ``feeds``
        all they may feed; the handle is for ``partial_run``."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        handle = new_handle()
        self._partial_runs[handle] = PartialRun(self, fetches, feeds)
        return handle

    def partial_run(self, handle: str, fetches: Any, feed_dict: dict | None = None) -> Any:
        """Feed some of the setup's feeds and fetch some of its fetches, running only what
        no earlier piece of this partial run ran."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        found = self._partial_runs.get(handle)
        if found is None:
            raise errors.InvalidArgumentError(
                None, None, f"Partial run handle {handle!r} is not one of this session's "
                "(or its run has fetched everything already)"
            )  # fmt: skip
        try:
            return found.run(fetches, feed_dict)
        finally:
            if found.done:
                self._partial_runs.pop(handle, None)

    # --- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Cancel running steps (``CancelledError``) and free the session's resources; using
        it afterwards raises RuntimeError."""
        if self._closed:
            return
        self._closed = True
        for ctx in list(self._running):
            ctx.cancellation.cancel(_closed_error())
        self._steps.clear()
        self._partial_runs.clear()
        self._release()

    def _release(self) -> None:
        for device in self._devices:
            device.resources.reset()

    def as_default(self):
        return ops_lib.default_session(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return ops_lib._notebook_mimebundle(self, include, exclude)

    def __enter__(self) -> Self:
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
        """Drop the resource containers of ``target``'s tasks and cancel their running steps
        (for the session class registered for the target's scheme)."""
        session_class = _session_targets.get(str(target).partition("://")[0])
        if not target or session_class is None or session_class.reset is BaseSession.reset:
            raise errors.UnimplementedError(None, None, "Session.reset applies to remote targets")
        session_class.reset(target, containers, config)


def _closed_error() -> errors.OpError:
    return errors.CancelledError(None, None, "Session closed while the step was running")


_session_targets: dict[str, type[Session]] = {}


def register_session_target(scheme: str, session_class: type[Session]) -> None:
    """Serve ``tf.Session("scheme://...")`` with ``session_class(target, graph, config)``, a
    ``Session`` that runs partitions elsewhere. The one plug-in point of the runtime:
    ``nbflow.distributed`` registers ``nbflow://`` when imported."""
    _session_targets[scheme] = session_class


class Session(BaseSession):
    """``tf.Session``: use it as a context manager or call ``close()``.

    A ``target`` with a scheme gives the ``Session`` subclass registered for it."""

    def __new__(cls, target: Any = "", *args: Any, **kwargs: Any):
        if cls is Session and target:
            scheme = target.partition("://")[0]
            found = _session_targets.get(scheme)
            if found is None:
                raise errors.UnimplementedError(
                    None,
                    None,
                    f"No session target registered for {target!r} (known: "
                    f"{sorted(_session_targets) or 'none'}); import nbflow.distributed to "
                    "serve nbflow:// targets",
                )
            cls = found
        return super().__new__(cls)


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
