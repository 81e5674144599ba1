"""FileWriter writes TFRecord-framed Event files; the reader reads runs back and tails them."""

import os
import shutil
import struct
import time

import numpy as np
import pytest

import nbflow as tf
from nbflow.framework import protos
from nbflow.summary import records
from nbflow.summary.reader import LogReader


def _event_files(directory):
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if "tfevents" in f)


def test_records_use_masked_crc32c_framing():
    data = b"hello"
    record = records.encode_record(data)
    length, length_crc = struct.unpack("<QI", record[:12])
    assert length == 5 and record[12:17] == data
    assert length_crc == records.masked_crc32c(record[:8])
    assert records.masked_crc32c(b"") == 0xA282EAD8 + 0  # crc32c("") is 0: only the mask delta


def test_writer_round_trip_of_summaries_graph_and_session_log(tmp_path):
    x = tf.placeholder(tf.float32, [], name="x")
    merged = tf.summary.merge([tf.summary.scalar("loss", x), tf.summary.histogram("h", x)])
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path / "train"), sess.graph) as writer:
        for step in range(5):
            writer.add_summary(sess.run(merged, {x: step * 0.5}), global_step=step)
        writer.add_session_log(protos.SessionLog(status=protos.SessionLog.CHECKPOINT), 4)
    (path,) = _event_files(tmp_path / "train")
    assert os.path.basename(path).startswith("events.out.tfevents.")
    events = list(tf.summary.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].WhichOneof("what") == "graph_def"
    graph = protos.GraphDef.FromString(events[1].graph_def)
    assert {"x", "loss", "h"} <= {n.name for n in graph.node}
    reader = tf.summary.read_logdir(str(tmp_path))
    assert reader.runs() == ["train"]
    loss = reader.scalars("train")["loss"]
    np.testing.assert_array_equal(loss.steps, np.arange(5))
    np.testing.assert_allclose(loss.values, np.arange(5) * 0.5)
    assert loss.wall_times.dtype == np.float64 and len(reader.histograms("train")["h"]) == 5
    assert {n["name"] for n in reader.graph("train")["node"]} >= {"x", "loss"}


def test_reader_reads_several_runs_images_and_text(tmp_path):
    img = tf.summary.image("pic", tf.constant(np.ones((1, 2, 3, 3), np.float32)), max_outputs=1)
    txt = tf.summary.text("note", tf.constant("hi"))
    with tf.Session() as sess:
        for run in ("a", "b/c"):
            with tf.summary.FileWriter(str(tmp_path / run)) as writer:
                writer.add_summary(sess.run(img), 1)
                writer.add_summary(sess.run(txt), 2)
    reader = tf.summary.read_logdir(str(tmp_path))
    assert reader.runs() == ["a", "b/c"]
    (image,) = reader.images("b/c")["pic/image"]
    assert image.png.startswith(b"\x89PNG") and (image.width, image.height) == (3, 2)
    assert reader.text("a") == {"note": [(2, "hi")]}


