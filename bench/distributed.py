"""Issue 6's workloads: OSDI Figure 7 null steps on this machine's loopback, and sync training.

Null steps (K ps tasks, N worker loops, each loop its own session on its own worker task,
all running at once): every step each worker reads the model from the ps tasks (Recv) and
sends a scalar update back. Models: a scalar per ps; dense 100 MB split over the ps tasks
(fetch all parameters); sparse — a gather of 32 random rows of a 100 MB or 1 GB embedding
(the 1 GB one unless --quick or under 8 GiB of memory available), colocated with its shards.
Median, 10th and 90th percentile step time in ms. The floor for the dense step is 2 x 100 MB
over a raw loopback TCP socket. TensorFlow runs the scalar and
sparse null steps with its own servers (``tf.distribute.Server`` on localhost ports).

Synchronous data parallelism (Figure 1's MLP, batch 64 per worker): N worker loops compute
gradients, the chief-less aggregation averages the first m of N per step; examples/s with
m = N, with m = N-1 (one backup worker) and a deliberately slowed straggler.
"""

from __future__ import annotations

import os
import queue
import socket
import statistics
import threading
import time

import numpy as np

from bench.common import Result, tensorflow_v1

SUITE = "distributed"
MB = 1 << 20


def _percentiles(times: list[float]) -> tuple[float, tuple[float, float]]:
    ordered = sorted(t * 1e3 for t in times)
    lo = ordered[int(0.1 * (len(ordered) - 1))]
    hi = ordered[int(round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered), (lo, hi)


def _null_step_graphs(tf, model: str, k: int, n: int, embedding_bytes: int = 0):
    """One graph per worker loop: (graph, init op or None, step fetch, feed builder)."""
    out = []
    tag = f"{model}{embedding_bytes // MB}k{k}n{n}_"
    for w in range(n):
        graph = tf.Graph()
        with graph.as_default():
            shards = []
            for p in range(k):
                with tf.device(f"/job:ps/task:{p}"):
                    if model == "scalar":
                        shards.append(tf.Variable(0.0, name=f"{tag}s{p}"))
                    elif model == "dense":
                        size = 100 * MB // 4 // k
                        shards.append(tf.Variable(tf.zeros([size]), name=f"{tag}d{p}"))
                    else:
                        rows = embedding_bytes // 4 // 1024 // k
                        shards.append(tf.Variable(tf.zeros([rows, 1024]), name=f"{tag}e{p}"))
            ids = None
            with tf.device(f"/job:worker/task:{w}"):
                if model == "sparse":
                    ids = tf.placeholder(tf.int32, [32], name="ids")
                    parts = []
                    for p, shard in enumerate(shards):
                        with tf.device(f"/job:ps/task:{p}"):
                            parts.append(tf.gather(shard, ids))
                    value = tf.add_n([tf.reduce_sum(x) for x in parts])
                else:
                    value = tf.add_n([tf.reduce_sum(s) for s in shards])
            updates = []
            for p in range(k):
                with tf.device(f"/job:ps/task:{p}"):
                    counter = tf.Variable(0.0, name=f"{tag}c{p}")
                    updates.append(tf.assign_add(counter, value * 0.0 + 1.0))
            step = tf.group(*updates)
            init = tf.global_variables_initializer() if w == 0 else None
            rows = (embedding_bytes // 4 // 1024 // k) if model == "sparse" else 0
        out.append((graph, init, step, ids, rows))
    return out


def _run_null_steps(tf, target_of, model: str, k: int, n: int, steps: int, emb: int = 0):
    built = _null_step_graphs(tf, model, k, n, emb)
    graph0, init, _, _, _ = built[0]
    with tf.Session(target_of(0), graph=graph0) as sess:
        sess.run(init)
    times: list[float] = []
    barrier = threading.Barrier(n)

    def loop(w: int) -> None:
        graph, _, step, ids, rows = built[w]
        rng = np.random.default_rng(w)
        with tf.Session(target_of(w), graph=graph) as sess:
            feed = (
                (lambda: {ids: rng.integers(0, rows * k, 32).astype(np.int32) % rows})
                if (ids is not None)
                else (lambda: None)
            )
            for _ in range(3):
                sess.run(step, feed())
            barrier.wait()
            for _ in range(steps):
                start = time.perf_counter()
                sess.run(step, feed())
                times.append(time.perf_counter() - start)

    threads = [threading.Thread(target=loop, args=(w,)) for w in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return _percentiles(times)


def _loopback_floor(nbytes: int = 100 * MB, rounds: int = 5) -> float:
    """Median ms to move ``nbytes`` there and back over a raw loopback TCP connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    payload = np.ones(nbytes, np.uint8).tobytes()

    def echo() -> None:
        conn, _ = server.accept()
        buf = bytearray(nbytes)
        view = memoryview(buf)
        for _ in range(rounds):
            got = 0
            while got < nbytes:
                got += conn.recv_into(view[got:])
            conn.sendall(buf)
        conn.close()

    thread = threading.Thread(target=echo)
    thread.start()
    client = socket.create_connection(server.getsockname())
    back = bytearray(nbytes)
    view = memoryview(back)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        client.sendall(payload)
        got = 0
        while got < nbytes:
            got += client.recv_into(view[got:])
        times.append(time.perf_counter() - start)
    thread.join()
    client.close()
    server.close()
    return statistics.median(times) * 1e3


def _embeddings(quick: bool) -> list[int]:
    """Embedding sizes of the sparse rows: 100 MB, and 1 GB unless quick or short of memory
    (the ps tasks hold it once, plus its initial value while initializing)."""
    sizes = [100 * MB]
    if not quick and _available_bytes() > 8 * 1024 * MB:
        sizes.append(1024 * MB)
    return sizes


def _available_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            fields = dict(line.split(":", 1) for line in f)
        return int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _figure7(
    tf, framework: str, target_of, quick: bool, models, ks, ns, reset=lambda: None
) -> list[Result]:
    out = []
    for model, emb in models:
        for k in ks:
            for n in ns:
                steps = (20 if quick else 60) if model != "dense" else (4 if quick else 10)
                median, spread = _run_null_steps(tf, target_of, model, k, n, steps, emb)
                reset()  # free the model on the ps tasks
                label = model if model != "sparse" else f"sparse 32 rows of {emb // MB} MB"
                if model == "dense":
                    label = "dense 100 MB"
                out.append(
                    Result(
                        SUITE,
                        f"Fig7 null step: {label}, {k} ps, {n} workers",
                        framework,
                        median,
                        "ms",
                        steps * n,
                        spread,
                        lower_is_better=True,
                    )
                )
    return out


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf
    from nbflow.distributed import Cluster

    out = []
    ns = (1, 2) if quick else (1, 2, 4)
    with Cluster.local(
        n_workers=4, threads_per_worker=1, memory_limit="4GiB", spec={"ps": 2, "worker": 4}
    ) as cluster:
        models = [("scalar", 0), ("dense", 0)] + [("sparse", e) for e in _embeddings(quick)]
        out += _figure7(
            tf, "nbflow", lambda w: cluster.target, quick, models, (1, 2), ns, cluster.reset
        )
        out += _sync_training(tf, cluster, quick)
    floor = _loopback_floor()
    out.append(
        Result(
            SUITE,
            "floor: 2 x 100 MB over raw loopback TCP",
            "numpy",
            floor,
            "ms",
            5,
            (floor, floor),
            lower_is_better=True,
        )  # fmt: skip
    )
    return out


def _sync_training(tf, cluster, quick: bool) -> list[Result]:
    """Figure 1's MLP, synchronous data parallel: examples/s with and without a backup.

    Each replica is a long-lived loop (its own thread, its own step on its own worker task)
    that computes the gradients of the current model when the aggregator asks; the aggregator
    takes the first m to arrive, averages them and applies them on the ps task (a step of its
    own). Late gradients of a step are dropped (stale); a replica behind skips to the newest
    request, as a SyncReplicasOptimizer worker takes the newest token.
    """
    out = []
    steps = 8 if quick else 30
    for n in (1, 2, 4):
        for backups, straggler in ((0, False), (0, True), (1, True)):
            if n == 1 and (backups or straggler):
                continue
            m = n - backups
            graph = tf.Graph()
            with graph.as_default():
                with tf.device("/job:ps/task:0"):
                    w1 = tf.Variable(tf.random_normal([784, 256], stddev=0.05), name="w1")
                    w2 = tf.Variable(tf.random_normal([256, 10], stddev=0.05), name="w2")
                    a1 = tf.placeholder(tf.float32, [784, 256])
                    a2 = tf.placeholder(tf.float32, [256, 10])
                    apply = tf.train.GradientDescentOptimizer(0.01).apply_gradients(
                        [(a1, w1), (a2, w2)]
                    )
                towers = []
                for r in range(n):
                    with tf.device(f"/job:worker/task:{r}"):
                        x = tf.placeholder(tf.float32, [64, 784])
                        y = tf.placeholder(tf.int32, [64])
                        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
                        loss = tf.reduce_mean(
                            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                        )
                        towers.append((x, y, tf.gradients(loss, [w1, w2])))
                init = tf.global_variables_initializer()
            rng = np.random.default_rng(0)
            xs = rng.normal(size=(64, 784)).astype(np.float32)
            ys = rng.integers(0, 10, 64).astype(np.int32)
            with tf.Session(cluster.target, graph=graph) as sess:
                sess.run(init)
                requests: list[queue.SimpleQueue] = [queue.SimpleQueue() for _ in range(n)]
                arrivals: queue.SimpleQueue = queue.SimpleQueue()

                def replica(r: int) -> None:
                    x, y, grads = towers[r]
                    while True:
                        step = requests[r].get()
                        while step is not None and not requests[r].empty():
                            step = requests[r].get()  # behind: only the newest step counts
                        if step is None:
                            return
                        value = sess.run(grads, {x: xs, y: ys})
                        if straggler and r == n - 1:
                            time.sleep(0.1)  # the deliberately slowed straggler
                        arrivals.put((step, value))

                threads = [threading.Thread(target=replica, args=(r,)) for r in range(n)]
                for t in threads:
                    t.start()
                start = 0.0
                for i in range(steps + 2):
                    if i == 2:
                        start = time.perf_counter()
                    for q in requests:
                        q.put(i)
                    first: list = []
                    while len(first) < m:
                        step, value = arrivals.get()
                        if step == i:  # gradients of an earlier step are stale: dropped
                            first.append(value)
                    g1 = sum(g[0] for g in first) / m
                    g2 = sum(g[1] for g in first) / m
                    sess.run(apply, {a1: g1, a2: g2})
                elapsed = time.perf_counter() - start
                for q in requests:
                    q.put(None)
                for t in threads:
                    t.join()
            label = f"Fig1 MLP sync, {n} workers"
            label += ", slowed straggler" if straggler else ""
            label += f", {backups} backup (m={m})" if backups else ""
            examples = steps * 64 * m / elapsed
            out.append(
                Result(SUITE, label, "nbflow", examples, "examples/s", steps, (examples, examples))
            )
    return out


def run_tensorflow(quick: bool = False) -> list[Result]:
    import multiprocessing as mp

    import tensorflow as tf2

    tf = tensorflow_v1()
    out = []
    ports = []
    for _ in range(2 + 4):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    spec = {
        "ps": [f"127.0.0.1:{p}" for p in ports[:2]],
        "worker": [f"127.0.0.1:{p}" for p in ports[2:]],
    }
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_tf_server, args=(spec, "ps", i), daemon=True) for i in range(2)]
    procs += [
        ctx.Process(target=_tf_server, args=(spec, "worker", i), daemon=True) for i in range(1, 4)
    ]
    for p in procs:
        p.start()
    server = tf2.distribute.Server(tf.train.ClusterSpec(spec), job_name="worker", task_index=0)
    targets = [server.target] + [f"grpc://{a}" for a in spec["worker"][1:]]
    try:
        ns = (1, 2) if quick else (1, 2, 4)
        models = [("scalar", 0)] + [("sparse", e) for e in _embeddings(quick)]
        out += _figure7(tf, "tensorflow", lambda w: targets[w], quick, models, (1, 2), ns)
    finally:
        for p in procs:
            p.kill()
    return out


def _tf_server(spec, job, index) -> None:
    import tensorflow as tf2

    server = tf2.distribute.Server(
        tf2.compat.v1.train.ClusterSpec(spec), job_name=job, task_index=index
    )
    server.join()


# --- nbflow and TensorFlow interleaved ------------------------------------------------------------
def _tf_null_step_driver() -> None:
    """Child (``.benchvenv``): TF servers for 1 ps and 1 worker; per stdin line ``MODEL N`` it
    runs N null steps and prints their times (JSON)."""
    import json
    import multiprocessing as mp
    import sys

    import tensorflow as tf2

    tf = tensorflow_v1()
    ports = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    spec = {"ps": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{ports[1]}"]}
    ps = mp.get_context("spawn").Process(target=_tf_server, args=(spec, "ps", 0), daemon=True)
    ps.start()
    server = tf2.distribute.Server(tf.train.ClusterSpec(spec), job_name="worker", task_index=0)
    steps: dict = {}
    rng = np.random.default_rng(0)
    try:
        for line in sys.stdin:
            model, n = line.split()
            if model not in steps:
                emb = 100 * MB if model == "sparse" else 0
                ((graph, init, step, ids, rows),) = _null_step_graphs(tf, model, 1, 1, emb)
                sess = tf.Session(server.target, graph=graph)
                sess.run(init)
                steps[model] = (sess, step, ids, rows)
            sess, step, ids, rows = steps[model]
            times = []
            for _ in range(int(n)):
                feed = {ids: rng.integers(0, rows, 32).astype(np.int32)} if rows else None
                start = time.perf_counter()
                sess.run(step, feed)
                times.append(time.perf_counter() - start)
            print(json.dumps(times), flush=True)
    finally:
        ps.kill()


def interleaved(cycles: int = 10, block: int = 40) -> None:
    """nbflow's and TensorFlow's 1 ps x 1 worker null steps in alternating blocks, so a busy
    machine's load falls on both alike (``python -m bench.distributed --interleaved``)."""
    import json
    import subprocess
    from pathlib import Path

    import nbflow as tf
    from nbflow.distributed import Cluster

    root = Path(__file__).resolve().parent.parent
    child = subprocess.Popen(
        [str(root / ".benchvenv/bin/python"), "-m", "bench.distributed", "--tf-driver"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "TF_CPP_MIN_LOG_LEVEL": "3"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None

    def tf_block(model: str, n: int) -> list[float]:
        child.stdin.write(f"{model} {n}\n")
        child.stdin.flush()
        return json.loads(child.stdout.readline())

    rng = np.random.default_rng(0)
    try:
        with Cluster.local(n_workers=2, memory_limit="2GiB", spec={"ps": 1, "worker": 1}) as c:
            for model in ("scalar", "sparse"):
                emb = 100 * MB if model == "sparse" else 0
                ((graph, init, step, ids, rows),) = _null_step_graphs(tf, model, 1, 1, emb)
                times: dict[str, list[float]] = {"nbflow": [], "tensorflow": []}
                with tf.Session(c.target, graph=graph) as sess:
                    sess.run(init)
                    tf_block(model, 5)
                    for _ in range(cycles):
                        for _ in range(5 + block):
                            feed = (
                                {ids: rng.integers(0, rows, 32).astype(np.int32)} if rows else None
                            )
                            start = time.perf_counter()
                            sess.run(step, feed)
                            times["nbflow"].append(time.perf_counter() - start)
                        del times["nbflow"][-(5 + block) : -block]  # warm-up of the block
                        times["tensorflow"] += tf_block(model, block)
                c.reset()
                nb, ref = (statistics.median(times[f]) * 1e3 for f in ("nbflow", "tensorflow"))
                print(f"{model:6} nbflow {nb:.3f} ms, TensorFlow {ref:.3f} ms: {ref / nb:.2f}x")
    finally:
        child.stdin.close()  # the driver stops its ps server and exits
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
    print("load average", os.getloadavg())


if __name__ == "__main__":
    import sys

    if "--tf-driver" in sys.argv:
        _tf_null_step_driver()
    elif "--interleaved" in sys.argv:
        interleaved()
