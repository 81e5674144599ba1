"""Issue 7's workloads: checkpoint throughput and summary-writing overhead.

(a) ``tf.train.Saver`` save and (b) restore of 1 GB of float32 variables (256 MB with --quick),
16 (4) variables of [4096, 4096] initialised in the graph by ``tf.random_uniform`` (no big
constants in the graph, and no data a format could compress), ``write_meta_graph=False``, in
MB/s, against the floor: ``numpy.save`` / ``numpy.load`` of the same arrays, one .npy file per
variable, to the same disk. nbflow's save is atomic and fsyncs its files, so the floor is given
twice: plain ``numpy.save`` (left in the page cache) in row (a) and ``numpy.save`` + fsync in
row (d). Reads come
from the page cache for every framework (the files were just written). The files go to a
temporary directory under bench/results/, on the repository's file system.

(c) summary-writing overhead of the OSDI Figure 1 MLP (784-100-10, batch 100, Adagrad; the
training suite's graph and data): every step also evaluates a merged scalar (the loss) and
histogram (the first layer's weights) summary and hands it to a ``FileWriter``, against the same
loop without summaries. Steps per second of both, and the slowdown in percent (the median of
paired, interleaved timings, so drift on a shared machine cancels out).

``BENCH_CHECKPOINTS=summaries`` (or ``=checkpoints``) runs only that half, in every framework:

    BENCH_CHECKPOINTS=summaries python -m bench.run --suite checkpoints
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import Result, _spread, tensorflow_v1
from bench.training import MLP_SMALL, _data, _mlp_graph

SUITE = "checkpoints"
RESULTS = Path(__file__).resolve().parent / "results"
SIDE = 4096  # one variable: [4096, 4096] float32 = 64 MiB


def _sizes(quick: bool) -> tuple[int, int]:
    """(number of variables, total MB) for 1 GiB, or 256 MiB in quick mode."""
    count = 4 if quick else 16
    return count, count * SIDE * SIDE * 4 // 2**20


def _timed(fn, repeats: int, warmup: int = 1) -> tuple[float, tuple[float, float], list[float]]:
    """Median seconds of ``fn`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), _spread(seconds), seconds


def _throughput(
    fn, megabytes: float, repeats: int, name: str, framework: str, note: str = ""
) -> Result:
    _, _, seconds = _timed(fn, repeats)
    rates = [megabytes / s for s in seconds]
    return Result(
        SUITE, name, framework, statistics.median(rates), "MB/s", repeats, _spread(rates), note=note
    )


def _labels(quick: bool) -> tuple[str, str, str]:
    count, megabytes = _sizes(quick)
    what = f"{megabytes:,} MB ({count} vars [{SIDE},{SIDE}])"
    return (
        f"a) save {what}",
        f"d) floor of an fsyncing save: numpy.save + fsync {what}",
        f"b) restore {what}",
    )


def _checkpoint(tf, framework: str, quick: bool) -> list[Result]:
    repeats = 3
    count, megabytes = _sizes(quick)
    save_name, _, restore_name = _labels(quick)
    graph = tf.Graph()
    with graph.as_default():
        variables = [
            tf.Variable(tf.random_uniform([SIDE, SIDE], seed=k + 1), name=f"v{k}")
            for k in range(count)
        ]
        saver = tf.train.Saver(variables)
        init = tf.global_variables_initializer()
    RESULTS.mkdir(exist_ok=True)
    out = []
    with tempfile.TemporaryDirectory(prefix="ckpt-", dir=RESULTS) as directory:
        prefix = os.path.join(directory, "model.ckpt")
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            save = lambda: saver.save(sess, prefix, write_meta_graph=False)
            out.append(_throughput(save, megabytes, repeats, save_name, framework))
            restore = lambda: saver.restore(sess, prefix)
            out.append(_throughput(restore, megabytes, repeats, restore_name, framework))
    return out


def _summaries(tf, framework: str, quick: bool) -> list[Result]:
    """Figure 1 MLP steps with and without a scalar + histogram summary written every step."""
    _, sizes, batch = MLP_SMALL
    base = "c) Figure 1 MLP b100"
    graph = tf.Graph()
    with graph.as_default():
        optimizer = _LossCapture(tf.train.AdagradOptimizer(0.01))
        x, y, train = _mlp_graph(tf, sizes, optimizer)
        first_weights = tf.trainable_variables()[0]
        summaries = tf.summary.merge(
            [
                tf.summary.scalar("loss", optimizer.loss),
                tf.summary.histogram("layer1/weights", first_weights),
            ]
        )
        init = tf.global_variables_initializer()
    xs, ys = _data(batch, sizes[0])
    feed = {x: xs, y: ys}
    step_no = iter(range(10**9))
    RESULTS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="logs-", dir=RESULTS) as logdir:
        with tf.Session(graph=graph) as sess:
            writer = tf.summary.FileWriter(logdir)
            sess.run(init)

            def plain():
                sess.run(train, feed)

            def with_summaries():
                _, serialized = sess.run([train, summaries], feed)
                writer.add_summary(serialized, next(step_no))

            for _ in range(20):
                plain()
                with_summaries()
            calls = _calibrate(with_summaries, 0.2 if quick else 0.5)
            repeats = 5 if quick else 9
            plain_rates, summary_rates, slowdowns = [], [], []
            for _ in range(repeats):  # interleaved pairs: both halves see the same machine load
                t_plain = _time_calls(plain, calls)
                t_summary = _time_calls(with_summaries, calls)
                plain_rates.append(calls / t_plain)
                summary_rates.append(calls / t_summary)
                slowdowns.append(100 * (t_summary / t_plain - 1))
            writer.close()
    return [
        Result(
            SUITE,
            f"{base} steps, no summaries",
            framework,
            statistics.median(plain_rates),
            "steps/s",
            repeats,
            _spread(plain_rates),
        ),
        Result(
            SUITE,
            f"{base} steps, scalar+histogram summary each step",
            framework,
            statistics.median(summary_rates),
            "steps/s",
            repeats,
            _spread(summary_rates),
            note="merged summary fetched with the train op, FileWriter.add_summary",
        ),
        Result(
            SUITE,
            f"{base} summary overhead (slowdown)",
            framework,
            statistics.median(slowdowns),
            "%",
            repeats,
            _spread(slowdowns),
            lower_is_better=True,
            note="median of paired interleaved timings",
        ),
    ]


class _LossCapture:
    """Passes ``minimize`` through to an optimizer and keeps the loss it was given."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.loss = None

    def minimize(self, loss, *args, **kwargs):
        self.loss = loss
        return self.optimizer.minimize(loss, *args, **kwargs)


def _time_calls(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - start


def _calibrate(fn, min_time: float) -> int:
    calls = 1
    while (elapsed := _time_calls(fn, calls)) < min_time / 4:
        calls *= 4
    return max(1, int(calls * min_time / max(elapsed, 1e-9)))


def _parts() -> set[str]:
    return set(os.environ.get("BENCH_CHECKPOINTS", "checkpoints,summaries").split(","))


def run_graph_framework(tf, framework: str, quick: bool) -> list[Result]:
    parts = _parts()
    return (_checkpoint(tf, framework, quick) if "checkpoints" in parts else []) + (
        _summaries(tf, framework, quick) if "summaries" in parts else []
    )


def run_nbflow(quick: bool = False) -> list[Result]:
    import nbflow as tf

    return run_graph_framework(tf, "nbflow", quick)


def run_tensorflow(quick: bool = False) -> list[Result]:
    return run_graph_framework(tensorflow_v1(), "tensorflow", quick)


def run_numpy(quick: bool = False) -> list[Result]:
    """The floor: numpy.save / numpy.load of the same arrays, one .npy file per variable."""
    if "checkpoints" not in _parts():
        return []
    repeats = 3
    count, megabytes = _sizes(quick)
    save_name, fsync_name, restore_name = _labels(quick)
    arrays = [np.random.default_rng(k).random((SIDE, SIDE), dtype=np.float32) for k in range(count)]
    RESULTS.mkdir(exist_ok=True)
    out = []
    with tempfile.TemporaryDirectory(prefix="npy-", dir=RESULTS) as directory:
        paths = [os.path.join(directory, f"v{k}.npy") for k in range(count)]

        def save():
            for path, array in zip(paths, arrays):
                np.save(path, array)

        def save_fsync():
            for path, array in zip(paths, arrays):
                with open(path, "wb") as f:
                    np.save(f, array)
                    f.flush()
                    os.fsync(f.fileno())
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

        def load():
            for path in paths:
                np.load(path)

        out.append(_throughput(save, megabytes, repeats, save_name, "numpy", note="no fsync"))
        out.append(_throughput(save_fsync, megabytes, repeats, fsync_name, "numpy"))
        out.append(_throughput(load, megabytes, repeats, restore_name, "numpy"))
    return out
