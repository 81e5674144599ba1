"""Inject SIGKILL and SIGSTOP into the processes of a training cluster; does training recover?

    python -m bench.fault_trials                                   # 10 trials of every kind
    python -m bench.fault_trials --trials 2 --kinds kill-ps,stop-ps  # a quick run
    python -m bench.fault_trials --kinds kill-worker:3,kill-external-scheduler:1

``--seconds`` bounds each trial (the external-scheduler kind, which makes its cluster twice, gets
2.5 times as long); the child then reports what it has seen so far and everything it started is
killed. The JSON is rewritten after every trial.

Every trial runs in a child process of its own (its own session and process group, so a trial
that hangs past ``--seconds`` is killed with everything it started). The child makes a cluster
with one ``ps`` and one ``worker`` task on two Dask worker processes, a health check every
``HEALTH_INTERVAL`` seconds, and trains a linear regression (variables on the ps, compute on
the worker) under ``tf.train.MonitoredTrainingSession`` to ``LAST_STEP`` steps, saving a
checkpoint every ``CHECKPOINT_EVERY`` steps. When the global step reaches a random step, an
injector thread waits a random part of a step more (so the fault lands between steps or inside
one) and injects one fault:

- ``kill-worker``: SIGKILL the Dask worker process hosting the worker task (its nanny restarts
  it), on a ``Cluster.local`` (TLS by default);
- ``kill-ps``: SIGKILL the process hosting the ps task, on a ``Cluster.local``;
- ``stop-ps``: SIGSTOP the ps task's process for ``--stop-seconds`` (then SIGCONT), on a
  ``Cluster.local``; the step in flight should fail with ``UnavailableError`` naming the task and
  its worker within the detection window (health interval + health timeout, plus
  ``DETECT_SLACK`` for a loaded machine), and training go on from the checkpoint;
- ``kill-scheduler``: SIGKILL the scheduler of a cluster nbflow made with
  ``Cluster.from_gateway`` on a real dask-gateway server on 127.0.0.1 (started once by the
  parent); the recovery path should re-create the cluster and resume from the checkpoint;
- ``kill-external-scheduler``: SIGKILL the ``dask scheduler`` process of an external cluster
  (a scheduler and two ``dask worker`` processes the child starts, TLS with a throw-away
  certificate) joined by ``Cluster.from_address``. Dask has no scheduler fail-over and nbflow did
  not make this cluster, so the target is a clear, retryable ``UnavailableError`` naming the
  scheduler's address and a ``MonitoredTrainingSession`` that gives up after bounded retries;
  the child then starts a new scheduler and workers on the same address, as an operator would,
  and a new ``MonitoredTrainingSession`` must resume from the last checkpoint.

What each trial records (the child prints it as one JSON line; the parent collects them):

- **recovered**: training reached ``LAST_STEP`` and every session made after the fault restored
  the checkpoint that was the latest when it was made (none lost, none skipped);
- **steps lost**: the global step when the fault was injected minus the step restored (0 when
  a step in flight finished after the fault and its checkpoint is the one restored);
- **detect**: seconds from the fault until a step (or session creation) first failed;
- **recover**: seconds from the fault until the first step that succeeded after it;
- the error's class and message, and for ``Cluster.local`` trials, whether an unauthenticated
  peer (plain TCP, or TLS with other credentials) could reach a worker: it sends a pickled object
  that would create a file when unpickled.

The parent prints a table per kind and writes ``bench/results/fault_trials.json``; it exits
with status 1 when a target is missed: a kill of a worker, ps or gateway scheduler not recovered,
a stop not aborted within the window or not recovered, an external scheduler's loss not a
bounded ``UnavailableError`` naming its address, or a peer that got through. Everything listens
on 127.0.0.1 only. The timings are wall-clock on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import numpy as np

KINDS = ("kill-worker", "kill-ps", "stop-ps", "kill-scheduler", "kill-external-scheduler")
SPEC = {"ps": 1, "worker": 1}
HEALTH_INTERVAL = 0.5
HEALTH_TIMEOUT = 1.0
HEALTH = {"health_interval": HEALTH_INTERVAL, "health_timeout": HEALTH_TIMEOUT}
DETECT_SLACK = 1.0  # seconds a loaded machine may add to the detection window
WINDOW = HEALTH_INTERVAL + HEALTH_TIMEOUT + DETECT_SLACK  # a stalled task's step must fail by then
LAST_STEP = 40
CHECKPOINT_EVERY = 5
BUDGET = {"kill-external-scheduler": 2.5}  # x --seconds: it makes a cluster twice
LOG_LINES = 25  # of a trial's log kept in the results when it missed a target
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "fault_trials.json"


@dataclass
class Trial:
    """One trial's record (see the module docstring)."""

    kind: str
    seed: int
    recovered: bool = False
    fault_step: int | None = None  # global step when the fault was injected
    restored_steps: list[int] = field(default_factory=list)  # restored by each new session
    steps_lost: int | None = None
    steps_after_fault: list[int] = field(default_factory=list)  # global steps, as they came
    detect_s: float | None = None
    recover_s: float | None = None
    sessions: int = 0
    error_class: str = ""
    error: str = ""
    final_step: int | None = None
    aborted_in_window: bool | None = None  # stop-ps only
    names_scheduler: bool | None = None  # scheduler kinds only
    gave_up: bool | None = None  # kill-external-scheduler: MonitoredSession stopped retrying
    peer_refused: bool | None = None  # Cluster.local kinds: unauthenticated peers refused
    setup_s: float | None = None  # making the cluster (and probing it)
    duration_s: float = 0.0
    note: str = ""
    log_tail: list[str] = field(default_factory=list)  # the child's last log lines, if missed


