"""The cluster widget: an nbflow cluster's tasks (job/task, Dask worker, devices, health,
restarts), its Dask workers (threads, memory, status, executing, last heartbeat), the Dask
dashboard link, and buttons to scale the Dask workers and refresh. It also shows a plain Dask
``Client`` or ``LocalCluster`` (workers only).

Everything shown comes from ``state`` (a plain dict, rebuilt by ``refresh``), so tests read
the widget's model instead of its HTML."""

from __future__ import annotations

import html
import time
from typing import Any

import ipywidgets as widgets

from nbflow.notebook.cluster import ClusterHandle


def short_device(name: str) -> str:
    """``/job:ps/replica:0/task:0/device:CPU:0`` -> ``CPU:0``."""
    return name.rsplit("/", 1)[-1].replace("device:", "")


def short_task(name: str) -> str:
    """``/job:ps/replica:0/task:0`` -> ``ps:0``."""
    job = name.split("/job:", 1)[-1].split("/", 1)[0]
    return f"{job}:{name.rsplit('/task:', 1)[-1].split('/', 1)[0]}"


def cluster_state(handle: ClusterHandle, check_health: bool = True) -> dict[str, Any]:
    """The widget's model: scheduler, target, dashboard link, worker rows and task rows."""
    if check_health:
        try:
            handle.check_health()
        except Exception:  # noqa: BLE001 - the cluster is closing; show what is recorded
            pass
    tasks = handle.tasks()
    workers = handle.workers()
    return {
        "scheduler": handle.scheduler_address,
        "target": handle.target,
        "dashboard_link": handle.dashboard_link,
        "can_scale": handle.can_scale,
        "n_workers": len(workers),
        "threads": sum(w["threads"] for w in workers),
        "workers": workers,
        "tasks": tasks,
        "healthy": all(t["healthy"] for t in tasks),
    }


def _table(headers: list[str], rows: list[list[Any]], raw: int = -1) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{v if k == raw else html.escape(str(v))}</td>" for k, v in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def render_header(state: dict[str, Any]) -> str:
    link = state["dashboard_link"]
    dash = f"<a href='{html.escape(link)}' target='_blank'>Dask dashboard</a>" if link else ""
    kind = "nbflow cluster" if state["target"] else "Dask cluster"
    tasks = state["tasks"]
    lost = sum(not t["healthy"] for t in tasks)
    task_text = f"{len(tasks)} tasks{f' ({lost} lost)' if lost else ''}, " if tasks else ""
    return (
        f"<b>{kind}</b> {html.escape(state['target'] or state['scheduler'])} — {task_text}"
        f"{state['n_workers']} Dask workers, {state['threads']} threads {dash}"
    )


def render_tasks(state: dict[str, Any]) -> str:
    if not state["tasks"]:
        return ""
    health = {
        True: "<span style='color:#2ca02c'>ok</span>",
        False: "<b style='color:#d62728'>LOST</b>",
    }
    rows = [
        [
            t["task"],
            t["job"],
            t["index"],
            t["address"],
            ", ".join(short_device(d) for d in t["devices"]),
            health[t["healthy"]],
            t["restarts"],
        ]
        for t in state["tasks"]
    ]
    headers = ["task", "job", "index", "Dask worker", "devices", "health", "restarts"]
    return _table(headers, rows, raw=5)


def render_workers(state: dict[str, Any]) -> str:
    now = time.time()
    rows = [
        [
            w["name"],
            w["address"],
            w["threads"],
            f"{w['memory'] / 2**20:.0f} / {w['memory_limit'] / 2**20:.0f} MiB",
            w["status"],
            w["tasks"],
            f"{max(0.0, now - w['last_seen']):.1f} s ago" if w["last_seen"] else "",
            ", ".join(short_task(n) for n in w["nbflow_tasks"]),
        ]
        for w in state["workers"]
    ]
    headers = ["worker", "address", "threads", "memory", "status", "executing", "heartbeat"]
    return _table(headers + ["nbflow tasks"], rows)


class ClusterWidget(widgets.VBox):
    """``ClusterWidget(cluster)``: an ``nbflow.distributed.Cluster``, a ``ClusterHandle``, a
    Dask ``Client`` or a Dask cluster object."""

    def __init__(self, cluster: Any):
        self.handle = ClusterHandle.of(cluster)
        self.state: dict[str, Any] = {}
        self.header = widgets.HTML()
        self.task_table = widgets.HTML()
        self.table = widgets.HTML()
        self.message = widgets.HTML()
        self.scale_up = widgets.Button(description="+1 Dask worker", icon="plus")
        self.scale_down = widgets.Button(description="−1 Dask worker", icon="minus")
        self.refresh_button = widgets.Button(description="refresh", icon="refresh")
        self.scale_up.disabled = self.scale_down.disabled = not self.handle.can_scale
        self.scale_up.on_click(lambda _b: self.scale_by(1))
        self.scale_down.on_click(lambda _b: self.scale_by(-1))
        self.refresh_button.on_click(lambda _b: self.refresh())
        buttons = widgets.HBox([self.scale_up, self.scale_down, self.refresh_button])
        super().__init__([self.header, buttons, self.message, self.task_table, self.table])
        self.handle.on_close(self.show_closed)
        self.refresh()

    def show_closed(self) -> None:
        """The cluster is gone: say so, keep the last tables greyed, and disable every button."""
        self.state = {**self.state, "closed": True, "healthy": False}
        self.scale_up.disabled = self.scale_down.disabled = self.refresh_button.disabled = True
        target = html.escape(self.state.get("target") or self.state.get("scheduler") or "")
        self.header.value = f"<b>cluster closed</b> {target}"
        self.message.value = "closed: start a new one with <code>%dataflow_cluster</code>"
        for table in (self.task_table, self.table):
            if table.value and "opacity" not in table.value:
                table.value = f"<div style='opacity:0.5'>{table.value}</div>"

    @property
    def target_workers(self) -> int:
        return len(self.handle.workers())

    def scale_by(self, delta: int) -> list[str]:
        """Scale the Dask workers by ``delta`` (never below one while there are tasks), then
        recreate lost tasks and refresh. Returns the tasks recreated."""
        if self.handle.closed:
            self.show_closed()
            return []
        floor = 1 if self.handle.tasks() else 0
        n = max(floor, self.target_workers + delta)
        try:
            recreated = self.handle.scale(n)
        except Exception as e:  # noqa: BLE001 - shown in the widget, the kernel stays usable
            self.message.value = f"<span style='color:#d62728'>{html.escape(str(e))}</span>"
            self.refresh()
            return []
        self.message.value = f"recreated {html.escape(', '.join(recreated))}" if recreated else ""
        self.refresh()
        return recreated

    def refresh(self) -> dict[str, Any]:
        if self.handle.closed:
            self.show_closed()
            return self.state
        self.state = {**cluster_state(self.handle), "closed": False}
        self.header.value = render_header(self.state)
        self.task_table.value = render_tasks(self.state)
        self.table.value = render_workers(self.state)
        return self.state
