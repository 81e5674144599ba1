"""Chrome-trace export of step statistics (whitepaper §9.2's EEG view, for chrome://tracing
and Perfetto).

    run_metadata = tf.RunMetadata()
    sess.run(y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
             run_metadata=run_metadata)
    trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()

Each device is a process ("pid") named after the device, each executor thread a row ("tid");
each node is a complete event ("ph": "X") with its inputs in ``args``; a Send/Recv pair is
joined by a flow arrow ("s"/"f"); ``show_memory`` adds a counter of the live-bytes estimate.
"""

from __future__ import annotations

import json
from typing import Any
from nbflow.framework.op_def import OpDef, registered_ops


class Timeline:
    """A Chrome trace of one step's ``StepStats``."""

    def __init__(self, step_stats: Any, graph: Any = None):
        if step_stats is None:
            raise ValueError("step_stats is None: run the step with trace_level=FULL_TRACE")
        self._step_stats = step_stats
        self._graph = graph

    def _events(self, show_dataflow: bool, show_memory: bool) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        starts = [n.all_start_micros for d in self._step_stats.dev_stats for n in d.node_stats]
        origin = min(starts, default=0)
        sends: dict[str, tuple[int, int, int]] = {}
        recvs: list[tuple[str, int, int, int]] = []
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append(_meta("process_name", pid, 0, {"name": f"{dev.device} Compute"}))
            events.append(_meta("process_sort_index", pid, 0, {"sort_index": pid}))
            threads: dict[int, int] = {}
            live = 0
            for node in dev.node_stats:
                tid = threads.setdefault(node.thread_id, len(threads))
                ts = node.all_start_micros - origin
                args = {"name": node.node_name, "op": node.op_type}
                for i, name in enumerate(node.input_names):
                    args[f"input{i}"] = name
                for out in node.output:
                    desc = out.tensor_description
                    args[f"output{out.slot}"] = (
                        f"{desc.dtype}{desc.shape} ({desc.allocated_bytes} B)"
                    )
                events.append(
                    {
                        "ph": "X",
                        "cat": "Op",
                        "name": node.op_type,
                        "pid": pid,
                        "tid": tid,
                        "ts": ts,
                        "dur": max(node.all_end_rel_micros, 1),
                        "args": args,
                    }
                )
                opdef = _op_def(node.op_type)
                if opdef is not None and opdef.is_send:
                    sends[_transfer_key(node)] = (pid, tid, ts)
                elif opdef is not None and opdef.is_recv:
                    end = ts + max(node.all_end_rel_micros, 1)
                    recvs.append((_transfer_key(node), pid, tid, end))
                if show_memory:
                    live += sum(o.tensor_description.allocated_bytes for o in node.output)
                    events.append(
                        {
                            "ph": "C",
                            "name": "Allocated bytes (outputs)",
                            "pid": pid,
                            "ts": ts + node.all_end_rel_micros,
                            "args": {"bytes": live},
                        }
                    )
            for tid in threads.values():
                events.append(_meta("thread_name", pid, tid, {"name": f"executor thread {tid}"}))
        if show_dataflow:
            for flow_id, (key, pid, tid, end) in enumerate(recvs):
                sent = sends.get(key)
                if sent is None:
                    continue
                common = {"cat": "DataFlow", "name": key, "id": flow_id}
                events.append({**common, "ph": "s", "pid": sent[0], "tid": sent[1], "ts": sent[2]})
                events.append(
                    {**common, "ph": "f", "bp": "e", "pid": pid, "tid": tid, "ts": end - 1}
                )
        return events

    def generate_chrome_trace_format(
        self, show_dataflow: bool = True, show_memory: bool = False
    ) -> str:
        """The trace as a JSON string in the Chrome trace event format."""
        events = self._events(show_dataflow, show_memory)
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ms"})


def _meta(name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": args}


def _op_def(op_type: str) -> OpDef | None:
    return registered_ops().get(op_type)


def _transfer_key(node: Any) -> str:
    # a pair names its tensor alike: "_send_x_0_to_CPU_1" and "_recv_x_0_on_CPU_1"
    name = node.node_name
    for prefix, sep in (("_send_", "_to_"), ("_recv_", "_on_")):
        if name.startswith(prefix):
            tensor, _, device = name[len(prefix) :].rpartition(sep)
            return f"{tensor}@{device}"
    return name
