"""Summary and Event bytes written and walked without protobuf agree with protobuf itself."""

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.framework import protos
from nbflow.framework import wire_format


def _summary(*values):
    return protos.Summary(value=list(values)).SerializeToString()


SUMMARIES = {
    "scalar": _summary(protos.Summary.Value(tag="loss", simple_value=0.25)),
    "two values": _summary(
        protos.Summary.Value(tag="a", simple_value=1.0),
        protos.Summary.Value(tag="b/c", histo=protos.HistogramProto(min=-1, max=2, num=3)),
    ),
    "empty tag and unicode tag": _summary(
        protos.Summary.Value(simple_value=2.0), protos.Summary.Value(tag="λ/ö", simple_value=3.0)
    ),
    "metadata before the value": _summary(
        protos.Summary.Value(
            tag="t",
            metadata=protos.SummaryMetadata(plugin_data={"plugin_name": "text"}),
            tensor=protos.TensorProto(dtype=7, string_val=[b"hi"]),
        )
    ),
    "image": _summary(
        protos.Summary.Value(tag="img", image=protos.Summary.Image(height=2, width=3))
    ),
    "no values": b"",
}


@pytest.mark.parametrize("name", list(SUMMARIES))
def test_tags_read_from_the_wire_are_protobufs(name):
    data = SUMMARIES[name]
    assert wire_format.summary_tags(data) == [v.tag for v in protos.Summary.FromString(data).value]


@pytest.mark.parametrize("name", list(SUMMARIES))
@pytest.mark.parametrize(
    "wall_time, step",
    [(1764118800.25, 7), (0.0, None), (-0.0, 0), (1.0, -3), (5.5, 2**62), (3.0, 2**63 - 1)],
)
def test_event_bytes_are_protobufs_serialization(name, wall_time, step):
    summary = SUMMARIES[name]
    event = protos.Event(wall_time=wall_time)
    if step is not None:
        event.step = step
    event.summary.ParseFromString(summary)
    assert wire_format.event_bytes(wall_time, step, summary) == event.SerializeToString()


@pytest.mark.parametrize(
    "data",
    [b"\n", b"\n\x05abc", b"\n\x80", b"\x0b", b"\n\x03\n\x05a", b"\n\x02\n\x01\xff"[:5]],
    ids=["no length", "short value", "truncated varint", "group", "inner overrun", "cut tag"],
)
def test_malformed_bytes_raise_wire_errors(data):
    with pytest.raises(wire_format.WireError):
        wire_format.summary_tags(data)
    with pytest.raises(Exception):  # and protobuf refuses them too
        protos.Summary.FromString(data)


def test_merge_summary_of_garbage_names_the_problem():
    merged = tf.summary.merge([tf.constant(b"\n\x05abc"), tf.summary.scalar("x", 1.0)])
    with (
        tf.Session() as sess,
        pytest.raises(
            errors.InvalidArgumentError, match="Could not parse one of the summary inputs"
        ),
    ):
        sess.run(merged)


def test_file_writer_refuses_bytes_that_are_not_a_summary(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    with pytest.raises(ValueError, match="not a serialized Summary"):
        writer.add_summary(b"\x0bxyz", 1)
    writer.add_summary(SUMMARIES["scalar"], 2)  # the writer goes on
    writer.close()
    events = list(tf.train.summary_iterator(writer.get_logdir() + "/" + _only_file(tmp_path)))
    assert [e.step for e in events if e.HasField("summary")] == [2]
    assert np.isclose(events[-1].summary.value[0].simple_value, 0.25)


def _only_file(path):
    (name,) = [p.name for p in path.iterdir()]
    return name
