"""Training on the Dask dashboard: each task's steps, step rate, step time, Recv wait, errors.

nbflow's steps are not Dask tasks (a task's ``nbflow_run`` handler runs them, ``plugin.py``),
so Dask's task stream stays empty while nbflow trains. This module puts them where Dask users
look, through two public Dask mechanisms:

    worker                                        scheduler
    TaskHost.run ─ StepLog.record (a few adds)    NbflowDashboard (a SchedulerPlugin)
        every FLUSH_S while steps run:              log_event hook: keeps each task's row
        worker.log_event("nbflow-steps", totals) ──▶ GET /individual-nbflow-steps  HTML page
        (the worker's batched stream)               GET /json/nbflow-steps.json   the rows

``StepLog`` lives in the worker. A step adds its time and Recv wait to its task's running
totals; nothing is sent per step. While steps run, a timer on the worker's event loop sends the
totals every ``FLUSH_S`` seconds as one event (``Worker.log_event``, carried by the batched
stream the worker keeps to the scheduler); an idle worker sends nothing. Totals rather than
differences, so a lost or repeated event changes nothing; with the task's incarnation, so a
recreated task starts its count anew.

``NbflowDashboard`` lives in the scheduler (``client.register_plugin``; idempotent, so a second
client attaching keeps the rows). Its ``log_event`` hook turns totals into a row per task (steps,
steps/s between the last two events, mean step time, mean Recv wait, errors, the last error) and
its ``start`` adds two routes to the scheduler's dashboard server: an HTML page that refreshes
its table each second, and the rows as JSON. The page is listed in ``/individual-plots.json``, the
list from which dask-labextension offers its panes, as "nbflow Steps".

Dask's task stream itself takes no outside entries: its plugin records only the scheduler's own
task transitions (processing → memory), so nbflow does not pretend its steps are Dask tasks.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
import warnings
from dataclasses import asdict, dataclass
from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin
from distributed.http.scheduler.info import IndividualPlots
from distributed.http.utils import RequestHandler

TOPIC = "nbflow-steps"
FLUSH_S = 0.5  # how often a worker with steps running sends its totals
PAGE = "individual-nbflow-steps"
JSON = "json/nbflow-steps.json"
PLUGIN_NAME = "nbflow-dashboard"

logger = logging.getLogger(__name__)


# --- the worker side ---------------------------------------------------------------------------
class StepTotals:
    """One task's running totals in its worker (plain attributes: a step adds to them)."""

    __slots__ = ("incarnation", "steps", "run_s", "recv_wait_s", "errors", "last_error")

    def __init__(self, incarnation: str) -> None:
        self.incarnation = incarnation
        self.steps = 0
        self.run_s = 0.0
        self.recv_wait_s = 0.0
        self.errors = 0
        self.last_error = ""


class StepLog:
    """The steps of a worker's tasks, sent to the scheduler as totals every ``FLUSH_S``."""

    def __init__(self, worker: Any, flush_s: float = FLUSH_S):
        self.worker = worker
        self.flush_s = flush_s
        self.totals: dict[str, StepTotals] = {}  # task -> totals of its current incarnation
        self._flush_due = False

    def record(self, task: str, incarnation: str, run_s: float, recv_wait_s: float) -> None:
        """A step of ``task`` finished (on the worker's event loop: no lock needed)."""
        found = self.totals.get(task)
        if found is None or found.incarnation != incarnation:  # a task created anew
            found = self.totals[task] = StepTotals(incarnation)
        found.steps += 1
        found.run_s += run_s
        found.recv_wait_s += recv_wait_s
        if not self._flush_due:
            self._schedule()

    def record_error(self, task: str, incarnation: str, error: BaseException) -> None:
        found = self.totals.get(task)
        if found is None or found.incarnation != incarnation:
            found = self.totals[task] = StepTotals(incarnation)
        found.errors += 1
        found.last_error = f"{type(error).__name__}: {getattr(error, 'message', error)}"[:500]
        if not self._flush_due:
            self._schedule()

    def _schedule(self) -> None:
        self._flush_due = True
        asyncio.get_running_loop().call_later(self.flush_s, self.flush)

    def flush(self) -> None:
        """Send every task's totals as one event (the worker's batched stream)."""
        self._flush_due = False
        tasks = [
            {
                "task": task,
                "incarnation": t.incarnation,
                "steps": t.steps,
                "run_s": t.run_s,
                "recv_wait_s": t.recv_wait_s,
                "errors": t.errors,
                "last_error": t.last_error,
            }
            for task, t in self.totals.items()
        ]
        try:
            self.worker.log_event(TOPIC, {"tasks": tasks})
        except Exception:  # noqa: BLE001 - the worker is closing: its steps end with it
            logger.debug("nbflow step totals not sent", exc_info=True)


