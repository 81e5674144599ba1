"""IPython magics: ``%%dataflow`` and the ``%dataflow_*`` line magics. Thin: logic lives in
``cells.build_cell``, the widgets and ``board``/``cluster``; these parse options and display.

    %load_ext nbflow
    %%dataflow --name layer1 --scope layer1
    w = tf.Variable(tf.zeros([784, 100]))
    h = tf.nn.relu(tf.matmul(x, w))
"""

from __future__ import annotations

import ast
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from nbflow.notebook.board import board_display
from nbflow.notebook.cells import (
    NotebookGraphs,
    StaleCellsError,
    build_cell,
    default_cell_key,
    notebook_graphs,
)
from nbflow.notebook.widgets.graph import GraphWidget
from nbflow.ops.variables import global_variables, variables_initializer


# A named ``%%dataflow`` cell's key -> the front end's id of the cell (``sources`` links its ops)
named_cell_ids: dict[str, str] = {}


def cell_id(shell: Any) -> str | None:
    """The front end's id of the executing cell (JupyterLab and nbclient send ``cellId``)."""
    header = getattr(shell, "parent_header", None) or {}
    metadata = header.get("metadata") or {}
    return metadata.get("cellId") or metadata.get("cell_id")


def flatten_fetches(fetches: Any, values: Any) -> list[tuple[Any, Any]]:
    """Pairs (fetch, value) for every leaf of a nested fetch structure."""
    if isinstance(fetches, dict):
        return [p for k in fetches for p in flatten_fetches(fetches[k], values[k])]
    if isinstance(fetches, (list, tuple)):
        return [p for f, v in zip(fetches, values) for p in flatten_fetches(f, v)]
    return [(fetches, values)]


def run_fetches(
    graphs: NotebookGraphs,
    graph_name: str,
    fetches: Any,
    feed: dict[Any, Any] | None,
    init: bool = False,
) -> Any:
    """Run ``fetches`` in the notebook's session of the graph; remember values for the view."""
    graph = graphs.graph(graph_name)
    sess = graphs.session(graph)
    if init:
        with graph.as_default():
            init_op = variables_initializer(global_variables())
        try:
            sess.run(init_op)
        finally:
            graph._remove_ops([init_op])  # a one-off op; keep the notebook's graph clean
    values = sess.run(fetches, feed_dict=feed)
    for fetch, value in flatten_fetches(fetches, values):
        name = getattr(fetch, "name", None)
        if isinstance(name, str) and value is not None:
            graphs.last_values[name] = value
    return values


