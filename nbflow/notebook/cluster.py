"""The notebook's cluster: an ``nbflow.distributed.Cluster`` (TensorFlow tasks — ps, worker —
on Dask workers), started small on demand or attached to an existing scheduler. The
``ClusterHandle`` is what the magics and the cluster widget show; it also wraps a plain
``dask.distributed`` Client or LocalCluster (Dask workers only, no tasks). Importing it loads
Dask: the magics import it when ``%dataflow_cluster`` first runs."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from distributed import Client

from nbflow.distributed import cluster as dist
from nbflow.distributed.cluster import Cluster

DEFAULT_SPEC = {"ps": 1, "worker": 1}


@dataclass
class ClusterHandle:
    client: Any
    cluster: Any = None  # the Dask cluster object; None when we cannot scale it
    nbflow: Any = None  # the nbflow.distributed.Cluster, when there is one
    _closed: bool = field(default=False, repr=False)
    _on_close: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, obj: Any) -> ClusterHandle:
        """A handle on an nbflow ``Cluster``, a Dask ``Client``, a Dask cluster object
        (``LocalCluster`` and the like) or another handle."""
        if isinstance(obj, ClusterHandle):
            return obj
        if isinstance(obj, Cluster):
            return cls(obj.client, obj.dask_cluster, obj)
        if isinstance(obj, Client):
            cluster = getattr(obj, "cluster", None)
            return cls(obj, cluster if hasattr(cluster, "scale") else None)
        if hasattr(obj, "scheduler_address") and hasattr(obj, "scale"):
            return cls(Client(obj, set_as_default=False), obj)
        raise TypeError(
            "expected an nbflow.distributed.Cluster, a dask Client or a Dask cluster, "
            f"got {type(obj).__name__}"
        )

    def __post_init__(self) -> None:
        if self.nbflow is None:
            self.nbflow = _registered_nbflow_cluster(self.client)

    @property
    def dashboard_link(self) -> str:
        try:
            return getattr(self.client, "dashboard_link", "") or ""
        except Exception:  # noqa: BLE001 - no dashboard running
            return ""

    @property
    def scheduler_address(self) -> str:
        return str(self.client.scheduler.address)

    @property
    def target(self) -> str:
        """The ``tf.Session`` target of the nbflow cluster ('' for a plain Dask cluster)."""
        return self.nbflow.target if self.nbflow is not None else ""

    @property
    def can_scale(self) -> bool:
        return self.cluster is not None and hasattr(self.cluster, "scale")

    def scale(self, n: int, timeout: float = 60.0) -> list[str]:
        """Scale the Dask workers to ``n``, wait (up to ``timeout``) until the scheduler has
        that many, then recreate any nbflow task lost with a removed worker. Returns the
        names of the tasks recreated."""
        if not self.can_scale:
            raise RuntimeError("cannot scale a cluster this notebook did not start")
        n = max(0, n)
        self.cluster.scale(n)
        deadline = time.monotonic() + timeout
        while len(self.workers()) != n and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.nbflow is None or n == 0 or not self.nbflow.tasks:
            return []
        return self.nbflow.ensure_tasks(timeout=timeout)

    def workers(self) -> list[dict[str, Any]]:
        """One row per Dask worker: name, address, threads, memory, status, tasks, last seen,
        and the nbflow tasks it hosts."""
        info = (
            self.client.scheduler_info(n_workers=-1)
            if _takes_n(self.client)
            else (self.client.scheduler_info())
        )
        hosted: dict[str, list[str]] = {}
        for t in self.tasks():
            hosted.setdefault(t["address"], []).append(t["task"])
        rows = []
        for address, w in sorted(info.get("workers", {}).items()):
            metrics = w.get("metrics", {})
            rows.append(
                {
                    "name": str(w.get("name", address)),
                    "address": address,
                    "threads": w.get("nthreads", 0),
                    "memory_limit": w.get("memory_limit", 0),
                    "memory": metrics.get("memory", 0),
                    "status": w.get("status", "running"),
                    "tasks": metrics.get("executing", 0),
                    "last_seen": w.get("last_seen", 0.0),
                    "resources": w.get("resources", {}),
                    "nbflow_tasks": hosted.get(address, []),
                }
            )
        return rows

    def tasks(self) -> list[dict[str, Any]]:
        """One row per nbflow task: task name, job, index, Dask worker address, devices,
        health, restarts, pid, last seen. Empty for a plain Dask cluster."""
        if self.nbflow is None:
            return []
        rows = []
        for t in sorted(list(self.nbflow.tasks.values()), key=_task_order):
            rows.append(
                {
                    "task": t.name,
                    "job": t.job,
                    "index": _task_index(t.name),
                    "address": t.address,
                    "devices": list(t.devices),
                    "healthy": bool(t.healthy),
                    "restarts": t.restarts,
                    "pid": t.pid,
                    "last_seen": t.last_seen,
                }
            )
        return rows

    @property
    def closed(self) -> bool:
        """Closed here (``close``, ``%dataflow_cluster --close``) or its Dask client closed."""
        return (
            self._closed
            or bool(getattr(self.nbflow, "closed", False))  # Cluster.closed, once it has one
            or getattr(self.client, "status", "running") in ("closing", "closed")
        )

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once this handle is closed (widgets showing it grey out)."""
        self._on_close.append(callback)

    def check_health(self) -> dict[str, bool]:
        return self.nbflow.check_health() if self.nbflow is not None else {}

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._close_cluster()
        finally:
            for callback in self._on_close:
                callback()

    def _close_cluster(self) -> None:
        if self.nbflow is not None and self.nbflow.client is self.client:
            self.nbflow.close()
            if self.nbflow._owns:
                return
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _task_index(name: str) -> int:
    return int(name.rsplit("/task:", 1)[-1].split("/", 1)[0])