# --- the scheduler side ------------------------------------------------------------------------
@dataclass
class TaskRow:
    """What the dashboard shows of one task."""

    task: str
    worker: str
    incarnation: str
    steps: int = 0
    steps_per_s: float = 0.0
    mean_step_ms: float = 0.0
    mean_recv_wait_ms: float = 0.0
    errors: int = 0
    last_error: str = ""
    updated: float = 0.0  # scheduler time of the last event
    run_s: float = 0.0

    def update(self, totals: dict[str, Any], worker: str, now: float) -> None:
        elapsed = now - self.updated
        if self.updated and elapsed > 0 and totals["steps"] >= self.steps:
            self.steps_per_s = (totals["steps"] - self.steps) / elapsed
        self.worker = worker
        self.steps = int(totals["steps"])
        self.run_s = float(totals["run_s"])
        self.mean_step_ms = 1e3 * self.run_s / self.steps if self.steps else 0.0
        self.mean_recv_wait_ms = 1e3 * totals["recv_wait_s"] / self.steps if self.steps else 0.0
        self.errors = int(totals["errors"])
        self.last_error = str(totals["last_error"])
        self.updated = now


class NbflowDashboard(SchedulerPlugin):
    """Keeps each task's step row from the workers' events; serves them on the dashboard."""

    name = PLUGIN_NAME
    idempotent = True  # a client attaching later keeps the running plugin and its rows

    def __init__(self) -> None:
        self.rows: dict[str, TaskRow] = {}
        self.prefix = "/"

    async def start(self, scheduler: Any) -> None:
        application = getattr(scheduler, "http_application", None)
        if application is None:  # a scheduler without an HTTP server: events only
            return
        self.prefix = _dashboard_prefix(application)
        extra = {"dask_server": scheduler, "plugin": self}
        application.add_handlers(
            r".*",
            [(self.prefix + PAGE, StepsPage, extra), (self.prefix + JSON, StepsJSON, extra)],
        )
        # Tornado tries rules added later before the application's first handlers (its
        # catch-all rule holds them), so this answers ahead of Dask's own list.
        application.add_handlers(r".*", [(self.prefix + "individual-plots.json", PlotList, extra)])

    def log_event(self, topic: str, msg: Any) -> None:
        if topic != TOPIC or not isinstance(msg, dict):
            return
        now, worker = time.time(), str(msg.get("worker", ""))
        for totals in msg.get("tasks", ()):
            row = self.rows.get(totals["task"])
            if row is None or row.incarnation != totals["incarnation"]:
                row = self.rows[totals["task"]] = TaskRow(
                    totals["task"], worker, totals["incarnation"]
                )
            row.update(totals, worker, now)

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        for row in self.rows.values():
            if row.worker == worker:
                row.steps_per_s = 0.0
                row.last_error = row.last_error or f"Dask worker {worker} left"

    def snapshot(self) -> list[dict[str, Any]]:
        """The rows, a task stopped for two flush periods shown at 0 steps/s."""
        now = time.time()
        rows = []
        for row in sorted(self.rows.values(), key=lambda r: r.task):
            found = asdict(row)
            if now - row.updated > 2.5 * FLUSH_S:
                found["steps_per_s"] = 0.0
            rows.append(found)
        return rows


