"""Cell-scoped graph building: what a ``%%dataflow`` cell built, and rebuilding it in place.

A notebook is edited out of order, so a cell is run many times. ``build_cell`` remembers, per
(graph, cell key), the ops a cell created. Re-running the cell first removes those ops (their
names are released, so the rebuilt ops get the same names: no ``MatMul_7`` after seven runs),
then runs the new code and compares old and new (a ``GraphDiff``). Ops of *other* cells that
consumed the removed ops are re-wired to the new ops of the same name when dtype and shape still
fit; when they do not, those ops (and what depends on them) are removed and ``StaleCellsError``
names the cells that must be re-run.

The cell code is compiled with the filename ``<dataflow-cell KEY>``, so every op's recorded
creation site (``Operation.traceback``) says which cell and line made it.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework.graph_def import encode_attr
from nbflow.framework.ops import Graph, Operation, Tensor
from nbflow.runtime.session import Session

CELL_FILENAME_PREFIX = "<dataflow-cell "


@dataclass(frozen=True)
class CellSource:
    """The code of one cell run: its key, source text and the magic's arguments."""

    key: str
    source: str
    arguments: str = ""

    @property
    def filename(self) -> str:
        return f"{CELL_FILENAME_PREFIX}{self.key}>"


@dataclass(frozen=True)
class GraphDiff:
    """How a cell's ops changed between two runs, by op name."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    rewired: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        parts = [f"+{len(self.added)} added", f"-{len(self.removed)} removed"]
        parts.append(f"~{len(self.changed)} changed")
        if self.rewired:
            parts.append(f"{len(self.rewired)} consumers re-wired")
        return ", ".join(parts)


@dataclass
class CellRecord:
    """What one cell built in one graph the last time it ran."""

    key: str
    graph: Graph
    ops: list[Operation] = field(default_factory=list)
    source: CellSource | None = None
    runs: int = 0


@dataclass(frozen=True)
class CellBuild:
    """The result of one ``build_cell``: the cell, its graph, its ops, the diff to last run."""

    cell: CellSource
    graph_name: str
    graph: Graph
    ops: tuple[Operation, ...]
    diff: GraphDiff
    run: int
    result: Any = None

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return display.cell_build_mimebundle(self)


class StaleCellsError(RuntimeError):
    """Other cells consumed ops this cell no longer builds; they were removed and must re-run."""

    def __init__(self, cell_key: str, stale: dict[str, list[str]]):
        self.cell_key = cell_key
        self.stale = stale
        lines = [
            f"  re-run cell {owner!r}: it used {', '.join(sorted(names)[:5])}"
            for owner, names in sorted(stale.items())
        ]
        super().__init__(
            f"Cell {cell_key!r} no longer builds (with the same dtype and shape) ops that other "
            "cells consumed; their dependent ops were removed from the graph:\n" + "\n".join(lines)
        )


class NotebookGraphs:
    """The named graphs of one notebook and, per graph, what each cell built.

    The name "default" always means nbflow's current default graph, so plain cells and
    ``%%dataflow`` cells share it (and ``tf.reset_default_graph()`` starts over).
    """

    def __init__(self) -> None:
        self._graphs: dict[str, Graph] = {}
        self._records: dict[tuple[int, str], CellRecord] = {}
        self._sessions: dict[int, Any] = {}
        self.last_values: dict[str, Any] = {}  # tensor name -> value fetched by the last run
        self._lock = threading.RLock()

    def graph(self, name: str = "default") -> Graph:
        if name == "default":
            return ops_lib.get_default_graph()
        with self._lock:
            if name not in self._graphs:
                self._graphs[name] = Graph()
            return self._graphs[name]

    def names(self) -> list[str]:
        return ["default", *sorted(self._graphs)]

    def record(self, graph: Graph, key: str) -> CellRecord | None:
        return self._records.get((id(graph), key))

    def records(self, graph: Graph) -> list[CellRecord]:
        return [r for (gid, _), r in self._records.items() if gid == id(graph) and r.graph is graph]

    def owner_of(self, op: Operation) -> str:
        """The key of the cell that built ``op``, from its recorded creation site."""
        return cell_key_of(op) or _describe_site(op)

    def session(self, graph: Graph) -> Any:
        """The notebook's session for ``graph`` (created on first use, kept across cells)."""
        with self._lock:
            sess = self._sessions.get(id(graph))
            if sess is None or sess._closed or sess.graph is not graph:
                sess = self._sessions[id(graph)] = Session(graph=graph)
            return sess

    def close(self) -> None:
        for sess in self._sessions.values():
            sess.close()
        self._sessions.clear()


