"""HTTP routes of the board: the logs of a root directory as JSON, behind Jupyter's auth.

All routes live under ``{base_url}nbflow/api/`` and take paths as query arguments relative to
the board root (``logdir``, then ``run`` relative to the logdir). Series routes are incremental:
``offset`` says how many points the client already has, ``next_offset`` where to ask next time.

    GET root                                   {"root"}
    GET runs?logdir=                           {"logdir", "runs": [{"name", "tags", "hparams"}]}
                                               hparams: {name: number | string | bool}, the
                                               run's TensorBoard HParams session_start_info
    GET tags?logdir=&run=                      {"run", "tags"}
                                               tags["warnings"]: [{"file", "offset", "message"}]
    GET scalars?logdir=&run=&tag=&offset=&max_points=
                                               {"run", "tag", "offset", "next_offset", "total",
                                                "downsampled", "steps", "wall_times", "values"}
    GET histograms?logdir=&run=&tag=&offset=   as scalars; values are histograms
    GET images?logdir=&run=&tag=&offset=       as scalars; values are {"index", "width", "height"}
    GET image?logdir=&run=&tag=&index=         the encoded image bytes
    GET graph?logdir=&run=                     {"run", "graph_def"}
    GET traces?logdir=&run=                    {"run", "traces": [names]}
    GET trace?logdir=&run=&name=               Chrome trace JSON

Every handler is an ``APIHandler`` method under ``@tornado.web.authenticated``: without a valid
token or cookie the answer is 403. Paths that escape the root are refused with 403 as well, and
so is a run whose event files are symlinks to files outside it. Damaged logs never fail a route:
the reader skips what it cannot read and the run lists it under ``warnings`` (file, offset).

``logdir`` may also name a ``.pb``/``.pbtxt``/``.meta`` graph file, and a ``.pb``/``.pbtxt``
inside a log directory is a run of its own with only a graph (``nbflow.summary.graph_files``):
the graph tab draws any TF1 model's graph. A file that is no GraphDef gives its run a warning;
the graph route then answers 404, as for a run without a graph.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from nbflow.summary.graph_files import is_graph_file
from nbflow.board.logdir import LogCache, LogDirectory
from nbflow.board.paths import PathRefused, resolve_inside
from nbflow.board.series import downsample_min_max, histogram_json, number_json
from nbflow.summary.reader import RunData

MAX_POINTS_LIMIT = 100_000

_IMAGE_TYPES = [
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"RIFF", "image/webp"),
]


class BoardHandler(APIHandler):
    """Shared argument parsing: root-relative paths, the log directory, runs, offsets."""

    @property
    def root(self) -> str:
        return self.settings["nbflow_board_root"]

    @property
    def cache(self) -> LogCache:
        return self.settings["nbflow_board_cache"]

    def inside(self, base: str | Path, relative: str) -> Path:
        try:
            return resolve_inside(base, relative)
        except PathRefused as e:
            raise tornado.web.HTTPError(403, str(e)) from e

    def logdir(self) -> LogDirectory:
        name = self.get_argument("logdir", ".")
        path = self.inside(self.root, name)
        if not path.is_dir() and not (path.is_file() and is_graph_file(path.name)):
            raise tornado.web.HTTPError(
                404, f"log directory {name!r} does not exist (nor is it a .pb/.pbtxt/.meta file)"
            )
        return self.cache.get(path)

    def run(self) -> tuple[LogDirectory, str]:
        """The log directory and the run's canonical name ("." for the directory itself)."""
        logdir = self.logdir()
        run = self.get_argument("run", ".")
        path = self.inside(logdir.path, run)
        if path != logdir.path and logdir.path not in path.parents:
            raise tornado.web.HTTPError(403, f"run {run!r} resolves outside its log directory")
        name = path.relative_to(logdir.path).as_posix()
        if not logdir.has_events(name):  # maybe new since the last (throttled) reload
            logdir.reload(force=True)
        if logdir.refused(name):
            raise tornado.web.HTTPError(
                403, f"run {name!r}: its event files link outside the board root"
            )
        if name not in logdir.runs():
            raise tornado.web.HTTPError(
                404, f"no run {run!r} in {self.get_argument('logdir', '.')!r}"
            )
        return logdir, name

    def run_data(self) -> RunData:
        logdir, name = self.run()
        if not logdir.has_events(name):
            raise tornado.web.HTTPError(404, f"run {name!r} has no event files")
        return logdir.reader.run(name)

    def int_argument(self, name: str, default: int) -> int:
        try:
            return max(0, int(self.get_argument(name, str(default))))
        except ValueError as e:
            raise tornado.web.HTTPError(400, f"{name} must be a non-negative integer") from e

    def tagged(self, store: dict[str, Any]) -> tuple[str, Any]:
        tag = self.get_argument("tag")
        if tag not in store:
            raise tornado.web.HTTPError(
                404, f"no tag {tag!r} in run {self.get_argument('run', '.')!r}"
            )
        return tag, store[tag]

    def offset(self, total: int) -> int:
        """Where the client wants to continue; past the end (a restarted run) starts over."""
        offset = self.int_argument("offset", 0)
        return 0 if offset > total else offset

    def write_json(self, body: Any) -> None:
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(body, allow_nan=False))


class RootHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        self.write_json({"root": str(Path(self.root).resolve())})


class RunsHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        logdir = self.logdir().reload(force=True)  # one per poll: the listing is always fresh
        runs = [
            {"name": name, "tags": logdir.tags(name), "hparams": logdir.hparams(name)}
            for name in logdir.runs()
        ]
        self.write_json({"logdir": self.get_argument("logdir", "."), "runs": runs})


class TagsHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        logdir, name = self.run()
        self.write_json({"run": name, "tags": logdir.tags(name)})


def _page(run: str, tag: str, offset: int, total: int) -> dict[str, Any]:
    return {"run": run, "tag": tag, "offset": offset, "next_offset": total, "total": total}


class ScalarsHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        tag, points = self.tagged(self.run_data().scalars_raw)
        points = list(points)
        offset = self.offset(len(points))
        max_points = min(self.int_argument("max_points", MAX_POINTS_LIMIT), MAX_POINTS_LIMIT)
        page = points[offset:]
        values = np.array([p[2] for p in page], dtype=np.float64)
        keep = downsample_min_max(values, max_points)
        self.write_json(
            {
                **_page(self.get_argument("run", "."), tag, offset, len(points)),
                "downsampled": len(keep) < len(page),
                "steps": [int(page[i][0]) for i in keep],
                "wall_times": [float(page[i][1]) for i in keep],
                "values": [number_json(float(page[i][2])) for i in keep],
            }
        )


class HistogramsHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        tag, values = self.tagged(self.run_data().histograms)
        values = list(values)
        offset = self.offset(len(values))
        page = values[offset:]
        self.write_json(
            {
                **_page(self.get_argument("run", "."), tag, offset, len(values)),
                "steps": [int(h.step) for h in page],
                "wall_times": [float(h.wall_time) for h in page],
                "values": [histogram_json(h) for h in page],
            }
        )


class ImagesHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        tag, values = self.tagged(self.run_data().images)
        values = list(values)
        offset = self.offset(len(values))
        page = values[offset:]
        self.write_json(
            {
                **_page(self.get_argument("run", "."), tag, offset, len(values)),
                "steps": [int(im.step) for im in page],
                "wall_times": [float(im.wall_time) for im in page],
                "values": [
                    {"index": offset + i, "width": im.width, "height": im.height}
                    for i, im in enumerate(page)
                ],
            }
        )


class ImageHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        _, values = self.tagged(self.run_data().images)
        index = self.int_argument("index", 0)
        if index >= len(values):
            raise tornado.web.HTTPError(404, f"image index {index} of {len(values)}")
        data = values[index].png
        content_type = next((t for magic, t in _IMAGE_TYPES if data.startswith(magic)), None)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.finish(data, set_content_type=content_type or "application/octet-stream")


class GraphHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        logdir, name = self.run()
        graph = logdir.graph(name)
        if graph is None:
            raise tornado.web.HTTPError(404, f"run {self.get_argument('run', '.')!r} has no graph")
        self.write_json({"run": self.get_argument("run", "."), "graph_def": graph})


class TracesHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        logdir, name = self.run()
        self.write_json({"run": name, "traces": logdir.trace_names(name)})


class TraceHandler(BoardHandler):
    @tornado.web.authenticated
    def get(self) -> None:
        logdir, run = self.run()
        name = self.get_argument("name")
        if "/" in name or "\\" in name or name.startswith("."):
            raise tornado.web.HTTPError(403, f"trace name {name!r} is not a plain file name")
        try:
            trace = logdir.trace(run, name)
        except PathRefused as e:
            raise tornado.web.HTTPError(403, str(e)) from e
        except (KeyError, FileNotFoundError) as e:
            raise tornado.web.HTTPError(404, f"no trace {name!r} in run {run!r}") from e
        except ValueError as e:
            raise tornado.web.HTTPError(422, f"trace {name!r} is not valid JSON: {e}") from e
        self.write_json(trace)


ROUTES = {
    "root": RootHandler,
    "runs": RunsHandler,
    "tags": TagsHandler,
    "scalars": ScalarsHandler,
    "histograms": HistogramsHandler,
    "images": ImagesHandler,
    "image": ImageHandler,
    "graph": GraphHandler,
    "traces": TracesHandler,
    "trace": TraceHandler,
}


def setup_handlers(web_app: tornado.web.Application, root: str) -> None:
    """Add the board's routes under the server's base URL."""
    base_url = web_app.settings["base_url"]
    web_app.settings["nbflow_board_root"] = root
    web_app.settings["nbflow_board_cache"] = LogCache(root)
    handlers = [
        (url_path_join(base_url, "nbflow", "api", name), handler)
        for name, handler in ROUTES.items()
    ]
    web_app.add_handlers(".*$", handlers)
