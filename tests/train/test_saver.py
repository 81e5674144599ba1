"""Checkpoints: Save/Restore ops, the state file, retention, readers, fine-tuning, atomicity."""

import os

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors


def _model(rng):
    w = tf.Variable(rng.standard_normal((3, 4)).astype(np.float32), name="dense/w")
    b = tf.Variable(np.zeros(4, np.float32), name="dense/b")
    step = tf.Variable(np.int64(7), name="global_step", trainable=False)
    return w, b, step


def test_save_then_restore_brings_back_the_saved_values(tmp_path, rng):
    w, b, step = _model(rng)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saved_w = sess.run(w)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=3)
        assert path == str(tmp_path / "model.ckpt-3")
        sess.run([tf.assign(w, np.zeros((3, 4), np.float32)), tf.assign(step, np.int64(0))])
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), saved_w)
        assert sess.run(step) == 7


def test_save_and_restore_are_operations_in_the_graph(tmp_path, rng):
    _model(rng)
    saver = tf.train.Saver()
    graph = tf.get_default_graph()
    types = {op.type for op in graph.get_operations() if op.name.startswith("save/")}
    assert {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "Assign"} <= types
    assert saver.saver_def["filename_tensor_name"] == "save/filename:0"
    assert saver.saver_def["restore_op_name"] == "save/restore_all"


def test_checkpoint_is_tensorflows_v2_bundle_and_loads_as_numpy_without_a_graph(tmp_path, rng):
    w, _, _ = _model(rng)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=1)
        expected = sess.run(w)
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "m-1.data-00000-of-00001",
        "m-1.index",
        "m-1.meta",
    ]
    values = tf.train.checkpoint_to_dict(str(tmp_path))
    assert sorted(values) == ["dense/b", "dense/w", "global_step"]
    np.testing.assert_array_equal(values["dense/w"], expected)
    assert values["global_step"].dtype == np.int64 and values["global_step"] == 7


def test_state_file_uses_tensorflow_text_format_and_latest_checkpoint_follows_it(tmp_path, rng):
    _model(rng)
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (1, 2, 3):
            saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    text = (tmp_path / "checkpoint").read_text()
    assert 'model_checkpoint_path: "model.ckpt-3"' in text
    assert 'all_model_checkpoint_paths: "model.ckpt-2"' in text
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.all_model_checkpoint_paths == [
        str(tmp_path / "model.ckpt-2"),
        str(tmp_path / "model.ckpt-3"),
    ]
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-3")
    assert not (tmp_path / "model.ckpt-1").exists()  # max_to_keep deleted it
    assert not (tmp_path / "model.ckpt-1.meta").exists()
    assert tf.train.latest_checkpoint(str(tmp_path / "missing")) is None


def test_keep_checkpoint_every_n_hours_spares_checkpoints_from_deletion(tmp_path, rng):
    _model(rng)
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=0.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (1, 2, 3):
            saver.save(sess, str(tmp_path / "m"), global_step=step)
    assert all(tf.train.checkpoint_exists(str(tmp_path / f"m-{s}")) for s in (1, 2, 3))
    assert saver.last_checkpoints == [str(tmp_path / "m-3")]


def test_var_list_dict_restores_into_renamed_variables(tmp_path, rng):
    w, _, _ = _model(rng)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(w)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        renamed = tf.Variable(np.zeros((3, 4), np.float32), name="encoder/kernel")
        saver = tf.train.Saver({"dense/w": renamed})
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(renamed), expected)


def test_sharded_save_writes_one_save_op_per_device_and_restores(tmp_path, rng):
    w, b, _ = _model(rng)
    saver = tf.train.Saver(sharded=True)
    saves = [op for op in tf.get_default_graph().get_operations() if op.type == "SaveV2"]
    assert len(saves) == len({v.device for v in tf.global_variables()})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run([w, b])
        path = saver.save(sess, str(tmp_path / "m"), global_step=5)
        sess.run(tf.assign(w, np.ones((3, 4), np.float32)))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(w), expected[0])
    shards = len(saves)
    assert os.path.isfile(f"{path}.index")
    assert all(os.path.isfile(f"{path}.data-{k:05d}-of-{shards:05d}") for k in range(shards))