_GRAPHS = NotebookGraphs()


def notebook_graphs() -> NotebookGraphs:
    """The notebook's named graphs, cell records, sessions and last fetched values."""
    return _GRAPHS


def cell_key_of(op: Operation) -> str | None:
    """The cell key in an op's creation site, or None when it was not built by a cell."""
    site = op.traceback
    if site and site[0].startswith(CELL_FILENAME_PREFIX):
        return site[0][len(CELL_FILENAME_PREFIX) : -1]
    return None


def _describe_site(op: Operation) -> str:
    site = op.traceback
    return f"{site[0]}:{site[1]}" if site else "unknown code"


def default_cell_key(source: str) -> str:
    """A fallback key: the cell's first non-blank line (stable while the body is edited)."""
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:80]
    return "empty-" + hashlib.sha1(source.encode()).hexdigest()[:8]


@contextmanager
def collect_ops(graph: Graph) -> Iterator[list[Operation]]:
    """Collect the ops this thread creates in ``graph`` inside the block."""
    created: list[Operation] = []
    thread = threading.get_ident()

    def observe(op: Operation) -> None:
        if threading.get_ident() == thread:
            created.append(op)

    graph._op_observers.append(observe)
    try:
        yield created
    finally:
        graph._op_observers.remove(observe)


def build_cell(
    source: str,
    namespace: dict[str, Any],
    *,
    graphs: NotebookGraphs,
    key: str | None = None,
    graph: str = "default",
    device: str | None = None,
    scope: str | None = None,
    arguments: str = "",
) -> CellBuild:
    """Run a cell's code with a notebook graph as default graph, replacing its last build.

    The last expression's value, if any, is returned as ``CellBuild.result``.
    """
    cell = CellSource(key or default_cell_key(source), source, arguments)
    target = graphs.graph(graph)
    # A MonitoredTrainingSession finalizes its graph, as TensorFlow does; in a notebook the
    # next cell must still be able to build (an evaluation op, a re-run of a model cell).
    target._unsafe_unfinalize()
    record = graphs.record(target, cell.key)
    previous = list(record.ops) if record else []
    old_nodes = {op.name: _signature(op) for op in previous}
    consumers = _external_consumers(previous)
    doomed = set(previous)
    bound = {  # old tensors other cells may have used through a notebook variable
        name: value
        for name, value in namespace.items()
        if isinstance(value, Tensor) and value.op in doomed
    }
    if previous:
        target._remove_ops(previous)
    code, last_expr = _compile(cell)
    result = None
    with ExitStack() as stack:
        stack.enter_context(target.as_default())
        if device:
            stack.enter_context(target.device(device))
        if scope:
            stack.enter_context(target.name_scope(scope))
        created = stack.enter_context(collect_ops(target))
        error: BaseException | None = None
        try:
            exec(code, namespace)
            if last_expr is not None:
                result = eval(last_expr, namespace)
        except BaseException as e:  # noqa: BLE001 - re-raised below, after re-wiring
            error = e
        built = list(created)
    if record is None:
        record = CellRecord(cell.key, target)
        graphs._records[(id(target), cell.key)] = record
    record.ops, record.source = built, cell
    record.runs += 1
    new_nodes = {op.name: _signature(op) for op in built}
    fresh = set(built)
    replacements = {
        old: namespace[name]
        for name, old in bound.items()
        if isinstance(namespace.get(name), Tensor) and namespace[name].op in fresh
    }
    rewired, stale = _rewire(target, consumers, graphs, replacements)
    if error is not None:
        raise error
    diff = GraphDiff(
        added=tuple(n for n in new_nodes if n not in old_nodes),
        removed=tuple(n for n in old_nodes if n not in new_nodes),
        changed=tuple(n for n in new_nodes if n in old_nodes and old_nodes[n] != new_nodes[n]),
        rewired=tuple(rewired),
    )
    if stale:
        raise StaleCellsError(cell.key, stale)
    return CellBuild(cell, graph, target, tuple(built), diff, record.runs, result)