# --- the child: one trial --------------------------------------------------------------------
class _Errors(logging.Handler):
    """Collects the errors MonitoredSession recovers from (it logs each before retrying)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[tuple[float, BaseException]] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        for arg in args:
            if isinstance(arg, BaseException):
                self.seen.append((time.monotonic(), arg))


class _Watch:
    """The training loop's view: the last global step, sessions made, first success after t."""

    def __init__(self) -> None:
        self.step = 0
        self.sessions: list[tuple[float, int, int | None]] = []  # (time, restored, latest ckpt)
        self.successes: list[float] = []
        self.history: list[int] = []  # every step's global step (after its update)
        self.reached = threading.Event()
        self.fault_at_step = LAST_STEP + 1


def _hook(tf: Any, watch: _Watch, global_step: Any, step_after: Any, directory: str) -> Any:
    class WatchHook(tf.train.SessionRunHook):
        def after_create_session(self, session: Any, coord: Any) -> None:  # noqa: ARG002
            latest = tf.train.latest_checkpoint(directory)
            restored = int(session.run(global_step))
            ckpt = int(latest.rsplit("-", 1)[1]) if latest else None
            watch.sessions.append((time.monotonic(), restored, ckpt))

        def before_run(self, run_context: Any) -> Any:  # noqa: ARG002
            return tf.train.SessionRunArgs(step_after)

        def after_run(self, run_context: Any, run_values: Any) -> None:  # noqa: ARG002
            watch.step = int(run_values.results)
            watch.history.append(watch.step)
            watch.successes.append(time.monotonic())
            if watch.step >= watch.fault_at_step:
                watch.reached.set()

    return WatchHook()


