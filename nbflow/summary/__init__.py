"""The tf.summary namespace: summary ops, the event FileWriter and a reader of event logs.

tf.summary.scalar("loss", loss)
merged = tf.summary.merge_all()
writer = tf.summary.FileWriter("/tmp/run", sess.graph)
writer.add_summary(sess.run(merged), step)
"""

from nbflow.framework.protos import (
    Event,
    HistogramProto,
    SessionLog,
    Summary,
    SummaryMetadata,
    TaggedRunMetadata,
)
from nbflow.ops.summary_ops import (
    audio,
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from nbflow.summary import reader
from nbflow.summary.reader import LogReader, read_logdir, summary_iterator
from nbflow.summary.writer import FileWriter, FileWriterCache

__all__ = [
    "Event",
    "FileWriter",
    "FileWriterCache",
    "HistogramProto",
    "LogReader",
    "SessionLog",
    "Summary",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "audio",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "read_logdir",
    "reader",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]

# --- issue 16 (api-more): SummaryDescription and the TF 2 summary hooks of TF 1.15 --------------
from nbflow.summary.description import (  # noqa: E402
    SummaryDescription,
    all_v2_summary_ops,
    get_summary_description,
    initialize,
)

__all__ += ["SummaryDescription", "all_v2_summary_ops", "get_summary_description", "initialize"]