def _task_order(t: Any) -> tuple[bool, str, int]:
    return (t.job != "ps", t.job, _task_index(t.name))


def _registered_nbflow_cluster(client: Any) -> Any:
    """The nbflow Cluster this process made on ``client``'s scheduler, if any."""
    try:
        target = dist._target_of(client)
    except Exception:  # noqa: BLE001 - not a connected client
        return None
    with dist._clusters_lock:
        found = dist._clusters.get(target)
    return found if found is not None and not found._closed else None


def _takes_n(client: Any) -> bool:
    return "n_workers" in inspect.signature(client.scheduler_info).parameters


_current: ClusterHandle | None = None


def task_spec(ps: int | None, workers: int | None) -> dict[str, int] | None:
    """The ps/worker spec the options ask for; None when neither is given."""
    if ps is None and workers is None:
        return None
    spec = {"ps": DEFAULT_SPEC["ps"] if ps is None else ps}
    spec["worker"] = DEFAULT_SPEC["worker"] if workers is None else workers
    return {job: n for job, n in spec.items() if n > 0}


def get_cluster(
    n_workers: int | None = None,
    threads: int = 1,
    address: str = "",
    ps: int | None = None,
    workers: int | None = None,
    dashboard: bool = True,
) -> ClusterHandle:
    """The notebook's nbflow cluster: started (``n_workers`` Dask worker processes, default
    one per task, with ``ps`` ps tasks and ``workers`` worker tasks) or attached to the
    scheduler at ``address``. On an existing cluster, ``n_workers`` scales the Dask workers
    and ``ps``/``workers`` add the tasks still missing."""
    global _current
    spec = task_spec(ps, workers)
    if _current is not None and address:
        _current.close()
        _current = None
    if _current is None:
        if address:
            _current = ClusterHandle.of(Cluster.from_address(address, spec=spec))
        else:
            spec = DEFAULT_SPEC if spec is None else spec
            if n_workers is None:
                n_workers = max(1, sum(spec.values()))
            nb = Cluster.local(n_workers=n_workers, threads_per_worker=threads, dashboard=dashboard)
            try:
                if spec and n_workers > 0:
                    nb.create_tasks(spec)
            except BaseException:
                nb.close()
                raise
            _current = ClusterHandle.of(nb)
        return _current
    if n_workers is not None:
        _current.scale(n_workers)
    if spec and _current.workers():
        _current.nbflow.create_tasks(spec, missing_only=True)
    return _current


def close_cluster() -> None:
    global _current
    if _current is not None:
        _current.close()
        _current = None