def _train(tf: Any, target: str, directory: str, watch: _Watch, seed: int) -> float:
    """Train to LAST_STEP under MonitoredTrainingSession; returns the last loss."""
    from nbflow.train.device_setter import replica_device_setter

    graph = tf.Graph()
    with graph.as_default():
        with tf.device(replica_device_setter(cluster=SPEC, worker_device="/job:worker/task:0")):
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            y = tf.placeholder(tf.float32, [None, 1], name="y")
            w = tf.Variable(np.zeros((3, 1), np.float32), name="w")
            b = tf.Variable(np.zeros((1,), np.float32), name="b")
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
            global_step = tf.train.get_or_create_global_step()
            train = tf.train.GradientDescentOptimizer(0.05).minimize(loss, global_step=global_step)
        # The global step once this step's update is in: read on the ps, after the update
        # (a read on the worker would take the ps's value whenever the ps sends it).
        with tf.colocate_with(global_step), tf.control_dependencies([train]):
            step_after = global_step.read_value()
        rng = np.random.default_rng(seed)
        value = float("nan")
        with tf.train.MonitoredTrainingSession(
            master=target,
            checkpoint_dir=directory,
            save_checkpoint_steps=CHECKPOINT_EVERY,
            hooks=[
                tf.train.StopAtStepHook(last_step=LAST_STEP),
                _hook(tf, watch, global_step, step_after, directory),
            ],
            save_summaries_steps=None,
            save_summaries_secs=None,
            log_step_count_steps=0,
        ) as sess:
            while not sess.should_stop():
                xs = rng.normal(size=(32, 3)).astype(np.float32)
                ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
                value, _ = sess.run([loss, train], {x: xs, y: ys})
    return float(value)


def _local_cluster() -> Any:
    from nbflow.distributed import Cluster

    return Cluster.local(n_workers=2, memory_limit="1GiB", spec=SPEC, **HEALTH)


async def _send_pickle(address: str, marker: str, connection_args: dict) -> None:
    from distributed.comm import connect
    from distributed.protocol import to_serialize

    comm = await connect(address, timeout=3, **connection_args)
    try:
        await comm.write(
            {"op": "nbflow_ping", "reply": True, "payload": to_serialize(_Marker(marker))}
        )
        await asyncio.wait_for(comm.read(), 5)
    finally:
        comm.abort()


