"""``Session.partial_run``: one step taken in pieces, each op run at most once.

``partial_run_setup(fetches, feeds)`` names every tensor (or op) the pieces will fetch and every
tensor they will feed; each ``partial_run(handle, fetches, feed_dict)`` then feeds some of them
and fetches some, running only what those fetches need that no earlier piece ran, so a value
fed or computed in one piece is seen by the next as it was (a random draw, a dequeued batch).
TensorFlow keeps one executor alive across the pieces. nbflow runs each piece as an ordinary
step of the session (``Session.run``), chosen so that nothing runs twice:

- **Feeds**: the piece's own feeds, plus every value an earlier piece fed or *kept*. A step is
  pruned at a fed tensor, and a control edge from an op with a fed output is met
  (``plan.prune``), so what computed those values does not run again.
- **Fetches**: what the caller asked for, plus the *frontier*: the outputs of ops this piece
  runs that ops of a later piece will read, and one output of each such op a later op reaches
  by a control edge (walking back from the fetches not made yet, stopping at values already
  known and at this piece's ops). Their values are kept.

For example, with ``r1 = a + b`` and ``r2 = r1 * c``, a piece feeding ``a`` and ``b`` and fetching
``r1`` runs the Add; the next, feeding ``c`` and fetching ``r2``, is the step "``r1`` fed, ``c``
fed, fetch ``r2``": only the Mul runs.

What no feed can stand for: a stateful op without outputs (an enqueue) that an earlier piece
ran and a later piece reaches by a control edge would run again, so such a piece raises
``UnimplementedError`` naming it instead.

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
from nbflow.runtime.plan import prune
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
            _check("fetch", element, self._allowed_fetches, self._fetched, "fetched")
        fed_tensors, fed_values = convert_feeds(graph, {}, feed_dict or {})
        for tensor in fed_tensors:
            _check("feed", tensor, self._allowed_feeds, self._known, "fed")
        known = {**self._known, **dict(zip(fed_tensors, fed_values))}
        # The step is pruned as every step is (``plan.prune``): at fed tensors, and at control
        # edges from ops with a fed output. So what it runs is exactly this.
        runs = set(prune(handler.tensors, handler.targets, list(known)))
        again = sorted(op.name for op in runs & self._ran if op.op_def.stateful)
        if again:
            raise errors.UnimplementedError(
                None,
                None,
                f"partial_run would run {', '.join(again)} a second time: a control "
                "dependency reaches it from this piece's fetches, and it has no output to "
                "stand for it. Fetch what depends on it in the piece that runs it.",
            )
        later = [e for e in self._allowed_fetches if e not in self._fetched and e not in wanted]
        extra = [t for t in _frontier(later, known, runs) if t not in handler.tensors]
        values = self._session.run([*handler.tensors, *extra, *handler.targets], known)
        kept = [*handler.tensors, *extra]
        self._known.update(zip(kept, values[: len(kept)]))
        self._known.update(zip(fed_tensors, fed_values))
        self._ran |= runs
        self._fetched.update(wanted)
        return handler.build(tuple(values[: len(handler.tensors)]))

    @property
    def done(self) -> bool:
        """Whether every fetch named at setup has been made (the run's state can go)."""
        return self._fetched >= self._allowed_fetches


def _check(kind: str, element: Any, allowed: Any, used: Any, done: str) -> None:
    """TensorFlow's refusal of a fetch or feed not named at setup, or made twice."""
    if element not in allowed:
        raise errors.InvalidArgumentError(
            None, None, f"The {kind} {element.name} was not specified in partial_run_setup."
        )
    if element in used:
        raise errors.InvalidArgumentError(
            None, None, f"The {kind} {element.name} has already been {done}."
        )


def _frontier(
    later: list[Tensor | Operation], known: dict[Tensor, Any], runs: set[Operation]
) -> list[Tensor]:
    """What of this piece (``runs``) the steps of ``later`` fetches will need from it: the
    outputs they read, and an output of each op they reach by a control edge (fed then, it
    meets the edge, as ``plan.prune`` has it). Walks back from those fetches, stopping at known
    values and at this piece's ops."""
    frontier: dict[Tensor, None] = {}
    known_ops = {t.op for t in known}
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
        for control in op.control_inputs:
            if control in known_ops:
                continue
            if control in runs:
                if control.outputs:
                    frontier[control.outputs[0]] = None
            else:
                stack.append(control)
    return list(frontier)
