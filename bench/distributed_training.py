"""Issue 21's bench: a real model trained on PS/worker tasks, nbflow beside TensorFlow's servers.

Between-graph replication as TF1 programs write it: one client per worker task (here a thread
with its own graph and ``tf.Session``), each building the model under
``tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:<i>")`` so the
variables (and the optimizer's slots, and ``SyncReplicasOptimizer``'s accumulators and token
queue) live on the one ps task and the forward and backward pass on the worker task.

Models: Figure 1's MLP (784-100-10, batch 100, Adagrad) and the large MLP
(784-1024-1024-10, batch 256, plain SGD). Configurations: asynchronous with 1, 2 and 4 workers;
synchronous (``SyncReplicasOptimizer``, the chief's queue runner aggregating on the ps) with 2
and 4 workers, with a deliberately slowed straggler (it sleeps ``STRAGGLER_S`` after each step),
and the straggler with one backup worker (aggregate the first n - 1 of n).

nbflow runs on ``nbflow.distributed.Cluster.local`` (TLS by default; ``--insecure`` adds the
plain-TCP column); TensorFlow 2.21 runs its own servers (``tf.compat.v1.train.Server``, grpc on
127.0.0.1, one process per task) driven by a child process of ``.benchvenv``'s Python. The two
run in the same run, alternating blocks of ``BLOCK_S`` seconds so a busy machine's load falls on
both alike; the figures are medians over the blocks. The floor: the same step's compute alone in
one process (nbflow, no cluster) plus the bytes of one step — the weights to the worker, the
gradients back — over a raw loopback TCP connection.

    python -m bench.distributed_training            # everything
    python -m bench.distributed_training --quick    # Figure 1's MLP only, fewer blocks
    python -m bench.run --suite distributed_training
    python -m bench.distributed_training --profile  # CPU ms per step per process (+ py-spy)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bench.common import Result, free_ports, run_header, tensorflow_v1

SUITE = "distributed_training"
ROOT = Path(__file__).resolve().parent.parent
BENCH_PYTHON = Path(os.environ.get("NBFLOW_BENCH_PYTHON", ROOT / ".benchvenv" / "bin" / "python"))
STRAGGLER_S = 0.05
BLOCK_S = 1.0
MAX_WORKERS = 4


@dataclass(frozen=True)
class Config:
    """One row: a model trained by ``workers`` replicas, asynchronously or synchronously."""

    model: str  # "fig1" or "large"
    workers: int
    sync: bool = False
    backups: int = 0  # sync: aggregate the first workers - backups gradients
    straggler: bool = False  # the last worker sleeps STRAGGLER_S after each step

    @property
    def label(self) -> str:
        name = {"fig1": "Fig1 MLP", "large": "large MLP"}.get(self.model, self.model)
        text = f"{name}, {'sync' if self.sync else 'async'}, {self.workers} worker"
        text += "s" if self.workers > 1 else ""
        text += ", slowed straggler" if self.straggler else ""
        return text + (f", {self.backups} backup" if self.backups else "")


MODELS = {
    # layer widths, batch, optimizer
    "fig1": ([784, 100, 10], 100, "adagrad"),
    "large": ([784, 1024, 1024, 10], 256, "sgd"),
    "tiny": ([8, 4, 2], 4, "adagrad"),  # the smoke test's
}


def configs(models: tuple[str, ...] = ("fig1", "large")) -> list[Config]:
    out = []
    for model in models:
        out += [Config(model, n) for n in (1, 2, 4)]
        out += [
            Config(model, 2, sync=True),
            Config(model, 4, sync=True),
            Config(model, 4, sync=True, straggler=True),
            Config(model, 4, sync=True, backups=1, straggler=True),
        ]
    return out


def weight_bytes(model: str) -> int:
    widths = MODELS[model][0]
    return 4 * sum(a * b + b for a, b in zip(widths, widths[1:]))


def build_mlp(tf, model: str):
    """The model in the current graph and device scope: (x, y, loss)."""
    widths, batch, _ = MODELS[model]
    x = tf.placeholder(tf.float32, [batch, widths[0]], name="x")
    y = tf.placeholder(tf.int32, [batch], name="y")
    h = x
    for k, (a, b) in enumerate(zip(widths, widths[1:])):
        w = tf.Variable(tf.random_normal([a, b], stddev=0.05, seed=k + 1), name=f"w{k}")
        bias = tf.Variable(tf.zeros([b]), name=f"b{k}")
        h = tf.matmul(h, w) + bias
        if k < len(widths) - 2:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    return x, y, loss


def _optimizer(tf, model: str):
    kind = MODELS[model][2]
    if kind == "adagrad":
        return tf.train.AdagradOptimizer(0.01)
    return tf.train.GradientDescentOptimizer(0.01)


class Replicas:
    """The worker clients of one configuration, each a thread looping ``sess.run(train_op)``.

    The loops run between ``resume`` and ``pause`` (a block); a paused loop waits between steps,
    so a synchronous step is never left half done. Works alike for nbflow and TensorFlow:
    ``tf`` is the framework's v1 module, ``target_of(i)`` the session target of worker i.
    """

    def __init__(self, tf, config: Config, target_of) -> None:
        self.config = config
        n = config.workers
        self.tf = tf
        self.built = [self._build(tf, config, r) for r in range(n)]
        self.coord = tf.train.Coordinator()
        graph0, init, *_ = self.built[0]
        self.sessions = [tf.Session(target_of(r), graph=b[0]) for r, b in enumerate(self.built)]
        self.reader = tf.Session(target_of(0), graph=graph0)  # the global step, between steps
        self.sessions[0].run(init)
        for sess, (_, _, _, _, hook, _) in zip(self.sessions, self.built):
            if hook is not None:
                hook.after_create_session(sess, self.coord)
        rng = np.random.default_rng(0)
        widths, batch, _ = MODELS[config.model]
        self.feed_values = (
            rng.normal(size=(batch, widths[0])).astype(np.float32),
            rng.integers(0, widths[-1], batch).astype(np.int32),
        )
        self.steps = [0] * n
        self.times: list[list[float]] = [[] for _ in range(n)]
        self.running = threading.Event()
        self.idle = [threading.Event() for _ in range(n)]
        self.stopping = False
        self.errors: list[BaseException] = []
        self.threads = [
            threading.Thread(target=self._loop, args=(r,), daemon=True) for r in range(n)
        ]
        for t in self.threads:
            t.start()

    @staticmethod
    def _build(tf, config: Config, task: int):
        graph = tf.Graph()
        with graph.as_default():
            setter = tf.train.replica_device_setter(
                ps_tasks=1, worker_device=f"/job:worker/task:{task}"
            )
            with tf.device(setter):
                global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
                x, y, loss = build_mlp(tf, config.model)
                opt = _optimizer(tf, config.model)
                hook = None
                if config.sync:
                    opt = tf.train.SyncReplicasOptimizer(
                        opt,
                        replicas_to_aggregate=config.workers - config.backups,
                        total_num_replicas=config.workers,
                    )
                train = opt.minimize(loss, global_step=global_step)
                if config.sync:
                    hook = opt.make_session_run_hook(is_chief=task == 0)
                    hook.begin()
            init = tf.global_variables_initializer()
        return graph, init, train, (x, y), hook, global_step

    def _loop(self, r: int) -> None:
        _, _, train, (x, y), _, _ = self.built[r]
        sess = self.sessions[r]
        feed = {x: self.feed_values[0], y: self.feed_values[1]}
        slow = self.config.straggler and r == self.config.workers - 1
        try:
            while True:
                if not self.running.is_set():
                    self.idle[r].set()
                    self.running.wait()
                    self.idle[r].clear()
                if self.stopping:
                    return
                start = time.perf_counter()
                sess.run(train, feed)
                if self.running.is_set():  # a step that waited through a pause is not timed
                    self.times[r].append(time.perf_counter() - start)
                self.steps[r] += 1
                if slow:
                    time.sleep(STRAGGLER_S)
        except BaseException as e:  # noqa: BLE001 - reported by block()
            self.errors.append(e)
            self.idle[r].set()

    def global_step(self) -> int:
        return int(self.reader.run(self.built[0][5]))

    def block(self, seconds: float) -> dict:
        """Run the loops for ``seconds``: examples/s, global steps/s (synchronous) and the
        steps' times (s). Steps and the global step are read when the time is up, while the
        loops still run: a synchronous worker left waiting for a token when the others pause
        must not stretch the block (it waits, untimed, into the next one)."""
        for times in self.times:
            times.clear()
        steps0 = list(self.steps)
        g0 = self.global_step() if self.config.sync else 0
        start = time.perf_counter()
        self.running.set()
        deadline = start + seconds
        while time.perf_counter() < deadline and not self.errors:
            time.sleep(0.01)
        steps1 = list(self.steps)
        g1 = self.global_step() if self.config.sync else 0
        elapsed = time.perf_counter() - start
        self.running.clear()
        patience = 2.0 if self.config.sync else 60.0
        until = time.perf_counter() + patience
        for idle in self.idle:
            if not idle.wait(max(0.0, until - time.perf_counter())) and not self.config.sync:
                raise TimeoutError(f"{self.config.label}: a worker loop does not pause")
        if self.errors:
            raise self.errors[0]
        batch = MODELS[self.config.model][1]
        if self.config.sync:
            examples = (g1 - g0) * batch * (self.config.workers - self.config.backups)
        else:
            examples = (sum(steps1) - sum(steps0)) * batch
        times = [t for r in self.times for t in r]
        return {
            "examples_per_s": examples / elapsed,
            "global_steps_per_s": (g1 - g0) / elapsed,
            "times": times,
        }

    def close(self) -> None:
        self.stopping = True
        self.coord.request_stop()
        self.running.set()
        for t in self.threads:
            t.join(10)
        for sess in [*self.sessions, self.reader]:
            sess.close()


# --- TensorFlow's side: a child process of .benchvenv ---------------------------------------------
def _tf_server(spec: dict, job: str, index: int) -> None:
    import tensorflow as tf2

    tf2.compat.v1.disable_eager_execution()
    server = tf2.compat.v1.train.Server(
        tf2.compat.v1.train.ClusterSpec(spec), job_name=job, task_index=index
    )
    server.join()


def tf_driver() -> None:
    """Child: TensorFlow servers for 1 ps and MAX_WORKERS workers (one process each); per stdin
    line ``setup CONFIG_JSON`` / ``block SECONDS`` / ``close`` it answers one JSON line."""
    import multiprocessing as mp

    tf = tensorflow_v1()
    ports = free_ports(1 + MAX_WORKERS)
    spec = {
        "ps": [f"127.0.0.1:{ports[0]}"],
        "worker": [f"127.0.0.1:{p}" for p in ports[1:]],
    }
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_tf_server, args=(spec, "ps", 0), daemon=True)]
    procs += [
        ctx.Process(target=_tf_server, args=(spec, "worker", i), daemon=True)
        for i in range(MAX_WORKERS)
    ]
    for p in procs:
        p.start()
    targets = [f"grpc://{a}" for a in spec["worker"]]
    replicas: Replicas | None = None
    try:
        for line in sys.stdin:
            verb, _, arg = line.strip().partition(" ")
            if verb == "setup":
                replicas = Replicas(tf, Config(**json.loads(arg)), lambda r: targets[r])
                print(json.dumps({"ok": True}), flush=True)
            elif verb == "block":
                assert replicas is not None
                print(json.dumps(replicas.block(float(arg))), flush=True)
            elif verb == "close":
                assert replicas is not None
                replicas.close()
                tf.Session.reset(targets[0])  # the next configuration's variables are new
                replicas = None
                print(json.dumps({"ok": True}), flush=True)
    finally:
        for p in procs:
            p.kill()


class TensorFlowDriver:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [str(BENCH_PYTHON), "-m", "bench.distributed_training", "--tf-driver"],
            cwd=ROOT,
            env={
                **os.environ,
                "PYTHONPATH": str(ROOT),
                "TF_CPP_MIN_LOG_LEVEL": "3",
                "CUDA_VISIBLE_DEVICES": "",
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, line: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the TensorFlow driver died answering {line!r}")
        return json.loads(answer)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def tensorflow_available() -> bool:
    if not BENCH_PYTHON.exists():
        return False
    probe = subprocess.run(
        [str(BENCH_PYTHON), "-c", "import tensorflow"],
        capture_output=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    return probe.returncode == 0


# --- the floor ------------------------------------------------------------------------------------
def compute_alone(tf, model: str, seconds: float = 1.0, cpu: bool = False) -> float:
    """Median seconds of one training step of ``model`` in one process (nbflow, no cluster);
    with ``cpu`` the mean CPU seconds of a step instead (a busy machine inflates wall time)."""
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
        x, y, loss = build_mlp(tf, model)
        train = _optimizer(tf, model).minimize(loss, global_step=global_step)
        init = tf.global_variables_initializer()
    widths, batch, _ = MODELS[model]
    rng = np.random.default_rng(0)
    feed = {
        x: rng.normal(size=(batch, widths[0])).astype(np.float32),
        y: rng.integers(0, widths[-1], batch).astype(np.int32),
    }
    times = []
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        for _ in range(3):
            sess.run(train, feed)
        end = time.perf_counter() + seconds
        cpu0 = time.process_time()
        while time.perf_counter() < end or len(times) < 5:
            start = time.perf_counter()
            sess.run(train, feed)
            times.append(time.perf_counter() - start)
        cpu_per_step = (time.process_time() - cpu0) / len(times)
    return cpu_per_step if cpu else statistics.median(times)


# --- the per-step profile -------------------------------------------------------------------------
def _cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds (user + system) each process has used so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for role, pid in pids.items():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[role] = (int(fields[11]) + int(fields[12])) / tick
    return out


def profile(
    model: str = "fig1", seconds: float = 10.0, security: bool = True, local_plane: bool = True
) -> dict:
    """CPU milliseconds per step of each process (client with the scheduler, ps task, worker
    task) for ``model`` asynchronous on 1 ps + 1 worker (``local_plane=False``: tensors over
    Dask's connections, not Unix sockets), less their background rate measured while paused
    (heartbeats, memory monitors); with ``py-spy`` on PATH (or $PY_SPY) also its
    raw stacks of every process under bench/results/profile/ (``py-spy record --nonblocking``)."""
    import shutil

    import nbflow as tf
    from nbflow.distributed import Cluster

    spy = os.environ.get("PY_SPY") or shutil.which("py-spy")
    spec = {"ps": 1, "worker": 1}
    with Cluster.local(n_workers=2, memory_limit="1GiB", spec=spec, security=security) as c:
        if not local_plane:
            c.client.run(_without_local_plane)
        by_address = c.client.run(os.getpid)
        pids = {"client": os.getpid()}
        for name, info in c.tasks.items():
            pids[name.split("/")[1]] = by_address[info.address]
        replicas = Replicas(tf, Config(model, 1), lambda r: c.target)
        replicas.block(1.0)  # warm-up
        start, idle0 = time.perf_counter(), _cpu_seconds(pids)
        time.sleep(seconds / 2)
        idle1, idle_s = _cpu_seconds(pids), time.perf_counter() - start
        spies = []
        if spy:
            out = ROOT / "bench" / "results" / "profile"
            out.mkdir(parents=True, exist_ok=True)
            for role, pid in pids.items():
                cmd = [spy, "record", "--nonblocking", "--threads", "-r", "200", "-f", "raw"]
                cmd += ["-d", str(int(seconds)), "-o", str(out / f"{role}.txt"), "--pid", str(pid)]
                spies.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL))
        start, busy0 = time.perf_counter(), _cpu_seconds(pids)
        got = replicas.block(seconds)
        busy1, busy_s = _cpu_seconds(pids), time.perf_counter() - start
        for p in spies:
            p.wait()
        replicas.close()
    steps = len(got["times"])
    cpu_ms = {
        role: 1e3
        * ((busy1[role] - busy0[role]) - (idle1[role] - idle0[role]) * busy_s / idle_s)
        / steps
        for role in pids
    }
    return {
        "steps": steps,
        "step_ms": statistics.median(got["times"]) * 1e3,
        "examples_per_s": got["examples_per_s"],
        "cpu_ms_per_step": cpu_ms,
        "compute_alone_ms": compute_alone(tf, model) * 1e3,
        "compute_alone_cpu_ms": compute_alone(tf, model, cpu=True) * 1e3,
    }


class Floor:
    """The floor, in blocks like a configuration's: the step's compute alone in this process
    (nbflow, no cluster) plus the bytes of one step (the weights to the worker, the gradients
    back) over a raw loopback TCP connection (``loopback(nbytes)``: ms, measured once)."""

    def __init__(self, tf, model: str, loopback) -> None:
        self.tf, self.model = tf, model
        self.wire = loopback(weight_bytes(model), rounds=21) / 1e3

    def block(self, seconds: float) -> dict:
        compute = compute_alone(self.tf, self.model, seconds)
        step = compute + self.wire
        return {"examples_per_s": MODELS[self.model][1] / step, "times": [step], "compute": compute}

    def note(self, blocks: list[dict]) -> str:
        compute = statistics.median(b["compute"] for b in blocks)
        kb = weight_bytes(self.model) // 1024
        return f"compute {compute * 1e3:.3f} ms + {kb} KB each way {self.wire * 1e3:.3f} ms"

    def close(self) -> None:
        pass


# --- the run --------------------------------------------------------------------------------------
def _results(config: Config, framework: str, blocks: list[dict], note: str = "") -> list[Result]:
    def rate(suffix: str, key: str, unit: str) -> Result:
        values = [b[key] for b in blocks]
        middle, spread = statistics.median(values), (min(values), max(values))
        label = config.label + suffix
        return Result(SUITE, label, framework, middle, unit, len(values), spread, note=note)

    out = [rate("", "examples_per_s", "examples/s")]
    if config.sync:
        out.append(rate(" (global steps)", "global_steps_per_s", "steps/s"))
    times = [t * 1e3 for b in blocks for t in b["times"]]
    if times:
        ordered = sorted(times)
        spread = (ordered[int(0.1 * (len(ordered) - 1))], ordered[int(0.9 * (len(ordered) - 1))])
        out.append(
            Result(
                SUITE,
                config.label + " (step)",
                framework,
                statistics.median(times),
                "ms",
                len(times),
                spread,
                lower_is_better=True,
                note=note,
            )  # fmt: skip
        )
    return out


def measure(
    configs_: list[Config],
    cycles: int = 5,
    block_s: float = BLOCK_S,
    with_tensorflow: bool = True,
    insecure: bool = False,
    tls_only: bool = False,
    verbose: bool = False,
) -> list[Result]:
    """nbflow (TLS; and plain TCP with ``insecure``; and TLS without the Unix-socket data
    plane with ``tls_only``) and TensorFlow, alternating blocks."""
    import nbflow as tf
    from bench.distributed import _loopback_floor
    from nbflow.distributed import Cluster

    def log(*args) -> None:
        if verbose:
            print(*args, file=sys.stderr, flush=True)

    spec = {"ps": 1, "worker": max(c.workers for c in configs_)}
    clusters = {
        "nbflow": Cluster.local(n_workers=1 + spec["worker"], memory_limit="1GiB", spec=spec)
    }
    if insecure:
        clusters["nbflow, plain TCP"] = Cluster.local(
            n_workers=1 + spec["worker"], memory_limit="1GiB", spec=spec, security=False
        )
    if tls_only:
        clusters["nbflow, TLS only"] = Cluster.local(
            n_workers=1 + spec["worker"], memory_limit="1GiB", spec=spec
        )
        clusters["nbflow, TLS only"].client.run(_without_local_plane)
    driver = TensorFlowDriver() if with_tensorflow else None
    out: list[Result] = []
    try:
        for config in configs_:
            runners: dict[str, object] = {}
            for name, cluster in clusters.items():
                cluster.reset()
                runners[name] = Replicas(tf, config, lambda r, c=cluster: c.target)
            if config.workers == 1 and not config.sync:
                runners["floor"] = Floor(tf, config.model, _loopback_floor)
            if driver is not None:
                driver.ask("setup " + json.dumps(asdict(config)))
            blocks: dict[str, list[dict]] = {name: [] for name in runners}
            if driver is not None:
                blocks["tensorflow"] = []
            for cycle in range(cycles + 1):  # the first cycle warms up
                for name in blocks:
                    if name == "tensorflow":
                        assert driver is not None
                        got = driver.ask(f"block {block_s}")
                    else:
                        got = runners[name].block(block_s)  # type: ignore[attr-defined]
                    if cycle:
                        blocks[name].append(got)
            for runner in runners.values():
                runner.close()  # type: ignore[attr-defined]
            if driver is not None:
                driver.ask("close")
            for name, got in blocks.items():
                note = runners["floor"].note(got) if name == "floor" else ""  # type: ignore
                out += _results(config, name, got, note)
            log(
                config.label,
                {
                    k: round(statistics.median(b["examples_per_s"] for b in v))
                    for k, v in blocks.items()
                },
            )
    finally:
        if driver is not None:
            driver.close()
        for cluster in clusters.values():
            cluster.close()
    return out


def _without_local_plane() -> None:
    """In a worker: tensors between its tasks and local peers over Dask's TLS connections
    instead of Unix sockets (``distributed.local_plane``), to measure what those save."""
    from nbflow.distributed.plugin import TaskHost

    TaskHost.local_plane = False


def run_nbflow(quick: bool = False) -> list[Result]:
    """The suite's rows for ``bench.run``: every framework's, since they alternate in one run."""
    models = ("fig1",) if quick else ("fig1", "large")
    return measure(
        configs(models), cycles=3 if quick else 5, with_tensorflow=tensorflow_available()
    )


def table(results: list[Result]) -> str:
    """examples/s, global steps/s (synchronous) and step ms per configuration, each framework,
    and the ratios."""
    by = {(r.workload, r.framework): r for r in results}
    frameworks = list(dict.fromkeys(r.framework for r in results))
    labels = list(
        dict.fromkeys(r.workload for r in results if not r.workload.endswith(")"))
    )  # fmt: skip
    head = ["configuration"]
    for f in frameworks:
        head += [f"{f} ex/s", f"{f} steps/s", f"{f} ms"]
    head += ["nbflow/TF", "nbflow/floor"]
    rows = [head]
    for label in labels:
        row = [label]
        for f in frameworks:
            rate_ = by.get((label, f))
            steps = by.get((label + " (global steps)", f))
            step = by.get((label + " (step)", f))
            row += [
                f"{rate_.value:,.0f}" if rate_ else "",
                f"{steps.value:.1f}" if steps else "",
                f"{step.value:.2f}" if step else "",
            ]
        nb, ref = by.get((label, "nbflow")), by.get((label, "tensorflow"))
        row.append(f"{nb.value / ref.value:.2f}x" if nb and ref else "")
        floor = by.get((label.split(",")[0] + ", async, 1 worker", "floor"))
        row.append(
            f"{nb.value / floor.value:.2f}x"
            if nb and floor and "1 worker" in label and "async" in label
            else ""
        )
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--insecure", action="store_true", help="add nbflow on plain TCP")
    parser.add_argument(
        "--tls-only", action="store_true", help="add nbflow without the Unix-socket data plane"
    )
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--models", default="fig1,large", help="comma-separated: fig1, large")
    parser.add_argument("--profile", action="store_true", help="CPU ms per step per process")
    parser.add_argument("--tf-driver", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tf_driver:
        tf_driver()
        return
    print(run_header(), flush=True)
    if args.profile:
        for label, security, local_plane in [
            ("TLS, Unix sockets on this machine", True, True),
            ("TLS only", True, False),
            ("plain TCP, Unix sockets on this machine", False, True),
            ("plain TCP only", False, False),
        ]:
            got = profile(security=security, local_plane=local_plane)
            print(label, json.dumps(got), flush=True)
        return
    models = ("fig1",) if args.quick else tuple(args.models.split(","))
    results = measure(
        configs(models),
        cycles=args.cycles,
        with_tensorflow=tensorflow_available(),
        insecure=args.insecure,
        tls_only=args.tls_only,
        verbose=True,
    )
    print(table(results))
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main()
