"""The cluster widget: the Dask cluster's workers (name, threads, memory, status, tasks, last
heartbeat), the Dask dashboard link, and buttons to scale and refresh."""

from __future__ import annotations

import html
import time

import ipywidgets as widgets

from nbflow.notebook.cluster import ClusterHandle


class ClusterWidget(widgets.VBox):
    def __init__(self, handle: ClusterHandle):
        self.handle = handle
        self.header = widgets.HTML()
        self.table = widgets.HTML()
        self.scale_up = widgets.Button(description="+1 worker", icon="plus")
        self.scale_down = widgets.Button(description="−1 worker", icon="minus")
        self.refresh_button = widgets.Button(description="refresh", icon="refresh")
        can_scale = handle.cluster is not None
        self.scale_up.disabled = self.scale_down.disabled = not can_scale
        self.scale_up.on_click(lambda _b: self.scale_by(1))
        self.scale_down.on_click(lambda _b: self.scale_by(-1))
        self.refresh_button.on_click(lambda _b: self.refresh())
        buttons = widgets.HBox([self.scale_up, self.scale_down, self.refresh_button])
        super().__init__([self.header, buttons, self.table])
        self.refresh()

    @property
    def target_workers(self) -> int:
        return len(self.handle.workers())

    def scale_by(self, delta: int) -> None:
        self.handle.scale(self.target_workers + delta)
        self.refresh()

    def refresh(self) -> None:
        rows = self.handle.workers()
        link = self.handle.dashboard_link
        dash = f"<a href='{html.escape(link)}' target='_blank'>Dask dashboard</a>" if link else ""
        self.header.value = (
            f"<b>Dask cluster</b> {html.escape(str(self.handle.client.scheduler.address))} — "
            f"{len(rows)} workers, {sum(r['threads'] for r in rows)} threads {dash}"
        )
        now = time.time()
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    r["name"],
                    r["address"],
                    r["threads"],
                    f"{r['memory'] / 2**20:.0f} / {r['memory_limit'] / 2**20:.0f} MiB",
                    r["status"],
                    r["tasks"],
                    f"{max(0.0, now - r['last_seen']):.1f} s ago" if r["last_seen"] else "",
                )
            )
            + "</tr>"
            for r in rows
        )
        self.table.value = (
            "<table><tr><th>worker</th><th>address</th><th>threads</th><th>memory</th>"
            f"<th>status</th><th>executing</th><th>heartbeat</th></tr>{body}</table>"
        )