class _Marker:
    """Unpickling one creates a file: proof that a peer's bytes ran as code in the worker."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self) -> tuple:
        return (open, (self.path, "w"))


def _peers_refused(cluster: Any, directory: str) -> bool:
    """Whether a plain-TCP peer and a TLS peer with other credentials are both refused by every
    worker and the scheduler of ``cluster`` (and nothing they sent ran)."""
    from distributed.security import Security

    addresses = sorted({t.address for t in cluster.tasks.values()}) + [
        str(cluster.client.scheduler.address)
    ]
    marker = os.path.join(directory, "peer-ran")
    peers = []
    for address in addresses:
        peers.append(("tcp://" + address.split("://", 1)[1], {}))
        peers.append((address, Security.temporary().get_connection_args("client")))

    async def all_peers() -> list:
        return await asyncio.gather(
            *(_send_pickle(peer, marker, args) for peer, args in peers), return_exceptions=True
        )

    outcomes = asyncio.run(all_peers())
    # CommClosedError is an OSError; anything else (a reply) means the peer got through
    refused = all(isinstance(o, (OSError, asyncio.TimeoutError)) for o in outcomes)
    return refused and not os.path.exists(marker)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _ExternalCluster:
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 with TLS, started as
    an operator would (the child's process group holds them)."""

    def __init__(self, directory: str):
        from distributed.security import Security

        credentials = Security.temporary()
        self.files = {}
        for name in ("tls_ca_file", "tls_worker_cert", "tls_worker_key"):
            path = os.path.join(directory, name + ".pem")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(getattr(credentials, name))
            self.files[name] = path
        ca, cert, key = (
            self.files[n] for n in ("tls_ca_file", "tls_worker_cert", "tls_worker_key")
        )
        self.security = Security(
            tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True
        )
        self.tls = ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        self.address = f"tls://127.0.0.1:{_free_port()}"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        port = self.address.rsplit(":", 1)[1]
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1"]
            + ["--port", port, "--protocol", "tls", "--no-dashboard"]
            + self.tls,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.processes = [self.scheduler]
        for _ in range(2):
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker", self.address]
                    + ["--host", "127.0.0.1", "--nthreads", "1", "--memory-limit", "1GiB"]
                    + ["--no-dashboard"]
                    + self.tls,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def connect(self) -> Any:
        from distributed import Client

        from nbflow.distributed import Cluster

        deadline = time.monotonic() + 60
        while True:
            try:
                client = Client(self.address, security=self.security, timeout=5)
                client.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        client.close()
        return Cluster.from_address(self.address, security=self.security, spec=SPEC, **HEALTH)

    def stop(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                p.kill()
            p.wait()


def _scheduler_pid(gateway_pid: int, cluster_name: str) -> int:
    """The dask-gateway-server's scheduler process for ``cluster_name`` (a child of it)."""
    import psutil

    for child in psutil.Process(gateway_pid).children(recursive=True):
        try:
            if "dask_scheduler" in " ".join(child.cmdline()):
                if child.environ().get("DASK_GATEWAY_CLUSTER_NAME") == cluster_name:
                    return child.pid
        except psutil.Error:
            continue
    raise RuntimeError(f"no scheduler process for gateway cluster {cluster_name}")


@contextmanager
def _cluster_for(
    kind: str, directory: str, gateway: dict | None
) -> Iterator[tuple[Any, Any, _ExternalCluster | None]]:
    """(cluster, inject, external cluster or None) for a trial: ``inject()`` delivers the
    fault and returns the pid it signalled."""
    if kind in ("kill-worker", "kill-ps", "stop-ps"):
        cluster = _local_cluster()
        try:
            task = (
                "/job:worker/replica:0/task:0"
                if kind == "kill-worker"
                else "/job:ps/replica:0/task:0"
            )
            pid = cluster.tasks[task].pid
            if kind == "stop-ps":
                yield cluster, lambda: (os.kill(pid, signal.SIGSTOP), pid)[1], None
            else:
                yield cluster, lambda: (os.kill(pid, signal.SIGKILL), pid)[1], None
        finally:
            cluster.close()
    elif kind == "kill-scheduler":
        from nbflow.distributed import Cluster

        assert gateway is not None
        cluster = Cluster.from_gateway(
            gateway["address"],
            proxy_address=gateway["proxy"],
            n_workers=2,
            spec=SPEC,
            **HEALTH,
        )
        try:
            pid = _scheduler_pid(gateway["pid"], cluster.dask_cluster.name)
            yield cluster, lambda: (os.kill(pid, signal.SIGKILL), pid)[1], None
        finally:
            cluster.close()
    else:
        external = _ExternalCluster(directory)
        external.start()
        try:
            cluster = external.connect()
            pid = external.scheduler.pid
            yield cluster, lambda: (os.kill(pid, signal.SIGKILL), pid)[1], external
        finally:
            external.stop()


class TrialRun:
    """One trial in this process (the child); ``record()`` reads its state at any moment, so a
    watchdog can report a trial that is still running at its deadline."""

    def __init__(self, kind: str, seed: int, directory: str, gateway: dict | None, stop_s: float):
        self.kind, self.seed, self.directory, self.gateway = kind, seed, directory, gateway
        self.stop_s = stop_s
        self.start = time.monotonic()
        self.rng = random.Random(seed)
        self.watch = _Watch()
        self.watch.fault_at_step = self.rng.randint(
            CHECKPOINT_EVERY + 1, LAST_STEP - CHECKPOINT_EVERY - 2
        )
        self.errors = _Errors()
        self.checkpoints = os.path.join(directory, "checkpoints")
        self.fault: dict[str, float] = {}
        self.failure: BaseException | None = None  # what ended training, if not success
        self.failed_at: float | None = None
        self.finished = False
        self.gave_up: bool | None = None
        self.peer_refused: bool | None = None
        self.scheduler = ""
        self.stage = "making the cluster"
        self.setup_s: float | None = None
        self.stopped = 0  # the pid SIGSTOPped and not yet resumed

    def run(self) -> None:
        import nbflow as tf

        train_log = logging.getLogger("nbflow.train")
        train_log.addHandler(self.errors)
        train_log.setLevel(logging.INFO)
        with _cluster_for(self.kind, self.directory, self.gateway) as (cluster, inject, external):
            if self.kind in ("kill-worker", "kill-ps", "stop-ps"):
                self.stage = "probing with unauthenticated peers"
                self.peer_refused = _peers_refused(cluster, self.directory)
            self.scheduler = str(cluster.client.scheduler.address)
            self.setup_s = time.monotonic() - self.start
            thread = threading.Thread(target=self._inject, args=(inject,), daemon=True)
            thread.start()
            self.stage = "training"
            try:
                _train(tf, cluster.target, self.checkpoints, self.watch, self.seed)
                self.finished = True
            except Exception as e:  # noqa: BLE001 - recorded: the trial did not recover
                self.failure, self.failed_at = e, time.monotonic()
            self.stage = "closing the cluster"
            if external is not None and "time" in self.fault:
                self.gave_up = self.failure is not None
                self.stage = "restarting the external cluster on the same address"
                cluster.close()
                external.stop()
                external.start()
                cluster = external.connect()
                self.stage = "training on the restarted external cluster"
                self.finished = False
                try:
                    _train(tf, cluster.target, self.checkpoints, self.watch, self.seed)
                    self.finished = True
                except Exception as e:  # noqa: BLE001 - recorded
                    self.failure, self.failed_at = e, time.monotonic()
                    self.gave_up = False
                self.stage = "closing the restarted external cluster"
                cluster.close()
            thread.join(timeout=self.stop_s + 5)
        train_log.removeHandler(self.errors)
        self.stage = "done"

    def _inject(self, inject: Any) -> None:
        if not self.watch.reached.wait(LAST_STEP * 5):
            return
        # somewhere in or after the next step: a step's time, not a fixed 50 ms, which on a
        # fast host let training reach LAST_STEP before the fault (nothing left to recover)
        recent = self.watch.successes[-6:]
        step_s = (recent[-1] - recent[0]) / (len(recent) - 1) if len(recent) > 1 else 0.05
        time.sleep(self.rng.uniform(0.0, min(step_s, 0.05)))
        self.fault["step"] = self.watch.step
        self.fault["steps_done"] = len(self.watch.history)
        self.fault["time"] = time.monotonic()
        pid = inject()
        # Steps that ended while the fault was being set up (finding a pid takes messages) came
        # before it: the step it hit is the one seen once it is in.
        self.fault["step"] = self.watch.step
        if self.kind == "stop-ps":
            self.stopped = pid
            time.sleep(self.stop_s)
            self.resume()

    def resume(self) -> None:
        """SIGCONT the stopped process, if there is one (also when the trial ends early)."""
        if self.stopped:
            pid, self.stopped = self.stopped, 0
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def record(self) -> Trial:
        """What the trial shows so far (see the module docstring)."""
        from nbflow import errors

        import nbflow as tf

        record = Trial(self.kind, self.seed, duration_s=time.monotonic() - self.start)
        record.peer_refused = self.peer_refused
        record.setup_s = self.setup_s
        record.sessions = len(self.watch.sessions)
        record.final_step = self.watch.step
        if self.stage != "done":
            record.note = f"still {self.stage} at the trial's deadline"
        failure = self.failure
        if "time" not in self.fault:
            record.note = f"no fault injected (step {self.watch.step}); {record.note}".strip("; ")
            record.error_class = type(failure).__name__ if failure else ""
            record.error = str(failure or "")[:300]
            return record
        t0 = self.fault["time"]
        record.fault_step = int(self.fault["step"])
        record.steps_after_fault = self.watch.history[int(self.fault["steps_done"]) :]
        seen = [(t, e) for t, e in self.errors.seen if t >= t0]
        if failure is not None and self.failed_at is not None:
            seen.append((self.failed_at, failure))
        first = min(seen, key=lambda te: te[0]) if seen else None
        if first is not None:
            record.detect_s = first[0] - t0
            record.error_class = type(first[1]).__name__
            record.error = str(first[1])[:300]
            classes = sorted({type(e).__name__ for _, e in seen})
            if len(seen) > 1:
                record.note = (
                    f"{len(seen)} errors after the fault ({', '.join(classes)}); {record.note}"
                )
        if failure is not None:
            record.note = (
                f"{record.note.strip('; ')}; ended by {type(failure).__name__}: "
                + (str(failure)[:200])
            )
        record.note = record.note.strip("; ")
        new_sessions = [s for s in self.watch.sessions if s[0] >= t0]
        record.restored_steps = [restored for _, restored, _ in new_sessions]
        if new_sessions:  # a step in flight may still finish and be saved: nothing lost then
            record.steps_lost = max(0, record.fault_step - new_sessions[0][1])
        after = first[0] if first is not None else t0
        successes = [t for t in self.watch.successes if t > after]
        if successes and first is not None:
            record.recover_s = successes[0] - t0
        from_checkpoint = all(restored == ckpt for _, restored, ckpt in new_sessions)
        latest = tf.train.latest_checkpoint(self.checkpoints) or ""
        done = self.finished and latest.endswith(f"-{LAST_STEP}")  # the final checkpoint
        record.recovered = done and from_checkpoint and bool(new_sessions)
        if self.kind == "stop-ps":
            record.aborted_in_window = (
                first is not None
                and isinstance(first[1], errors.UnavailableError)
                and first[0] - t0 <= WINDOW
            )
            if first is None and done:
                record.recovered = True  # nothing failed, so nothing to restore: not the target
                record.note = f"no step failed in the {self.stop_s:g} s stop; " + record.note
        if self.kind in ("kill-scheduler", "kill-external-scheduler") and first is not None:
            host = self.scheduler.split("://", 1)[-1]
            record.names_scheduler = isinstance(first[1], errors.UnavailableError) and (
                host in str(first[1])
            )
            record.gave_up = self.gave_up
        return record


def child(
    kind: str, seed: int, directory: str, gateway: str, stop_s: float, seconds: float
) -> None:
    """Run one trial and print its record as one JSON line; at ``seconds`` print what it shows
    so far and exit, whatever is still running."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)  # the trial's log file
    trial = TrialRun(kind, seed, directory, json.loads(gateway) if gateway else None, stop_s)
    printed = threading.Lock()

    def report() -> None:
        if printed.acquire(blocking=False):
            trial.resume()
            print("RESULT " + json.dumps(asdict(trial.record())), flush=True)
            os._exit(0)  # leave no worker process behind waiting on a clean shutdown

    timer = threading.Timer(seconds, report)
    timer.daemon = True
    timer.start()
    try:
        trial.run()
    except Exception:  # noqa: BLE001 - making or closing the cluster failed: in the log
        logging.exception("trial %s %d failed outside training", kind, seed)
    report()


# --- the parent: trials, gateway server, summary -------------------------------------------------
@contextmanager
def gateway_server(directory: str) -> Iterator[dict]:
    """A dask-gateway-server on 127.0.0.1 with the local (process) backend."""
    api, proxy, tcp = (_free_port() for _ in range(3))
    config = Path(directory) / "gateway_config.py"
    config.write_text(
        "import sys\n"
        f'c.DaskGateway.address = "127.0.0.1:{api}"\n'
        f'c.Proxy.address = "127.0.0.1:{proxy}"\n'
        f'c.Proxy.tcp_address = "127.0.0.1:{tcp}"\n'
        'c.DaskGateway.backend_class = "dask_gateway_server.backends.local.UnsafeLocalBackend"\n'
        'c.ClusterConfig.scheduler_cmd = [sys.executable, "-m", "distributed.cli.dask_scheduler"]\n'
        'c.ClusterConfig.worker_cmd = [sys.executable, "-m", "distributed.cli.dask_worker"]\n'
        'c.ClusterConfig.worker_memory = "1 G"\n'
        'c.DaskGateway.log_level = "WARN"\n'
    )
    binary = Path(sys.executable).with_name("dask-gateway-server")
    process = subprocess.Popen(
        [str(binary), "-f", str(config)], cwd=directory, start_new_session=True
    )
    address = f"http://127.0.0.1:{api}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{address}/api/health", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("dask-gateway-server did not start")
            time.sleep(0.1)
        yield {"address": address, "proxy": f"127.0.0.1:{tcp}", "pid": process.pid}
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def run_in_child(
    kind: str, seed: int, root: str, gateway: dict | None, seconds: float, stop_s: float
) -> Trial:
    directory = tempfile.mkdtemp(prefix=f"{kind}-{seed}-", dir=root)
    log_path = os.path.join(directory, "trial.log")
    with open(log_path, "w") as log:  # the child's stderr: its log
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.fault_trials", "--child", kind, str(seed), directory]
            + [json.dumps(gateway) if gateway else "", str(stop_s), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=ROOT,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=seconds + 30)  # the child reports at `seconds`
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            out += f"\nTIMEOUT the trial ran past {seconds:g} s and was killed"
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # whatever the trial left running
            except ProcessLookupError:
                pass
    trial = Trial(kind, seed, note=f"the child exited with {proc.returncode} and no result")
    for line in out.splitlines():
        if line.startswith("RESULT "):
            trial = Trial(**json.loads(line[len("RESULT ") :]))
        if line.startswith("TIMEOUT "):
            trial = Trial(kind, seed, note=line[len("TIMEOUT ") :], duration_s=seconds)
    if not trial.recovered or trial.aborted_in_window is False:
        with open(log_path, errors="replace") as log:
            trial.log_tail = [line.rstrip()[:300] for line in log.readlines()[-LOG_LINES:]]
    return trial


def _median_max(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.2f} / {max(values):.2f}"


def summarize(trials: list[Trial]) -> tuple[list[str], list[str]]:
    """The table's lines, and the targets missed."""
    lines = [
        f"{'kind':24} {'trials':>6} {'recovered':>9} {'steps lost':>13} {'detect s':>13} "
        f"{'recover s':>13}  errors",
        f"{'':24} {'':>6} {'':>9} {'median / max':>13} {'median / max':>13} {'median / max':>13}",
    ]
    missed = []
    for kind in KINDS:
        mine = [t for t in trials if t.kind == kind]
        if not mine:
            continue
        recovered = sum(t.recovered for t in mine)
        classes: dict[str, int] = {}
        for t in mine:
            key = t.error_class or "none"
            classes[key] = classes.get(key, 0) + 1
        lines.append(
            f"{kind:24} {len(mine):>6} {recovered:>9} "
            f"{_median_max([t.steps_lost for t in mine if t.steps_lost is not None]):>13} "
            f"{_median_max([t.detect_s for t in mine if t.detect_s is not None]):>13} "
            f"{_median_max([t.recover_s for t in mine if t.recover_s is not None]):>13}  "
            + ", ".join(f"{k} x{n}" for k, n in sorted(classes.items()))
        )
        if kind == "kill-external-scheduler":
            bad = [t for t in mine if not (t.names_scheduler and t.gave_up and t.recovered)]
            if bad:
                missed.append(
                    f"{kind}: {len(bad)} of {len(mine)} not a bounded UnavailableError naming "
                    "the scheduler followed by a resume from the checkpoint"
                )
        elif recovered < len(mine):
            missed.append(f"{kind}: {len(mine) - recovered} of {len(mine)} did not recover")
        if kind == "stop-ps":
            late = [t for t in mine if not t.aborted_in_window]
            if late:
                missed.append(
                    f"stop-ps: {len(late)} of {len(mine)} steps not aborted with "
                    "UnavailableError within the detection window"
                )
        if kind == "kill-scheduler":
            vague = [t for t in mine if not t.names_scheduler]
            if vague:
                missed.append(f"kill-scheduler: {len(vague)} errors not naming the scheduler")
    probed = [t for t in trials if t.peer_refused is not None]
    if probed:
        through = [t for t in probed if not t.peer_refused]
        lines.append(
            f"unauthenticated peers refused by Cluster.local: {len(probed) - len(through)} of "
            f"{len(probed)} clusters (plain TCP and foreign TLS, every worker and the scheduler)"
        )
        if through:
            missed.append(f"an unauthenticated peer reached {len(through)} Cluster.local clusters")
    return lines, missed


def _machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "load_average": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=10, help="trials per kind")
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help="comma-separated, of: " + ", ".join(KINDS) + "; kind:N runs N trials of it",
    )
    parser.add_argument(
        "--seconds", type=float, default=60, help="time limit per trial (x2.5 external)"
    )
    parser.add_argument("--stop-seconds", type=float, default=20, help="how long stop-ps stops")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    parser.add_argument(
        "--child", nargs=6, metavar=("KIND", "SEED", "DIR", "GATEWAY", "STOP_S", "SECONDS")
    )
    args = parser.parse_args()
    if args.child:
        kind, seed, directory, gateway, stop_s, seconds = args.child
        child(kind, int(seed), directory, gateway, float(stop_s), float(seconds))
        return 0
    counts = {}
    for item in filter(None, (k.strip() for k in args.kinds.split(","))):
        kind, _, n = item.partition(":")
        counts[kind] = int(n) if n else args.trials
    kinds = list(counts)
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds {unknown}; choose from {', '.join(KINDS)}")
    machine = _machine()
    started = time.time()
    trials: list[Trial] = []
    with tempfile.TemporaryDirectory(prefix="nbflow-faults-") as root:
        with _maybe_gateway("kill-scheduler" in kinds, root) as gateway:
            for kind in kinds:
                for i in range(counts[kind]):
                    seed = args.seed * 1000 + KINDS.index(kind) * 100 + i
                    limit = args.seconds * BUDGET.get(kind, 1.0)
                    trial = run_in_child(kind, seed, root, gateway, limit, args.stop_seconds)
                    trials.append(trial)
                    print(
                        f"{kind} #{i}: recovered={trial.recovered} fault_step={trial.fault_step} "
                        f"restored={trial.restored_steps} detect={_fmt(trial.detect_s)} "
                        f"recover={_fmt(trial.recover_s)} {trial.error_class} "
                        f"{trial.error[:120]!r} {trial.note[:160]}",
                        flush=True,
                    )
                    _write(args, machine, started, trials)  # so far, should the run be cut
    lines, missed = _write(args, machine, started, trials)
    print()
    print(
        f"{len(trials)} trials in {time.time() - started:.0f} s on {machine['cpu']} "
        f"({machine['cores']} cores, load {machine['load_average'][0]:.1f} at start)"
    )
    print("\n".join(lines))
    for line in missed:
        print("MISSED", line)
    print(f"wrote {args.out}")
    return 1 if missed else 0


def _write(
    args: argparse.Namespace, machine: dict, started: float, trials: list[Trial]
) -> tuple[list[str], list[str]]:
    """Write the results so far; returns the summary's lines and the targets missed."""
    lines, missed = summarize(trials)
    machine["load_average_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
                "machine": machine,
                "arguments": {k: str(v) for k, v in vars(args).items() if k != "child"},
                "constants": {
                    "health_interval": HEALTH_INTERVAL,
                    "health_timeout": HEALTH_TIMEOUT,
                    "detect_slack": DETECT_SLACK,
                    "detection_window": WINDOW,
                    "last_step": LAST_STEP,
                    "checkpoint_every": CHECKPOINT_EVERY,
                },
                "missed": missed,
                "trials": [asdict(t) for t in trials],
            },
            indent=1,
        )
    )
    return lines, missed


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


@contextmanager
def _maybe_gateway(wanted: bool, root: str) -> Iterator[dict | None]:
    if not wanted:
        yield None
        return
    with gateway_server(root) as gateway:
        yield gateway


if __name__ == "__main__":
    sys.exit(main())