def test_reader_tails_a_file_being_written_including_half_records(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    reader = LogReader(str(tmp_path))
    for step in range(3):
        writer.add_summary(
            protos.Summary(value=[protos.Summary.Value(tag="s", simple_value=step)]), step
        )
    writer.flush()
    assert reader.reload() == ["."]
    assert list(reader.scalars(".")["s"].steps) == [0, 1, 2]
    assert reader.reload() == []  # nothing new
    (path,) = _event_files(tmp_path)
    record = records.encode_record(
        protos.Event(
            step=3, summary=protos.Summary(value=[protos.Summary.Value(tag="s", simple_value=3)])
        ).SerializeToString()
    )
    writer.close()
    with open(path, "ab") as f:  # a record whose writer has not finished it yet
        f.write(record[:10])
    assert reader.reload() == []
    with open(path, "ab") as f:
        f.write(record[10:])
    assert reader.reload() == ["."]
    assert list(reader.scalars(".")["s"].values) == [0, 1, 2, 3]


def _scalar_record(step: int, value: float) -> bytes:
    event = protos.Event(
        step=step, summary=protos.Summary(value=[protos.Summary.Value(tag="s", simple_value=value)])
    )
    return records.encode_record(event.SerializeToString())


def test_summary_iterator_raises_data_loss_on_a_corrupt_record(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    record = bytearray(records.encode_record(b"payload"))
    record[13] ^= 0xFF
    path.write_bytes(bytes(record))
    with pytest.raises(records.DataLossError, match="data checksum"):
        list(tf.summary.summary_iterator(str(path)))


@pytest.mark.parametrize("damaged_byte,what", [(14, "data checksum"), (3, "length checksum")])
def test_reader_skips_a_corrupt_record_and_reads_the_rest(tmp_path, damaged_byte, what):
    good = [_scalar_record(step, step * 1.5) for step in range(4)]
    bad = bytearray(good[1])
    bad[damaged_byte] ^= 0x40
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(good[0] + bytes(bad) + good[2] + good[3])
    reader = tf.summary.read_logdir(str(tmp_path))
    assert list(reader.scalars(".")["s"].steps) == [0, 2, 3]
    (warning,) = reader.warnings(".")
    assert warning.file == path.name and warning.offset == len(good[0])
    assert what in warning.message
    with open(path, "ab") as f:  # the file keeps growing past the damage
        f.write(_scalar_record(4, 6.0))
    reader.reload()
    assert list(reader.scalars(".")["s"].steps) == [0, 2, 3, 4]
    assert len(reader.warnings(".")) == 1


def test_reader_skips_records_that_are_not_events(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(
        _scalar_record(0, 1.0) + records.encode_record(b"\xff\xff") + _scalar_record(1, 2.0)
    )
    reader = tf.summary.read_logdir(str(tmp_path))
    assert list(reader.scalars(".")["s"].steps) == [0, 1]
    assert "not an Event" in reader.warnings(".")[0].message


def test_a_truncated_file_is_read_up_to_the_cut_and_flagged_once_it_stops_growing(tmp_path):
    path = tmp_path / "events.out.tfevents.1.host"
    whole = _scalar_record(0, 1.0)
    path.write_bytes(whole + _scalar_record(1, 2.0)[:-3])
    reader = tf.summary.read_logdir(str(tmp_path))
    assert list(reader.scalars(".")["s"].steps) == [0]
    assert reader.warnings(".") == []  # maybe still being written
    reader.reload()  # unchanged since: truncated
    (warning,) = reader.warnings(".")
    assert warning.offset == len(whole) and "truncated" in warning.message


def test_deleted_runs_and_files_disappear(tmp_path):
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "events.out.tfevents.1.host").write_bytes(_scalar_record(0, 1.0))
    (tmp_path / "b" / "events.out.tfevents.2.host").write_bytes(_scalar_record(1, 2.0))
    reader = tf.summary.read_logdir(str(tmp_path))
    assert reader.runs() == ["a", "b"]
    assert list(reader.scalars("b")["s"].steps) == [0, 1]
    shutil.rmtree(tmp_path / "a")
    (tmp_path / "b" / "events.out.tfevents.2.host").unlink()
    reader.reload()
    assert reader.runs() == ["b"]
    assert list(reader.scalars("b")["s"].steps) == [0]


def test_the_walk_skips_environments_hidden_folders_and_stops_at_the_depth_limit(tmp_path):
    record = _scalar_record(0, 1.0)
    for folder in [
        "run",
        ".hidden/run",
        "venv/run",
        "node_modules/pkg/run",
        "__pycache__/run",
        "a/b/c/d/run",
    ]:
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "events.out.tfevents.1.host").write_bytes(record)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    reader = LogReader(str(tmp_path), max_depth=4)
    reader.reload()
    assert reader.runs() == ["run"]
    assert LogReader(str(tmp_path), max_depth=5).reload() == ["a/b/c/d/run", "run"]


def test_the_walk_lists_a_folder_again_only_when_its_mtime_changes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "events.out.tfevents.1.host").write_bytes(_scalar_record(0, 1.0))
    past = time.time() - 60
    for folder in (tmp_path, tmp_path / "a"):
        os.utime(folder, (past, past))
    reader = tf.summary.read_logdir(str(tmp_path))
    listed = reader._listings[str(tmp_path / "a")]
    reader.reload()
    assert reader._listings[str(tmp_path / "a")] is listed  # reused, not listed again
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "events.out.tfevents.1.host").write_bytes(_scalar_record(0, 1.0))
    reader.reload()
    assert reader.runs() == ["a", "b"]


