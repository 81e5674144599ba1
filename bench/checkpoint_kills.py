"""Kill a checkpointing process at random moments; count lost and corrupt checkpoints.

    python -m bench.checkpoint_kills                      # 50 trials, 100 MB per save
    python -m bench.checkpoint_kills --trials 8 --mb 2    # a quick run

A child process builds variables of ``--mb`` megabytes in all and loops like a restarted
training job: it restores the latest checkpoint, **re-saves that same step** first (as the
checkpoint hook does after a restart), then saves step after step with ``max_to_keep`` 1 or 3
(alternating between trials, each setting with its own directory). A save of step ``n`` stores
``n + k / 8`` in every variable, ``k`` counting the saves of that step, so a checkpoint is
consistent exactly when all its tensors hold one value whose whole part is its step. After each
save returns, the child prints ``saved n``.

The parent SIGKILLs the child at a random moment of its saving loop, then checks:

- **lost**: the state file's latest checkpoint is older than the last save the child reported
  done, or there is none although a save was done;
- **corrupt**: a checkpoint the state file names does not read (CRC, missing files) or is not
  consistent, or ``checkpoint_exists`` says yes for a prefix that does not read.

It also counts leftover files (temporary files, data without an index) found right after a
kill; the next child's first save removes them, and the final check confirms none remain.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

VARIABLES = 4
_STEP = re.compile(r"-(\d+)(?:\.resave-r\w+)?$")


def _step(prefix: str) -> int:
    match = _STEP.search(prefix)
    if match is None:
        raise ValueError(f"no step in checkpoint name {prefix}")
    return int(match.group(1))


def child(directory: str, max_to_keep: int, megabytes: float) -> None:
    import nbflow as tf

    size = max(1, int(megabytes * 2**20 / 4 / VARIABLES))
    values = [tf.Variable(np.zeros(size, np.float32), name=f"layer{i}/w") for i in range(VARIABLES)]
    saver = tf.train.Saver(max_to_keep=max_to_keep)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        latest = tf.train.latest_checkpoint(directory)
        step = _step(latest) if latest else 1
        if latest:
            saver.restore(sess, latest)
            saver.recover_last_checkpoints(
                tf.train.get_checkpoint_state(directory).all_model_checkpoint_paths
            )
        resaves: dict[int, int] = {}
        while True:
            k = resaves[step] = resaves.get(step, 0) + 1
            for v in values:
                v.load(np.full(size, step + (k % 8) / 8, np.float32), sess)
            print(f"saving {step}", flush=True)
            saver.save(
                sess,
                os.path.join(directory, "model.ckpt"),
                global_step=step,
                write_meta_graph=False,
            )
            print(f"saved {step}", flush=True)
            if random.random() < 0.7:  # otherwise re-save the same step
                step += 1


@dataclass
class Tally:
    trials: int = 0
    kills_while_saving: int = 0
    lost: int = 0
    corrupt: int = 0
    leftovers_after_kill: int = 0
    leftovers_after_cleanup: int = 0
    problems: list[str] = field(default_factory=list)


def _check(directory: str, last_done: int | None, tally: Tally) -> None:
    import nbflow as tf
    from nbflow import errors

    latest = tf.train.latest_checkpoint(directory)
    if last_done is not None and (latest is None or _step(latest) < last_done):
        tally.lost += 1
        tally.problems.append(f"lost: latest is {latest} but step {last_done} was saved")
    complete = sorted(  # every prefix checkpoint_exists accepts must read and be consistent
        os.path.join(directory, n[: -len(".index")])
        for n in os.listdir(directory)
        if n.endswith(".index") and tf.train.checkpoint_exists(os.path.join(directory, n[:-6]))
    )
    for prefix in complete:
        try:
            values = tf.train.checkpoint_to_dict(prefix)
            seen = {float(v.ravel()[0]) for v in values.values()}
            seen |= {float(v.ravel()[-1]) for v in values.values()}
            if len(seen) != 1 or int(next(iter(seen))) != _step(prefix):
                raise ValueError(f"inconsistent values {sorted(seen)}")
        except (errors.OpError, ValueError) as e:
            tally.corrupt += 1
            tally.problems.append(f"corrupt: {prefix}: {e}")
    tally.leftovers_after_kill += len(_leftovers(directory))


def _leftovers(directory: str) -> list[str]:
    names = os.listdir(directory)
    return [
        n
        for n in names
        if "_temp_" in n
        or ".tmp-" in n
        or (".data-" in n and n.split(".data-")[0] + ".index" not in names)
    ]


def run_trials(
    root: str, trials: int, megabytes: float, seed: int = 0, max_kill_delay: float = 2.0
) -> Tally:
    """``trials`` kills, alternating max_to_keep 1 and 3; returns the tally."""
    rng = random.Random(seed)
    tally = Tally()
    last_done: dict[int, int | None] = {1: None, 3: None}
    for trial in range(trials):
        keep = 1 if trial % 2 == 0 else 3
        directory = os.path.join(root, f"keep{keep}")
        os.makedirs(directory, exist_ok=True)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.checkpoint_kills",
                "--child",
                directory,
                str(keep),
                str(megabytes),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        assert proc.stdout is not None
        saves_before_kill = rng.randint(1, 3)
        seen, last_line = 0, ""
        for line in proc.stdout:
            last_line = line
            if line.startswith("saved"):
                last_done[keep] = int(line.split()[1])
            if line.startswith("saving"):
                seen += 1
                if seen >= saves_before_kill:
                    break
        time.sleep(rng.uniform(0, max_kill_delay))  # a random moment within or after the save
        proc.send_signal(signal.SIGKILL)
        for line in proc.stdout.read().splitlines():  # what it wrote before the kill
            last_line = line
            if line.startswith("saved"):
                last_done[keep] = int(line.split()[1])
        proc.wait()
        tally.kills_while_saving += last_line.startswith("saving")
        tally.trials += 1
        _check(directory, last_done[keep], tally)
    from nbflow.train.saver import clean_leftovers  # what the next Saver's first save runs

    for keep in (1, 3):
        directory = os.path.join(root, f"keep{keep}")
        if os.path.isdir(directory):
            clean_leftovers(os.path.join(directory, "model.ckpt"))
            tally.leftovers_after_cleanup += len(_leftovers(directory))
            counted = tally.leftovers_after_kill
            _check(directory, last_done[keep], tally)  # still nothing lost or corrupt
            tally.leftovers_after_kill = counted
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--mb", type=float, default=100.0, help="megabytes saved per step")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=3, metavar=("DIR", "MAX_TO_KEEP", "MB"))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), float(args.child[2]))
        return
    with tempfile.TemporaryDirectory(prefix="nbflow-kills-") as root:
        start = time.time()
        tally = run_trials(root, args.trials, args.mb, args.seed)
        print(
            f"{tally.trials} SIGKILLs ({tally.kills_while_saving} during a save), "
            f"{args.mb:g} MB per save, max_to_keep 1 and 3, re-saves included: "
            f"{tally.lost} lost, {tally.corrupt} corrupt, {tally.leftovers_after_kill} leftover "
            f"files right after kills, {tally.leftovers_after_cleanup} after the cleanup a "
            f"Saver's first save runs; {time.time() - start:.0f} s"
        )
        for problem in tally.problems:
            print(" ", problem)


if __name__ == "__main__":
    main()
