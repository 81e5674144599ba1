"""tf.train's remaining TF 1.15 names: protos, conditional batching, warm starts, polling.

Bytes and checkpoint states are compared with tests/fixtures/tf/train_protos.json, written by
tests/fixtures/make_train_protos.py with real TensorFlow.
"""

import json
import os
import threading

import numpy as np
import pytest

import nbflow as tf
from nbflow.train.session_run_hook import SessionRunContext

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf", "train_protos.json")


@pytest.fixture(scope="module")
def fixture():
    with open(FIXTURE) as f:
        return json.load(f)


def test_server_and_saver_defs_serialize_as_tensorflows(fixture):
    cluster = tf.train.ClusterDef(
        job=[
            tf.train.JobDef(name="ps", tasks={0: "ps0:2222"}),
            tf.train.JobDef(name="worker", tasks={0: "w0:2222", 1: "w1:2222"}),
        ]
    )
    server = tf.train.ServerDef(cluster=cluster, job_name="worker", task_index=1, protocol="grpc")
    assert server.SerializeToString(deterministic=True).hex() == fixture["server_def"]
    saver = tf.train.SaverDef(
        filename_tensor_name="save/Const:0",
        save_tensor_name="save/control_dependency:0",
        restore_op_name="save/restore_all",
        max_to_keep=5,
        sharded=True,
        keep_checkpoint_every_n_hours=10000.0,
        version=2,
    )
    assert saver.SerializeToString(deterministic=True).hex() == fixture["saver_def"]
    parsed = tf.train.ServerDef.FromString(bytes.fromhex(fixture["server_def"]))
    assert dict(parsed.cluster.job[1].tasks) == {0: "w0:2222", 1: "w1:2222"}


def test_generate_checkpoint_state_proto_makes_paths_as_tensorflow(fixture):
    for save_dir, (path, paths) in fixture["checkpoint_states"].items():
        state = tf.train.generate_checkpoint_state_proto(
            save_dir,
            os.path.join(save_dir, "model.ckpt-2"),
            [os.path.join(save_dir, "model.ckpt-1")],
        )
        assert state.model_checkpoint_path == path
        assert state.all_model_checkpoint_paths == paths
    with pytest.raises(ValueError, match="timestamps"):
        tf.train.generate_checkpoint_state_proto("/d", "/d/a", ["/d/b"], [1.0])


def _drain(sess, fetch):
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    out = []
    try:
        while True:
            out.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        pass
    finally:
        coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    return out


def test_maybe_batch_keeps_only_examples_whose_keep_input_is_true():
    i = tf.train.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    keep = tf.equal(tf.mod(i, 2), 0)
    batch = tf.train.maybe_batch(
        [i, tf.cast(i, tf.float32) * 0.5], keep, batch_size=2, allow_smaller_final_batch=True
    )
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        got = _drain(sess, batch)
    ints = np.concatenate([b[0] for b in got])
    np.testing.assert_array_equal(ints, [0, 2, 4, 6, 8])
    np.testing.assert_allclose(np.concatenate([b[1] for b in got]), ints * 0.5)


def test_maybe_batch_with_enqueue_many_filters_rows_and_shuffle_keeps_the_multiset():
    rows = tf.constant(np.arange(12, dtype=np.int64).reshape(6, 2))
    keep = tf.constant([True, False, True, True, False, True])
    batch = tf.train.maybe_batch(rows, keep, batch_size=4, enqueue_many=True)
    shuffled = tf.train.maybe_shuffle_batch(
        tf.constant(np.arange(8)),
        4,
        capacity=16,
        min_after_dequeue=0,
        keep_input=tf.constant(np.arange(8) < 4),
        seed=1,
        enqueue_many=True,
    )
    assert batch.shape.as_list() == [4, 2]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        np.testing.assert_array_equal(sess.run(batch), [[0, 1], [4, 5], [6, 7], [10, 11]])
        assert sorted(sess.run(shuffled)) == [0, 1, 2, 3]
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)


def test_maybe_batch_join_and_shuffle_join_filter_each_source():
    a = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
    b = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue() + 100
    joined = tf.train.maybe_batch_join(
        [[a], [b]], tf.constant(True), batch_size=3, allow_smaller_final_batch=True
    )
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        got = np.concatenate(_drain(sess, joined))
    assert sorted(got.ravel()) == list(range(6)) + list(range(100, 106))
    tf.reset_default_graph()
    c = tf.train.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
    drop = tf.train.maybe_shuffle_batch_join(
        [[c]],
        2,
        capacity=8,
        min_after_dequeue=0,
        keep_input=tf.less(c, 4),
        seed=3,
        allow_smaller_final_batch=True,
    )
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        got = np.concatenate(_drain(sess, drop))
    assert sorted(got.ravel()) == [0, 1, 2, 3]


