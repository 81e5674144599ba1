"""Checkpoints survive SIGKILLs: a few fast trials of ``bench/checkpoint_kills.py``.

The full run (50 kills of a process saving 100 MB per step) is ``python -m bench.checkpoint_kills``.
"""

import os

import numpy as np

import nbflow as tf
from bench.checkpoint_kills import run_trials


def test_random_kills_of_a_saving_process_lose_and_corrupt_nothing(tmp_path):
    tally = run_trials(str(tmp_path), trials=4, megabytes=1.0, seed=7, max_kill_delay=0.3)
    assert tally.trials == 4
    assert (tally.lost, tally.corrupt, tally.leftovers_after_cleanup) == (0, 0, 0), tally.problems


def _save(directory, step, value):
    with tf.Graph().as_default():
        v = tf.Variable(np.full(3, value, np.float32), name="v")
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return saver, sess, saver.save(sess, f"{directory}/model.ckpt", global_step=step)


def test_first_save_removes_leftovers_of_interrupted_saves_and_keeps_named_checkpoints(tmp_path):
    d = str(tmp_path)
    _save(d, 1, 1.0)
    leftovers = [
        "model.ckpt-2_temp_0123.data-00000-of-00001",  # a save killed while writing
        "model.ckpt-2_temp_0123.index-shard-00000",
        "model.ckpt-3.data-00000-of-00001",  # data whose index never came (or was deleted)
        "model.ckpt-3.meta",
        ".model.ckpt-1.meta.tmp-abcd1234",  # atomic writes killed before their rename
        ".checkpoint.tmp-abcd1234",
    ]
    for name in leftovers:
        (tmp_path / name).write_bytes(b"x")
    # a complete checkpoint the state file never named: its save was killed before the switch
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros(3, np.float32), name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            tf.train.Saver().save(sess, f"{d}/model.ckpt", global_step=9, write_state=False)
    assert tf.train.checkpoint_exists(f"{d}/model.ckpt-9")
    _save(d, 4, 4.0)
    names = sorted(os.listdir(tmp_path))
    assert not any(n in names for n in leftovers), names
    assert not tf.train.checkpoint_exists(f"{d}/model.ckpt-9")
    assert tf.train.checkpoint_exists(f"{d}/model.ckpt-1")  # named by the state file: kept
    np.testing.assert_array_equal(tf.train.load_variable(d, "v"), np.full(3, 4.0, np.float32))


def test_resaving_a_step_replaces_it_and_leaves_no_copy(tmp_path):
    d = str(tmp_path)
    _save(d, 5, 1.0)
    _, _, path = _save(d, 5, 2.0)
    assert path == f"{d}/model.ckpt-5"
    assert tf.train.latest_checkpoint(d) == path
    np.testing.assert_array_equal(tf.train.load_variable(d, "v"), np.full(3, 2.0, np.float32))
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model.ckpt-5.data-00000-of-00001",
        "model.ckpt-5.index",
        "model.ckpt-5.meta",
    ]


def test_a_half_deleted_checkpoint_is_no_checkpoint(tmp_path):
    d = str(tmp_path)
    _save(d, 1, 1.0)
    os.remove(f"{d}/model.ckpt-1.index")  # retention deletes the index first
    assert not tf.train.checkpoint_exists(f"{d}/model.ckpt-1")
    assert tf.train.latest_checkpoint(d) is None