def test_restore_errors_name_the_problem(tmp_path, rng):
    _model(rng)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="None"):
            saver.restore(sess, None)
        path = tf.train.Saver([tf.global_variables()[0]]).save(sess, str(tmp_path / "partial"))
        with pytest.raises(errors.NotFoundError, match="dense/b not found"):
            saver.restore(sess, path)


def test_readers_list_and_load_variables_without_a_graph(tmp_path, rng):
    w, _, _ = _model(rng)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=1)
        expected = sess.run(w)
    assert tf.train.list_variables(str(tmp_path)) == [
        ("dense/b", [4]),
        ("dense/w", [3, 4]),
        ("global_step", []),
    ]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "dense/w"), expected)
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_dtype_map()["global_step"] is tf.int64
    assert reader.has_tensor("dense/b") and not reader.has_tensor("nope")


def test_init_from_checkpoint_initializes_a_scope_from_another_scope(tmp_path, rng):
    w, _, _ = _model(rng)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = sess.run(w)
        tf.train.Saver().save(sess, str(tmp_path / "pre"))
    with tf.Graph().as_default():
        kernel = tf.Variable(np.zeros((3, 4), np.float32), name="model/w")
        other = tf.Variable(np.full(2, 5.0, np.float32), name="head/v")
        tf.train.init_from_checkpoint(str(tmp_path / "pre"), {"dense/w": "model/w"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(kernel), expected)
            np.testing.assert_array_equal(sess.run(other), [5.0, 5.0])
    with tf.Graph().as_default():
        tf.Variable(np.zeros((3, 4), np.float32), name="copy/w")
        tf.Variable(np.zeros(4, np.float32), name="copy/b")
        tf.train.init_from_checkpoint(str(tmp_path / "pre"), {"dense/": "copy/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run("copy/w:0"), expected)
        with pytest.raises(ValueError, match="not found"):
            tf.Variable(np.zeros(1, np.float32), name="extra/z")
            tf.train.init_from_checkpoint(str(tmp_path / "pre"), {"dense/": "extra/"})


def test_best_checkpoint_keeper_keeps_the_k_best_by_metric(tmp_path, rng):
    w, _, _ = _model(rng)
    keeper = tf.train.BestCheckpointKeeper(str(tmp_path / "best"), num_to_keep=2, mode="max")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step, accuracy in enumerate([0.5, 0.9, 0.7, 0.8, 0.6]):
            sess.run(tf.assign(w, np.full((3, 4), accuracy, np.float32)))
            keeper.save(sess, accuracy, global_step=step)
        assert [m for m, _ in keeper.checkpoints] == [0.9, 0.8]
        assert keeper.best_checkpoint == str(tmp_path / "best" / "best.ckpt-1")
        assert (
            tf.train.latest_checkpoint(str(tmp_path / "best"), "best_checkpoint")
            == keeper.best_checkpoint
        )
        kept = sorted(
            p[: -len(".index")] for p in os.listdir(tmp_path / "best") if p.endswith(".index")
        )
        assert kept == ["best.ckpt-1", "best.ckpt-3"]
        keeper.restore_best(sess)
        np.testing.assert_allclose(sess.run(w), 0.9)
    again = tf.train.BestCheckpointKeeper(
        str(tmp_path / "best"), num_to_keep=2, saver=keeper._saver
    )
    assert again.checkpoints == keeper.checkpoints and not again.is_better(0.75)


def test_meta_graph_export_and_import_rebuilds_graph_variables_and_saver(tmp_path, rng):
    w, _, _ = _model(rng)
    y = (
        tf.reduce_sum(w, name="total")
        if hasattr(tf, "reduce_sum")
        else tf.identity(w, name="total")
    )
    tf.add_to_collection("outputs", y)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver().save(sess, str(tmp_path / "m"), global_step=2)
        expected = sess.run(y)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        assert {v.op.name for v in tf.global_variables()} == {"dense/w", "dense/b", "global_step"}
        (out,) = tf.get_collection("outputs")
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run(out), expected)


def test_restore_of_large_variables_gives_exact_values(tmp_path, rng):
    big = rng.standard_normal(1 << 20).astype(np.float32)  # 4 MB: restored through a memory map
    v = tf.Variable(big, name="big")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run(tf.assign(v, np.zeros_like(big)))
        saver.restore(sess, path)
        restored = sess.run(v)
    np.testing.assert_array_equal(restored, big)
    assert restored.flags.writeable
