"""tf.app.run, tf.flags and tf.logging behave as TensorFlow 1.x's (built on absl-py)."""

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import absl.flags
import pytest

import nbflow as tf
from nbflow.flags import ImplicitlyParsedFlags

SCRIPT = """
import sys
import nbflow as tf

tf.app.flags.DEFINE_integer("steps", 10, "training steps")
tf.flags.DEFINE_string("name", "model", "run name")
tf.flags.DEFINE_boolean("fast", False, "skip checks")
FLAGS = tf.app.flags.FLAGS

def main(argv):
    print("steps", FLAGS.steps, "name", FLAGS.name, "fast", FLAGS.fast, "argv", argv[1:])
    return {code}

if __name__ == "__main__":
    tf.app.run()
"""


def run_script(tmp_path, code, *args):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SCRIPT.format(code=code)))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}  # this checkout's nbflow
    return subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_app_run_parses_flags_and_passes_unclaimed_arguments_to_main(tmp_path):
    done = run_script(tmp_path, "0", "--steps=7", "--fast", "--unknown=1", "data.csv")
    assert done.returncode == 0, done.stderr
    assert "steps 7 name model fast True argv ['--unknown=1', 'data.csv']" in done.stdout


def test_app_run_exits_with_what_main_returns(tmp_path):
    done = run_script(tmp_path, "3", "--name=x")
    assert done.returncode == 3, done.stderr
    assert "name x" in done.stdout


def fresh_flags():
    values = absl.flags.FlagValues()
    return values, ImplicitlyParsedFlags(values)


def test_reading_a_flag_parses_argv_and_ignores_a_notebook_kernels_arguments(monkeypatch):
    values, flags = fresh_flags()
    tf.flags.DEFINE_float("learning_rate", 0.1, "step size", flag_values=flags)
    argv = ["ipykernel_launcher.py", "-f", "/run/kernel-1.json", "--learning_rate=0.5"]
    monkeypatch.setattr(sys, "argv", argv)
    assert not values.is_parsed()
    assert flags.learning_rate == 0.5
    assert values.is_parsed()


def test_every_define_function_parses_its_type():
    values, flags = fresh_flags()
    kw = {"flag_values": values}
    tf.flags.DEFINE_string("s", "a", "", **kw)
    tf.flags.DEFINE_integer("i", 1, "", **kw)
    tf.flags.DEFINE_float("f", 1.0, "", **kw)
    tf.flags.DEFINE_boolean("b", False, "", **kw)
    tf.flags.DEFINE_bool("b2", True, "", **kw)
    tf.flags.DEFINE_list("l", [], "", **kw)
    tf.flags.DEFINE_enum("e", "adam", ["adam", "sgd"], "", **kw)
    tf.flags.DEFINE_multi_string("ms", [], "", **kw)
    tf.flags.DEFINE_multi_integer("mi", [], "", **kw)
    tf.flags.DEFINE_multi_float("mf", [], "", **kw)
    args = "--s=x --i=5 --f=2.5 --b --nob2 --l=a,b --e=sgd --ms=p --ms=q --mi=1 --mi=2 --mf=0.5"
    flags(["prog", *args.split()])
    got = [flags[n].value for n in ("s", "i", "f", "b", "b2", "l", "e", "ms", "mi", "mf")]
    assert got == ["x", 5, 2.5, True, False, ["a", "b"], "sgd", ["p", "q"], [1, 2], [0.5]]
    with pytest.raises(absl.flags.IllegalFlagValueError):
        flags(["prog", "--e=rmsprop"])


def test_old_tensorflow_keyword_names_are_accepted():
    values, flags = fresh_flags()
    tf.flags.DEFINE_integer(
        flag_name="epochs", default_value=4, docstring="passes", flag_values=values
    )
    flags(["prog"])
    assert flags.epochs == 4 and values["epochs"].help == "passes"


def test_redefining_a_flag_from_the_same_module_replaces_it_like_a_rerun_cell():
    values, flags = fresh_flags()
    tf.flags.DEFINE_integer("units", 8, "", flag_values=values)
    tf.flags.DEFINE_integer("units", 16, "", flag_values=values)
    flags(["prog"])
    assert flags.units == 16


def test_redefining_a_flag_from_another_module_raises_duplicate_flag_error():
    values, _ = fresh_flags()
    tf.flags.DEFINE_integer("units", 8, "", flag_values=values)
    other = {"__name__": "other_module", "tf": tf, "values": values}
    with pytest.raises(absl.flags.DuplicateFlagError, match="units"):
        exec("tf.flags.DEFINE_integer('units', 1, '', flag_values=values)", other)


def test_process_flags_are_absls_and_tf_app_flags_is_tf_flags():
    assert tf.app.flags is tf.flags
    assert tf.flags.FLAGS.__dict__["_wrapped"] is absl.flags.FLAGS
    assert tf.flags.DuplicateFlagError is absl.flags.DuplicateFlagError


def test_logging_levels_are_tensorflows_numbers():
    levels = (tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR)
    assert levels + (tf.logging.FATAL,) == (10, 20, 30, 40, 50)


def test_verbosity_filters_messages_and_is_read_back(caplog):
    caplog.set_level(tf.logging.DEBUG, logger="nbflow")
    tf.logging.set_verbosity(tf.logging.WARN)
    tf.logging.info("hidden")
    tf.logging.warn("shown %d", 1)
    tf.logging.set_verbosity(tf.logging.DEBUG)
    assert tf.logging.get_verbosity() == tf.logging.DEBUG
    tf.logging.debug("debug %s", "too")
    tf.logging.error("bad")
    tf.logging.fatal("worse")
    tf.logging.TaskLevelStatusMessage("status")
    tf.logging.log(tf.logging.INFO, "logged")
    tf.logging.vlog(tf.logging.INFO, "verbose")
    got = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert got == [(30, "shown 1"), (10, "debug too"), (40, "bad"), (50, "worse"),
                   (40, "status"), (20, "logged"), (20, "verbose")]  # fmt: skip
    assert {r.name for r in caplog.records} == {"nbflow"}
    assert {r.filename for r in caplog.records} == {"test_app_flags_logging.py"}
    tf.logging.flush()


def test_log_every_n_first_n_and_if_count_per_calling_line(caplog):
    tf.logging.set_verbosity(tf.logging.INFO)
    caplog.set_level(tf.logging.INFO, logger="nbflow")
    for i in range(7):
        tf.logging.log_every_n(tf.logging.INFO, "every %d", 3, i)
        tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
        tf.logging.log_if(tf.logging.INFO, "odd %d", i % 2, i)
    messages = [r.getMessage() for r in caplog.records]
    assert [m for m in messages if m.startswith("every")] == ["every 0", "every 3", "every 6"]
    assert [m for m in messages if m.startswith("first")] == ["first 0", "first 1"]
    assert [m for m in messages if m.startswith("odd")] == ["odd 1", "odd 3", "odd 5"]
    assert {r.filename for r in caplog.records} == {"test_app_flags_logging.py"}


def test_training_hook_logs_are_governed_by_tf_logging():
    assert tf.get_logger() is tf.logging.get_logger()
    before = tf.get_logger().level
    try:
        tf.logging.set_verbosity(tf.logging.ERROR)
        assert not logging.getLogger("nbflow.train").isEnabledFor(tf.logging.INFO)
        tf.logging.set_verbosity(tf.logging.INFO)
        assert logging.getLogger("nbflow.train").isEnabledFor(tf.logging.INFO)
    finally:
        tf.get_logger().setLevel(before)