@magics_class
class DataflowMagics(Magics):
    """The nbflow magics; ``%load_ext nbflow`` registers them."""

    shell: InteractiveShell  # set by IPython when it registers the magics

    @magic_arguments()
    @argument("--name", "-n", default=None, help="stable key of this cell (default: cell id)")
    @argument("--graph", "-g", default="default", help="notebook graph to build into")
    @argument("--device", "-d", default=None, help="device scope for the cell, e.g. /cpu:0")
    @argument("--scope", "-s", default=None, help="name scope for the cell's ops")
    @argument("--show", dest="show", action="store_true", default=True, help="show the graph")
    @argument("--no-show", dest="show", action="store_false", help="do not show the graph")
    @argument("--run", "-r", default=None, help="expression of fetches to run after building")
    @argument("--feed", "-f", default=None, help="expression of a feed dict for --run")
    @argument("--init", action="store_true", help="initialize global variables before --run")
    @cell_magic
    def dataflow(self, line: str, cell: str) -> Any:
        """Run the cell with a notebook graph as default graph; show what it built.

        Re-running the cell replaces the ops it built last time (same names, no duplicates)
        and shows a diff; other cells' ops that used them are re-wired to the new ops.
        """
        args = parse_argstring(self.dataflow, line)
        graphs = notebook_graphs()
        source = self.shell.transform_cell(cell) if self.shell else cell
        key = args.name or cell_id(self.shell) or default_cell_key(cell)
        if args.name and cell_id(self.shell):
            named_cell_ids[args.name] = cell_id(self.shell)  # type: ignore[assignment]
        try:
            built = build_cell(
                source,
                self.shell.user_ns,
                graphs=graphs,
                key=key,
                graph=args.graph,
                device=args.device,
                scope=args.scope,
                arguments=line,
            )
        except StaleCellsError as e:
            raise UsageError(str(e)) from None
        if args.show:
            display(built)
        if args.run:
            fetches = self._eval(args.run, "--run")
            feed = self._eval(args.feed, "--feed") if args.feed else None
            return run_fetches(graphs, args.graph, fetches, feed, args.init)
        return built.result

    def _eval(self, expression: str, option: str) -> Any:
        expression = _unquote(expression)
        try:
            return eval(expression, self.shell.user_ns)
        except Exception as e:
            raise UsageError(f"{option} {expression!r}: {type(e).__name__}: {e}") from None

    @magic_arguments()
    @argument("name", nargs="?", default="default", help="which notebook graph to show")
    @argument("--expand", "-e", action="append", default=[], help="scope to expand (repeatable)")
    @argument("--color-by", default="device", choices=["device", "structure"], help="node colour")
    @line_magic
    def dataflow_graph(self, line: str) -> Any:
        """Show a notebook graph in the graph widget (scopes collapsed, click for details)."""
        args = parse_argstring(self.dataflow_graph, line)
        graphs = notebook_graphs()
        if args.name not in graphs.names():
            raise UsageError(f"no notebook graph {args.name!r}; graphs: {graphs.names()}")
        expanded = [s.rstrip("/") for s in args.expand]
        return GraphWidget(
            graphs.graph(args.name),
            title=f"graph {args.name!r}",
            color_by=args.color_by,
            expanded=expanded,
        )

    @magic_arguments()
    @argument("logdir", help="log directory (event files of one or more runs)")
    @line_magic
    def dataflow_board(self, line: str) -> Any:
        """Open the nbflow Board (JupyterLab panel) on a log directory."""
        args = parse_argstring(self.dataflow_board, line)
        return board_display(_unquote(args.logdir))

    @magic_arguments()
    @argument("--ps", "-p", type=int, default=None, help="ps tasks (default 1)")
    @argument("--workers", "-w", type=int, default=None, help="worker tasks (default 1)")
    @argument(
        "--n-workers",
        "-n",
        type=int,
        default=None,
        help="Dask worker processes: start with N (default one per task) or scale to N",
    )
    @argument("--threads", "-t", type=int, default=1, help="threads per Dask worker")
    @argument("--address", "-a", default=None, help="attach to an existing Dask scheduler")
    @argument("--close", action="store_true", help="close the notebook's cluster")
    @line_magic
    def dataflow_cluster(self, line: str) -> Any:
        """Show the notebook's nbflow cluster (``nbflow.distributed.Cluster``): its ps/worker
        tasks on Dask workers, their devices and health, the Dask dashboard link and scale
        buttons. Creates a small local one if there is none (``--ps 1 --workers 2``), or
        attaches to a scheduler with ``--address``; on an existing cluster ``--n-workers``
        scales the Dask workers and ``--ps``/``--workers`` add missing tasks."""
        from nbflow.notebook import cluster  # Dask's distributed loads here, not with the magics

        args = parse_argstring(self.dataflow_cluster, line)
        if args.close:
            cluster.close_cluster()
            return None
        for name in ("ps", "workers", "n_workers"):
            value = getattr(args, name)
            if value is not None and value < 0:
                raise UsageError(f"--{name.replace('_', '-')} must be >= 0")
        if args.threads < 1:
            raise UsageError("--threads must be >= 1")
        handle = cluster.get_cluster(
            n_workers=args.n_workers,
            threads=args.threads,
            address=_unquote(args.address or ""),
            ps=args.ps,
            workers=args.workers,
        )
        from nbflow.notebook.widgets.cluster import ClusterWidget

        return ClusterWidget(handle)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return ast.literal_eval(text)
    return text