def register_dashboard(client: Any) -> None:
    """Install ``NbflowDashboard`` in the client's scheduler (kept if one runs there already).
    A scheduler that cannot import nbflow keeps training going without the page (a warning)."""
    try:
        client.register_plugin(NbflowDashboard())
    except Exception as exc:  # noqa: BLE001 - the page is optional, steps are not
        warnings.warn(
            f"nbflow's dashboard page is not installed in the Dask scheduler "
            f"{client.scheduler.address}: {type(exc).__name__}: {exc} (is nbflow importable "
            "there?); training runs without it",
            RuntimeWarning,
            stacklevel=3,
        )


def _dashboard_prefix(application: Any) -> str:
    """The prefix the scheduler serves its dashboard under (``--dashboard-prefix``), read from
    where its own ``individual-plots.json`` route is; "/" when not found."""
    for rule in getattr(application.default_router, "rules", ()):
        for inner in getattr(rule.target, "rules", ()):
            pattern = getattr(getattr(inner.matcher, "regex", None), "pattern", "")
            if pattern.endswith("individual-plots.json$"):
                return pattern[: -len("individual-plots.json$")]
    return "/"


class StepsPage(RequestHandler):
    """The page: a table of the tasks' rows."""

    def initialize(self, dask_server: Any = None, extra: Any = None, plugin: Any = None) -> None:
        super().initialize(dask_server=dask_server, extra=extra)
        self.plugin: NbflowDashboard = plugin

    def get(self) -> None:
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.write(render_page(self.plugin.snapshot()))


class StepsJSON(StepsPage):
    """The rows as JSON: ``{"tasks": [{"task": ..., "steps": ..., ...}]}``."""

    def get(self) -> None:
        self.write({"tasks": self.plugin.snapshot()})


class PlotList(IndividualPlots):
    """Dask's ``individual-plots.json`` (dask-labextension's list of panes) and the nbflow
    page, as "nbflow Steps"."""

    def initialize(self, dask_server: Any = None, extra: Any = None, plugin: Any = None) -> None:
        super().initialize(dask_server=dask_server, extra=extra)
        self.plugin: NbflowDashboard = plugin

    def write(self, chunk: Any) -> None:
        if isinstance(chunk, dict):
            chunk = {**chunk, "Individual nbflow Steps": self.plugin.prefix + PAGE}
        super().write(chunk)


COLUMNS = (
    ("task", "task", "{}"),
    ("worker", "Dask worker", "{}"),
    ("steps", "steps", "{:,}"),
    ("steps_per_s", "steps/s", "{:,.1f}"),
    ("mean_step_ms", "mean step", "{:.3f} ms"),
    ("mean_recv_wait_ms", "mean Recv wait", "{:.3f} ms"),
    ("errors", "errors", "{}"),
    ("last_error", "last error", "{}"),
)


# Each second the page fetches itself and swaps in the new table: the server alone formats
# rows, and a pane (an iframe in dask-labextension) updates without reloading or flicker.
_REFRESH = (
    "<script>setInterval(async()=>{try{const r=await fetch(location.href);"
    "const t=new DOMParser().parseFromString(await r.text(),'text/html');"
    "document.getElementById('steps').replaceWith(t.getElementById('steps'))}catch(e){}},1000)"
    "</script>"
)


def render_page(rows: list[dict[str, Any]]) -> str:
    """The page: one row per task, refreshed in place each second."""
    head = "".join(f"<th>{html.escape(title)}</th>" for _, title, _ in COLUMNS)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(fmt.format(row[key]))}</td>" for key, _, fmt in COLUMNS)
        + "</tr>"
        for row in rows
    )
    if not rows:
        body = f'<tr><td colspan="{len(COLUMNS)}">no nbflow steps yet</td></tr>'
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>nbflow steps</title><style>'
        "body{font-family:sans-serif;font-size:13px;margin:8px}"
        "table{border-collapse:collapse}th,td{padding:2px 8px;text-align:right}"
        "th:first-child,td:first-child,td:nth-child(2),td:last-child{text-align:left}"
        "tr:nth-child(even){background:#f2f2f2}</style></head><body>"
        f'<b>nbflow steps per task</b><table id="steps"><tr>{head}</tr>{body}</table>'
        f"{_REFRESH}</body></html>"
    )