def _compile(cell: CellSource) -> tuple[Any, Any]:
    """Compile the cell body; a trailing expression is compiled separately to return it."""
    linecache.cache[cell.filename] = (
        len(cell.source),
        None,
        cell.source.splitlines(True),
        cell.filename,
    )
    tree = ast.parse(cell.source, filename=cell.filename)
    last_expr = None
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
        expr = ast.Expression(last.value)
        last_expr = compile(expr, cell.filename, "eval")
    return compile(tree, cell.filename, "exec"), last_expr


def _signature(op: Operation) -> tuple:
    attrs = {}
    for k, v in op.attrs.items():
        try:
            attrs[k] = repr(encode_attr(v))
        except TypeError:
            attrs[k] = repr(v)
    inputs = tuple(t.name for t in op.inputs) + tuple("^" + c.name for c in op.control_inputs)
    return (op.type, inputs, op.device, tuple(sorted(attrs.items())))


@dataclass
class _Consumer:
    op: Operation
    inputs: list[tuple[int, Tensor]]  # (position, removed tensor)
    controls: list[Operation]  # removed control inputs


def _external_consumers(previous: Sequence[Operation]) -> list[_Consumer]:
    doomed = set(previous)
    found: dict[Operation, _Consumer] = {}
    for op in previous:
        for t in op.outputs:
            for c in t.consumers():
                if c not in doomed:
                    entry = found.setdefault(c, _Consumer(c, [], []))
                    entry.inputs.extend((i, t) for i, x in enumerate(c._inputs) if x is t)
        for c in op._control_outputs:
            if c not in doomed:
                found.setdefault(c, _Consumer(c, [], [])).controls.append(op)
    for entry in found.values():
        entry.inputs = sorted(set(entry.inputs), key=lambda p: p[0])
    return list(found.values())


def _rewire(
    graph: Graph,
    consumers: list[_Consumer],
    graphs: NotebookGraphs,
    replacements: dict[Tensor, Tensor],
) -> tuple[list[str], dict[str, list[str]]]:
    """Point other cells' ops at the rebuilt ops, or remove them as stale.

    A removed tensor is replaced by what the notebook variable that held it holds now (other
    cells used it through that name), else by the rebuilt tensor of the same name.
    """
    rewired: list[str] = []
    stale_ops: list[Operation] = []
    missing: dict[Operation, list[str]] = {}
    for entry in consumers:
        plan: list[tuple[int, Tensor]] = []
        for pos, old in entry.inputs:
            new = replacements.get(old)
            if new is None:
                new = _find_tensor(graph, old.name)
            if new is None or new.dtype != old.dtype or not new.shape.is_compatible_with(old.shape):
                missing.setdefault(entry.op, []).append(old.name)
            else:
                plan.append((pos, new))
        new_controls = []
        for old_op in entry.controls:
            try:
                new_controls.append(graph.get_operation_by_name(old_op.name))
            except KeyError:
                missing.setdefault(entry.op, []).append("^" + old_op.name)
        if entry.op in missing:
            stale_ops.append(entry.op)
            continue
        op = entry.op
        for pos, new in plan:
            op._inputs[pos] = new
            new._consumers.append(op)
        gone = set(entry.controls)
        op._control_inputs = [c for c in op._control_inputs if c not in gone]
        for c in new_controls:
            if c not in op._control_inputs:
                op._control_inputs.append(c)
                c._control_outputs.append(op)
        rewired.append(op.name)
    if rewired:
        graph._mutated()
    if not stale_ops:
        return rewired, {}
    doomed = _downstream(stale_ops)
    stale: dict[str, list[str]] = {}
    for op in doomed:
        stale.setdefault(graphs.owner_of(op), []).extend(missing.get(op, []))
    graph._remove_ops(list(doomed))
    for record in graphs.records(graph):
        record.ops = [op for op in record.ops if op not in doomed]
    return rewired, stale


def _find_tensor(graph: Graph, name: str) -> Tensor | None:
    try:
        return graph.get_tensor_by_name(name)
    except (KeyError, ValueError):
        return None


def _downstream(roots: Sequence[Operation]) -> list[Operation]:
    seen: dict[Operation, None] = {}
    stack = list(roots)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen[op] = None
        for t in op.outputs:
            stack.extend(t.consumers())
        stack.extend(op._control_outputs)
    return list(seen)


# The rich display of a cell's build renders with the cells' helpers above.
from nbflow.notebook import display  # noqa: E402