def test_event_files_linking_outside_the_root_are_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "events.out.tfevents.1.host").write_bytes(_scalar_record(0, 1.0))
    root = tmp_path / "root"
    (root / "run").mkdir(parents=True)
    (root / "run" / "events.out.tfevents.1.host").symlink_to(outside / "events.out.tfevents.1.host")
    reader = LogReader(str(root), root=str(root))
    reader.reload()
    assert reader.runs() == [] and reader.refused("run") == ["events.out.tfevents.1.host"]
    unbounded = tf.summary.read_logdir(str(root))  # without a root, a link is just a file
    assert unbounded.runs() == ["run"]


def test_close_reopen_and_background_flush(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=2, flush_secs=0.05)
    writer.add_summary(protos.Summary(value=[protos.Summary.Value(tag="s", simple_value=1.0)]), 1)
    reader = LogReader(str(tmp_path))
    deadline = __import__("time").monotonic() + 10
    while "." not in reader.runs() or "s" not in reader.scalars("."):
        reader.reload()  # the background thread flushes without being asked
        assert __import__("time").monotonic() < deadline
    writer.close()
    writer.add_summary(b"", 2)  # ignored while closed, as in TensorFlow
    writer.reopen()
    writer.add_summary(protos.Summary(value=[protos.Summary.Value(tag="s", simple_value=2.0)]), 2)
    writer.close()
    assert len(_event_files(tmp_path)) == 2
    reader.reload()
    assert list(reader.scalars(".")["s"].values) == [1.0, 2.0]


def test_run_metadata_tags_are_unique_and_readable(tmp_path):
    metadata = tf.RunMetadata()
    metadata.partition_graphs = [tf.get_default_graph().as_graph_def()]
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(metadata, "step1", global_step=1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(metadata, "step1")
    reader = tf.summary.read_logdir(str(tmp_path))
    assert reader.tags(".")["run_metadata"] == ["step1"]
    protos.RunMetadata.FromString(reader.run(".").run_metadata["step1"])


def test_traced_run_metadata_is_written_with_small_thread_ids(tmp_path):
    a = tf.placeholder(tf.float32, [4, 4], name="a")
    b = tf.matmul(a, a, name="b")
    metadata = tf.RunMetadata()
    with tf.Session() as sess:
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        feed = {a: np.ones((4, 4), np.float32)}
        sess.run(tf.reduce_sum(b), feed, options=options, run_metadata=metadata)
    python_threads = {n.thread_id for d in metadata.step_stats.dev_stats for n in d.node_stats}
    assert max(python_threads) > 2**32  # Python thread idents do not fit NodeExecStats' uint32
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(metadata, "step1", global_step=1)
    reader = tf.summary.read_logdir(str(tmp_path))
    written = protos.RunMetadata.FromString(reader.run(".").run_metadata["step1"])
    nodes = [n for d in written.step_stats.dev_stats for n in d.node_stats]
    assert "b" in {n.node_name for n in nodes}
    assert {n.thread_id for n in nodes} == set(range(len(python_threads)))


def test_graph_read_back_keeps_attrs_dtypes_and_shapes(tmp_path):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.matmul(x, tf.constant(np.eye(3, dtype=np.float32), name="w"), transpose_b=True, name="y")
    with tf.summary.FileWriter(str(tmp_path), tf.get_default_graph()):
        pass
    nodes = {n["name"]: n for n in tf.summary.read_logdir(str(tmp_path)).graph(".")["node"]}
    assert nodes["x"]["attr"]["dtype"] == {"type": "float32"}
    assert nodes["x"]["attr"]["shape"] == {"shape": [None, 3]}
    assert nodes["y"]["attr"]["transpose_b"] is True and nodes["y"]["attr"]["transpose_a"] is False
    assert nodes["y"]["attr"]["_output_shapes"] == {"list": [{"shape": [None, 3]}]}
    from nbflow.framework.graph_def import decode_attr

    np.testing.assert_array_equal(decode_attr(nodes["w"]["attr"]["value"]), np.eye(3))


def test_file_writer_cache_shares_one_writer_per_directory(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path) + "/") is a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not a
    tf.summary.FileWriterCache.clear()


