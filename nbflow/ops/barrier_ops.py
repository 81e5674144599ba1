"""A reusable barrier built from FIFO queues: steps of several participants meet (OSDI §4.4)."""

from __future__ import annotations

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.ops.control_flow_ops import group
from nbflow.ops.queue_ops import FIFOQueue


class TokenBarrier:
    """A reusable barrier for ``num_participants`` steps, made of FIFO queues.

    Participant ``i`` runs ``arrive(i)``: it puts a token in the queue it shares with each other
    participant, then takes one token from each of theirs; so no participant leaves round ``r``
    before all have entered it. One queue per ordered pair keeps rounds apart (FIFO per sender).
    """

    def __init__(
        self, num_participants: int, shared_name: str | None = None, name: str = "barrier"
    ):
        self.num_participants = num_participants
        base = shared_name or name
        with ops_lib.get_default_graph().name_scope(name):
            self._queues = {
                (i, j): FIFOQueue(
                    num_participants + 1,
                    [dtypes.bool],
                    shapes=[[]],
                    shared_name=f"{base}_{i}_from_{j}",
                    name=f"from_{j}_to_{i}",
                )
                for i in range(num_participants)
                for j in range(num_participants)
                if i != j
            }

    def arrive(self, participant: int, name: str | None = None) -> ops_lib.Operation:
        others = [j for j in range(self.num_participants) if j != participant]
        graph = ops_lib.get_default_graph()
        with graph.name_scope(name or f"arrive_{participant}"):
            sent = [self._queues[(j, participant)].enqueue([True]) for j in others]
            with graph.control_dependencies(sent):
                taken = [self._queues[(participant, j)].dequeue() for j in others]
            return group(*sent, *taken)
