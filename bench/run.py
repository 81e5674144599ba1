"""Run the benchmark suites side by side and print one table per suite.

    python -m bench.run                 # every suite (TF and PyTorch from .benchvenv)
    python -m bench.run --suite core    # one suite
    python -m bench.run --quick         # fewer repeats

TensorFlow (tf.compat.v1 graph mode) and PyTorch are not nbflow dependencies: ``bash
bench/setup.sh`` installs them into ``.benchvenv``; when it exists, each of their workloads runs
there as a child process in the same run, so every ratio compares figures of one run on one
machine. Results go to bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from bench.common import Result, blas_kernels, cpu_model, run_header

ROOT = Path(__file__).resolve().parent.parent
BENCH_VENV = ROOT / ".benchvenv" / "bin" / "python"
SUITES = [
    "core",
    "training",
    "distributed",
    "distributed_training",
    "control_flow",
    "checkpoints",
    "devices",
]
FRAMEWORKS_HERE = ["nbflow", "numpy"]
FRAMEWORKS_ELSEWHERE = ["tensorflow", "pytorch"]


def run_suite_here(suite: str, framework: str, quick: bool) -> list[dict]:
    module = importlib.import_module(f"bench.{suite}")
    runner = getattr(module, f"run_{framework}", None)
    if runner is None:
        return []
    return [r.as_dict() for r in runner(quick=quick)]


def run_suite_in_bench_venv(suite: str, framework: str, quick: bool) -> list[dict]:
    if not BENCH_VENV.exists():
        return []
    cmd = [str(BENCH_VENV), "-m", "bench.run", "--child", framework, "--suite", suite]
    if quick:
        cmd.append("--quick")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "CUDA_VISIBLE_DEVICES": "",
    }
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"[{framework}/{suite} failed]\n{proc.stderr[-2000:]}", file=sys.stderr)
        return []
    return json.loads(proc.stdout.strip().splitlines()[-1])


def format_table(results: list[dict]) -> str:
    """Rows: workloads; columns: frameworks; plus nbflow's ratio to TensorFlow."""
    frameworks = [
        f
        for f in ["nbflow", "tensorflow", "pytorch", "numpy"]
        if any(r["framework"] == f for r in results)
    ]
    workloads = list(dict.fromkeys(r["workload"] for r in results))
    by = {(r["workload"], r["framework"]): r for r in results}
    header = ["workload", "unit", *frameworks, "nbflow / TF"]
    rows = [header]
    for w in workloads:
        unit = next(r["unit"] for r in results if r["workload"] == w)
        row = [w, unit]
        for f in frameworks:
            r = by.get((w, f))
            row.append(_fmt(r["value"]) if r else "n/a")
        nb, tf = by.get((w, "nbflow")), by.get((w, "tensorflow"))
        if nb and tf:
            ratio = nb["value"] / tf["value"]
            if nb.get("lower_is_better"):
                ratio = 1 / ratio
            row.append(f"{ratio:.2f}x")
        else:
            row.append("n/a")
        rows.append(row)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")
        if k == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def machine() -> dict:
    import numpy

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cpus": os.cpu_count(),
        "cpu": cpu_model(),
        "blas": blas_kernels(),
        "platform": platform.platform(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", choices=SUITES)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    suites = args.suite or SUITES
    if args.child:
        results = []
        for suite in suites:
            results += run_suite_here(suite, args.child, args.quick)
        print(json.dumps(results))
        return
    everything = []
    print(run_header())
    for suite in suites:
        results = []
        for framework in FRAMEWORKS_HERE:
            results += run_suite_here(suite, framework, args.quick)
        for framework in FRAMEWORKS_ELSEWHERE:
            results += run_suite_in_bench_venv(suite, framework, args.quick)
        derived = getattr(importlib.import_module(f"bench.{suite}"), "floor_rows", None)
        if derived is not None:
            results += [r.as_dict() for r in derived([Result(**r) for r in results])]
        print(f"\n## {suite}\n")
        print(format_table(results))
        everything += results
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(
        json.dumps({"machine": machine(), "results": everything}, indent=1)
    )


if __name__ == "__main__":
    main()