def test_match_filenames_once_lists_files_when_initialized(tmp_path):
    for name in ("a.txt", "b.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    files = tf.train.match_filenames_once(str(tmp_path / "*.txt"))
    assert files in tf.local_variables()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        (tmp_path / "d.txt").write_text("late")
        got = sorted(os.path.basename(f.decode()) for f in sess.run(files))
    assert got == ["a.txt", "b.txt"]


def test_checkpoints_iterator_yields_each_new_checkpoint_then_times_out(tmp_path):
    v = tf.Variable(1.0)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
        iterator = tf.train.checkpoints_iterator(str(tmp_path), timeout=0.5)
        assert next(iterator) == first
        second = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=2)
        assert next(iterator) == second
        with pytest.raises(StopIteration):
            next(iterator)
    calls = []
    it = tf.train.checkpoints_iterator(
        str(tmp_path / "empty"), timeout=0.1, timeout_fn=lambda: calls.append(1) or len(calls) >= 2
    )
    assert list(it) == [] and len(calls) == 2


def test_global_step_waiter_hook_waits_for_the_global_step():
    step = tf.train.get_or_create_global_step()
    hook = tf.train.GlobalStepWaiterHook(wait_until_step=3)
    hook.begin()
    with tf.Session() as sess:
        sess.run(step.initializer)
        done = threading.Event()

        def run_hook():
            hook.before_run(SessionRunContext((), sess))
            done.set()

        waiter = threading.Thread(target=run_hook, daemon=True)
        waiter.start()
        assert not done.wait(0.2)  # step 0 < 3: still waiting
        sess.run(step.assign(3))
        assert done.wait(10)
        waiter.join(10)


def test_a_user_session_creator_drives_a_monitored_session():
    class Creator(tf.train.SessionCreator):
        def create_session(self):
            return tf.Session()

    x = tf.constant(2.0) * 3.0
    with tf.train.MonitoredSession(session_creator=Creator()) as sess:
        assert sess.run(x) == 6.0
    with pytest.raises(NotImplementedError):
        tf.train.SessionCreator().create_session()


def test_warm_start_copies_variables_and_remaps_vocabulary_rows(tmp_path):
    (tmp_path / "old.txt").write_text("a\nb\nc\n")
    (tmp_path / "new.txt").write_text("c\nx\na\n")
    old_emb = np.arange(6, dtype=np.float32).reshape(3, 2)
    old_w = np.array([[1.5, -2.0]], dtype=np.float32)
    with tf.Graph().as_default():
        tf.Variable(old_emb, name="emb")
        tf.Variable(old_w, name="old_dense/w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.save(sess, str(tmp_path / "old.ckpt"))
    emb = tf.Variable(np.full((4, 2), 9.0, np.float32), name="emb")
    w = tf.Variable(np.zeros((1, 2), np.float32), name="dense/w")
    fresh = tf.Variable(np.float32(7.0), name="fresh")
    info = tf.train.VocabInfo(
        new_vocab=str(tmp_path / "new.txt"),
        new_vocab_size=3,
        num_oov_buckets=1,
        old_vocab=str(tmp_path / "old.txt"),
        backup_initializer=tf.constant_initializer(-1.0),
    )
    tf.train.warm_start(
        str(tmp_path / "old.ckpt"),
        vars_to_warm_start=["emb", "dense/w"],
        var_name_to_vocab_info={"emb": info},
        var_name_to_prev_var_name={"dense/w": "old_dense/w"},
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_emb, got_w, got_fresh = sess.run([emb, w, fresh])
    np.testing.assert_array_equal(got_emb, [old_emb[2], [-1, -1], old_emb[0], [-1, -1]])
    np.testing.assert_array_equal(got_w, old_w)
    assert got_fresh == 7.0
    with pytest.raises(ValueError, match="not used"):
        tf.train.warm_start(
            str(tmp_path / "old.ckpt"),
            vars_to_warm_start="dense.*",
            var_name_to_prev_var_name={"nope": "x"},
        )
    with pytest.raises(ValueError, match="axis"):
        tf.train.VocabInfo("n", 1, 0, "o", axis=2)


def _counting_model():
    step = tf.train.get_or_create_global_step()
    x = tf.Variable(np.ones((4, 4), np.float32))
    train = tf.group(tf.assign_add(x, tf.matmul(x, x) * 1e-3), tf.assign_add(step, 1))
    return step, train


def test_profiler_hook_writes_chrome_traces_of_every_nth_step(tmp_path):
    _, train = _counting_model()
    hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train)
    traces = sorted(p.name for p in tmp_path.glob("timeline-*.json"))
    assert traces == ["timeline-2.json", "timeline-4.json"]  # never the first step
    events = json.loads((tmp_path / "timeline-2.json").read_text())["traceEvents"]
    assert any(e.get("ph") == "X" and "MatMul" in json.dumps(e) for e in events)
    assert list(tmp_path.glob("events.out.tfevents.*"))


def test_basic_train_loop_runs_steps_until_the_supervisor_stops():
    step, train = _counting_model()
    calls = []

    class Supervisor:
        """TensorFlow's Supervisor interface over a real MonitoredSession."""

        def managed_session(self, master):
            calls.append(master)
            self.sess = tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=3)])
            return self.sess

        def should_stop(self):
            return self.sess.should_stop()

    seen = []
    tf.train.basic_train_loop(
        Supervisor(), lambda sess, scale: seen.append(sess.run(train) or scale), args=(7,)
    )
    assert seen == [7, 7, 7] and calls == [""]
