"""``tf.train.ClusterSpec`` and ``tf.train.Server``: TensorFlow's entry points to a cluster.

A ``ClusterSpec`` names jobs and their tasks. In TensorFlow each task is a host:port; here a
task is a process nbflow starts on a Dask worker, so a job may equally be given as a task count
(``{"ps": 1, "worker": 2}``). ``Server`` starts the tasks of a ``ClusterSpec`` on a Dask
cluster (``nbflow.distributed``, which registers itself here when imported, as it registers its
session target with the runtime) and exposes ``target`` for ``tf.Session(server.target)``.

>>> ClusterSpec({"ps": 1, "worker": ["w0:2222", "w1:2222"]}).num_tasks("worker")
2
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbflow import errors


class ClusterSpec:
    """Jobs and their tasks: ``{"job": [addresses] | {index: address} | count}``."""

    def __init__(self, cluster: Any):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError(
                f"ClusterSpec expects a dict mapping job names to tasks, got {type(cluster)}"
            )
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if isinstance(tasks, int):
                entries = {i: "" for i in range(tasks)}
            elif isinstance(tasks, dict):
                entries = {int(i): str(a) for i, a in tasks.items()}
            elif isinstance(tasks, (list, tuple)):
                entries = {i: str(a) for i, a in enumerate(tasks)}
            else:
                raise TypeError(f"Tasks of job {job!r} must be a count, list or dict: {tasks!r}")
            self._jobs[str(job)] = entries

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        try:
            return self._job(job_name)[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index} in job {job_name}") from None

    def job_tasks(self, job_name: str) -> list[str]:
        job = self._job(job_name)
        return [job[i] for i in sorted(job)]

    def task_names(self) -> list[str]:
        """Every task as a device-name prefix, e.g. ``/job:ps/replica:0/task:0``."""
        return [
            f"/job:{job}/replica:0/task:{i}" for job, tasks in self._jobs.items() for i in tasks
        ]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for job, tasks in self._jobs.items():
            indices = sorted(tasks)
            if indices == list(range(len(indices))):
                out[job] = [tasks[i] for i in indices]
            else:
                out[job] = dict(tasks)
        return out

    def as_cluster_def(self) -> dict[str, Any]:
        return {"job": [{"name": j, "tasks": dict(t)} for j, t in self._jobs.items()]}

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


# The layer above fills this in: ``import nbflow.distributed`` registers its process-wide Dask
# cluster (the train layer never imports Dask), as it registers the ``nbflow://`` session target.
_default_cluster_factory: Callable[[], Any] | None = None


def register_default_cluster(factory: Callable[[], Any]) -> None:
    """Give ``Server`` without ``cluster=`` the cluster ``factory()`` returns (a plug-in point:
    ``nbflow.distributed`` registers ``default_cluster`` when imported)."""
    global _default_cluster_factory
    _default_cluster_factory = factory


def _default_cluster() -> Any:
    if _default_cluster_factory is None:
        raise errors.UnimplementedError(
            None,
            None,
            "tf.train.Server needs a cluster: import nbflow.distributed (it registers a local "
            "Dask cluster as the default) or pass cluster=nbflow.distributed.Cluster(...)",
        )
    return _default_cluster_factory()


class Server:
    """An in-process handle on a cluster's task, as ``tf.train.Server`` is.

    ``Server(cluster_spec, job_name, task_index)`` creates the spec's tasks on a Dask cluster
    (``cluster=`` an ``nbflow.distributed.Cluster``; by default a local one, shared by every
    Server of the process) and returns the handle of one of them; ``target`` is the string to
    give ``tf.Session``. ``join()`` returns at once: the task runs in its Dask worker.
    """

    def __init__(
        self,
        server_or_cluster_def: Any,
        job_name: str | None = None,
        task_index: int | None = None,
        protocol: str | None = None,
        config: Any = None,
        start: bool = True,
        cluster: Any = None,
    ):
        spec = ClusterSpec(server_or_cluster_def)
        self.server_def = {
            "cluster": spec.as_cluster_def(),
            "job_name": job_name or spec.jobs[0],
            "task_index": task_index or 0,
            "protocol": protocol or "dask",
        }
        self._spec = spec
        self._cluster = cluster if cluster is not None else _default_cluster()
        self._cluster.create_tasks(spec, missing_only=True)
        self._config = config

    @classmethod
    def create_local_server(cls, config: Any = None, start: bool = True) -> Server:
        return cls({"localhost": 1}, "localhost", 0, config=config, start=start)

    @property
    def target(self) -> str:
        return self._cluster.target

    @property
    def cluster(self) -> Any:
        return self._cluster

    def start(self) -> None:
        """Tasks start when created; kept for TensorFlow compatibility."""

    def join(self) -> None:
        """Tasks run inside their Dask workers; nothing to wait for in this process."""
