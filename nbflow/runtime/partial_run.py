"""``Session.partial_run``: one step taken in pieces, each op run at most once.

``partial_run_setup(fetches, feeds)`` names every tensor (or op) the pieces will fetch and every
tensor they will feed; each ``partial_run(handle, fetches, feed_dict)`` then feeds some of them
and fetches some, running only what those fetches need that no earlier piece ran, so a value
fed or computed in one piece is seen by the next as it was (a random draw, a dequeued batch).
TensorFlow keeps one executor alive across the pieces. nbflow runs each piece as an ordinary
step of the session (``Session.run``), chosen so that nothing runs twice:

- **Feeds**: the piece's own feeds, plus each value an earlier piece fed or *kept* that this
  piece's ops read. A step is pruned at a fed tensor, so what computed it does not run again.
- **Fetches**: what the caller asked for, plus the *frontier*: the outputs of ops this piece
  runs that ops of a later piece will read (walking back from the fetches not made yet,
  stopping at values already known and at this piece's ops). Their values are kept.

For example, with ``r1 = a + b`` and ``r2 = r1 * c``, a piece feeding ``a`` and ``b`` and fetching
``r1`` runs the Add; the next, feeding ``c`` and fetching ``r2``, is the step "``r1`` fed, ``c``
fed, fetch ``r2``": only the Mul runs.

What a step cannot be told: a control edge. A later piece whose ops depend, through a control
input, on a stateful op an earlier piece ran would run that op again, so such a piece raises
``UnimplementedError`` naming it instead (TensorFlow 2.21 cancels such a piece).

As TensorFlow, with its messages: a fetch or feed not named at setup, a tensor fetched or fed
twice, or a handle this session does not know (or whose fetches were all made) is
``InvalidArgumentError``.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from nbflow import errors
from nbflow.framework.ops import Operation, Tensor
from nbflow.framework.sparse_tensor import SparseTensor
from nbflow.runtime.signature import FetchHandler, convert_feeds

if TYPE_CHECKING:
    from nbflow.runtime.session import BaseSession

_handles = itertools.count(1)


def new_handle() -> str:
    """A partial run's handle, unique in this process (TensorFlow's are strings too)."""
    return f"nbflow-partial-run-{next(_handles)}"


class PartialRun:
    """The state of one partial run: what may be fetched and fed, what was, and the values
    the pieces produced that later pieces read (see the module docstring)."""

    def __init__(self, session: BaseSession, fetches: Any, feeds: Any) -> None:
        graph = session.graph
        planned = FetchHandler(graph, fetches)
        self._session = session
        self._allowed_fetches: set[Tensor | Operation] = {*planned.tensors, *planned.targets}
        self._allowed_feeds: set[Tensor] = set()
        for feed in feeds or ():
            if isinstance(feed, SparseTensor):  # fed as its three component tensors
                self._allowed_feeds.update((feed.indices, feed.values, feed.dense_shape))
            else:
                self._allowed_feeds.add(
                    graph.as_graph_element(feed, allow_tensor=True, allow_operation=False)
                )
        self._fetched: set[Tensor | Operation] = set()
        self._known: dict[Tensor, Any] = {}  # fed and kept values, for later pieces
        self._ran: set[Operation] = set()

    def run(self, fetches: Any, feed_dict: dict | None) -> Any:
        graph = self._session.graph
        handler = FetchHandler(graph, fetches)
        wanted: list[Tensor | Operation] = [*handler.tensors, *handler.targets]
        for element in wanted:
            if element not in self._allowed_fetches:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {element.name} was not specified in partial_run_setup."
                )
            if element in self._fetched:
                raise errors.InvalidArgumentError(
                    None, None, f"The fetch {element.name} has already been fetched."
                )
        fed_tensors, fed_values = convert_feeds(graph, {}, feed_dict or {})
        for tensor in fed_tensors:
            if tensor not in self._allowed_feeds:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {tensor.name} was not specified in partial_run_setup."
                )
            if tensor in self._known:
                raise errors.InvalidArgumentError(
                    None, None, f"The feed {tensor.name} has already been fed."
                )
        known = {**self._known, **dict(zip(fed_tensors, fed_values))}
        runs, reads = _ops_needed(wanted, known)
        again = sorted(op.name for op in runs & self._ran if op.op_def.stateful)
        if again:
            raise errors.UnimplementedError(
                None,
                None,
                f"partial_run would run {', '.join(again)} a second time: a control "
                "dependency reaches it from this piece's fetches. Fetch what depends on it "
                "in the piece that runs it.",
            )
        later = [e for e in self._allowed_fetches if e not in self._fetched and e not in wanted]
        frontier = _frontier(later, known, runs)
        extra = [t for t in frontier if t not in handler.tensors]
        fetch_list: list[Any] = [*handler.tensors, *extra, *handler.targets]
        feeds = {t: known[t] for t in reads}
        feeds.update(zip(fed_tensors, fed_values))
        values = self._session.run(fetch_list, feeds) if fetch_list else []
        tensor_values = values[: len(handler.tensors) + len(extra)]
        for tensor, value in zip([*handler.tensors, *extra], tensor_values):
            self._known[tensor] = value
        self._known.update(zip(fed_tensors, fed_values))
        self._ran |= runs
        self._fetched.update(wanted)
        return handler.build(tuple(values[: len(handler.tensors)]))

    @property
    def done(self) -> bool:
        """Whether every fetch named at setup has been made (the run's state can go)."""
        return self._fetched >= self._allowed_fetches


def _ops_needed(
    wanted: list[Tensor | Operation], known: dict[Tensor, Any]
) -> tuple[set[Operation], set[Tensor]]:
    """The ops a step fetching ``wanted`` with ``known`` fed runs (inputs followed back to a
    fed tensor, control inputs always), and the fed tensors they read."""
    runs: set[Operation] = set()
    reads: set[Tensor] = set()
    stack: list[Operation] = []
    for element in wanted:
        if isinstance(element, Tensor):
            if element in known:
                reads.add(element)
                continue
            element = element.op
        stack.append(element)
    while stack:
        op = stack.pop()
        if op in runs:
            continue
        runs.add(op)
        for tensor in op.inputs:
            if tensor in known:
                reads.add(tensor)
            else:
                stack.append(tensor.op)
        stack.extend(op.control_inputs)
    return runs, reads


def _frontier(
    later: list[Tensor | Operation], known: dict[Tensor, Any], runs: set[Operation]
) -> list[Tensor]:
    """Outputs of ``runs`` (this piece's ops) that the ops of ``later`` fetches read: walking
    back from those fetches, stopping at known values and at this piece's ops."""
    frontier: dict[Tensor, None] = {}
    seen: set[Operation] = set()
    stack: list[Operation] = []
    for element in later:
        if isinstance(element, Tensor):
            if element in known:
                continue
            if element.op in runs:
                frontier[element] = None
                continue
            element = element.op
        if element not in runs:
            stack.append(element)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        for tensor in op.inputs:
            if tensor in known:
                continue
            if tensor.op in runs:
                frontier[tensor] = None
            else:
                stack.append(tensor.op)
        stack.extend(c for c in op.control_inputs if c not in runs)
    return list(frontier)
