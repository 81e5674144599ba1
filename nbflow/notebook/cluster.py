"""The notebook's Dask cluster: created small on demand (a LocalCluster with in-process
workers), or connected to an existing scheduler. ``nbflow.distributed`` owns how nbflow tasks
run on it; this module only holds the handle the magics and the cluster widget show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class ClusterHandle:
    client: Any
    cluster: Any = None  # None when connected to a scheduler we did not start

    @property
    def dashboard_link(self) -> str:
        return getattr(self.client, "dashboard_link", "") or ""

    def scale(self, n: int) -> None:
        if self.cluster is None:
            raise RuntimeError("cannot scale a cluster this notebook did not start")
        self.cluster.scale(max(0, n))

    def workers(self) -> list[dict[str, Any]]:
        """One row per worker: name, address, threads, memory limit, status, tasks, last seen."""
        info = (
            self.client.scheduler_info(n_workers=-1)
            if _takes_n(self.client)
            else (self.client.scheduler_info())
        )
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
                }
            )
        return rows

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _takes_n(client: Any) -> bool:
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters


_current: ClusterHandle | None = None


def get_cluster(workers: int | None = None, threads: int = 1, address: str = "") -> ClusterHandle:
    """The notebook's cluster: started (``workers`` in-process workers) or connected."""
    global _current
    from dask.distributed import Client, LocalCluster

    if _current is not None and address:
        _current.close()
        _current = None
    if _current is None:
        if address:
            _current = ClusterHandle(Client(address))
        else:
            cluster = LocalCluster(
                n_workers=1 if workers is None else workers,
                threads_per_worker=threads,
                processes=False,
                dashboard_address="127.0.0.1:0",
            )
            _current = ClusterHandle(Client(cluster), cluster)
    elif workers is not None:
        _current.scale(workers)
    return _current


def close_cluster() -> None:
    global _current
    if _current is not None:
        _current.close()
        _current = None
