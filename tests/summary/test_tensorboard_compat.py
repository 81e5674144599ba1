"""TensorBoard's own EventAccumulator reads nbflow's event logs (when tensorboard is installed)."""

import numpy as np
import pytest

import nbflow as tf

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")


def test_tensorboard_reads_scalars_histograms_images_audio_text_and_graph(tmp_path):
    x = tf.placeholder(tf.float32, [], name="x")
    with tf.name_scope("layer"):
        w = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4), name="weights")
    tf.summary.scalar("loss", x)
    tf.summary.histogram("weights_hist", w)
    tf.summary.image("input", tf.constant(np.ones((2, 4, 4, 1), np.float32)))
    tf.summary.audio("sound", tf.constant(np.zeros((1, 50), np.float32)), 8000)
    tf.summary.text("note", tf.constant("**bold**"))
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with tf.summary.FileWriter(str(tmp_path), sess.graph) as writer:
            for step in range(3):
                writer.add_summary(sess.run(merged, {x: float(step)}), step)
    acc = event_accumulator.EventAccumulator(
        str(tmp_path), size_guidance={event_accumulator.TENSORS: 0}
    )
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"]
    assert [e.value for e in acc.Scalars("loss")] == [0.0, 1.0, 2.0]
    assert [e.step for e in acc.Scalars("loss")] == [0, 1, 2]
    histogram = acc.Histograms("weights_hist")[0].histogram_value
    assert histogram.num == 12 and histogram.max == 11
    assert sorted(tags["images"]) == ["input/image/0", "input/image/1"]
    assert acc.Images("input/image/0")[0].width == 4
    assert tags["audio"] == ["sound/audio/0"]
    assert "note" in tags["tensors"]
    graph = acc.Graph()
    assert {"x", "layer/weights", "loss"} <= {n.name for n in graph.node}