def _summary_bytes(tag, value):
    return protos.Summary(
        value=[protos.Summary.Value(tag=tag, simple_value=value)]
    ).SerializeToString()


def test_events_keep_their_order_across_batches_flushes_and_close(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=3, flush_secs=3600)
    (path,) = _event_files(tmp_path)
    for step in range(7):
        writer.add_summary(_summary_bytes("s", step), step)
    writer.add_session_log(protos.SessionLog(status=protos.SessionLog.CHECKPOINT), 7)
    writer.flush()  # everything added so far is in the file, without closing it
    flushed = list(tf.summary.summary_iterator(path))
    assert [e.step for e in flushed[1:]] == list(range(8))
    for step in range(8, 12):
        writer.add_summary(_summary_bytes("s", step), step)
    writer.close()
    events = list(tf.summary.summary_iterator(path))[1:]
    assert [e.step for e in events] == list(range(12))
    assert events[7].WhichOneof("what") == "session_log"
    assert [e.summary.value[0].simple_value for e in events if e.HasField("summary")] == [
        float(s) for s in range(12) if s != 7
    ]
    wall_times = [e.wall_time for e in events]
    assert wall_times == sorted(wall_times)


def test_add_summary_takes_bytes_arrays_protos_and_numpy_steps(tmp_path):
    data = _summary_bytes("x", 1.0)
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(data)  # no step
        writer.add_summary(np.array(data, dtype=object), np.int64(2))
        writer.add_summary(protos.Summary.FromString(data), np.array(3))
        writer.add_summary(data, -4)
    events = list(tf.summary.summary_iterator(_event_files(tmp_path)[0]))[1:]
    assert [e.step for e in events] == [0, 2, 3, -4]
    assert all(e.summary.SerializeToString() == data for e in events)


def test_a_caller_blocks_while_max_queue_events_are_pending(tmp_path):
    import threading

    entered, gate = threading.Event(), threading.Event()
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=2, flush_secs=3600)

    def stuck_event():  # runs on the writer thread, holding it inside a batch
        entered.set()
        gate.wait(60)  # released by the test; a long bound so load cannot end it early
        return protos.Event(step=100, file_version="stuck")

    writer.add_event(stuck_event)
    assert entered.wait(10)
    writer.add_summary(_summary_bytes("s", 1.0), 1)
    writer.add_summary(_summary_bytes("s", 2.0), 2)  # two pending: the next add must wait
    adder = threading.Thread(target=writer.add_summary, args=(_summary_bytes("s", 3.0), 3))
    adder.start()
    adder.join(0.2)
    assert adder.is_alive()
    gate.set()
    adder.join(10)
    writer.close()
    events = list(tf.summary.summary_iterator(_event_files(tmp_path)[0]))[1:]
    assert [e.step for e in events] == [100, 1, 2, 3]


def test_events_added_from_several_threads_are_each_written_once_in_each_threads_order(tmp_path):
    # full batches are appended by the adding thread itself, or by the writer thread when that
    # one is busy: both under one lock, so nothing is lost, doubled or reordered within a thread
    import threading

    writer = tf.summary.FileWriter(str(tmp_path), max_queue=4, flush_secs=3600)
    threads, per_thread = 4, 150

    def add(t):
        for k in range(per_thread):
            writer.add_summary(_summary_bytes(f"t{t}", float(k)), t * 1000 + k)
            if k == per_thread // 2:
                writer.flush()

    workers = [threading.Thread(target=add, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    writer.close()
    events = list(tf.summary.summary_iterator(_event_files(tmp_path)[0]))[1:]
    steps = [e.step for e in events]
    assert sorted(steps) == sorted(t * 1000 + k for t in range(threads) for k in range(per_thread))
    for t in range(threads):
        mine = [s for s in steps if s // 1000 == t]
        assert mine == sorted(mine)
