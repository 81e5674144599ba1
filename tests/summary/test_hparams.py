"""A run's hyperparameters as TensorBoard's HParams plugin writes and reads them."""

import pytest

from nbflow.notebook.training import TrainingRun
from nbflow.summary.hparams import hparams_pb, read_session_start_info
from nbflow.summary.reader import LogReader
from nbflow.summary.writer import FileWriter


def test_values_keep_their_kind_and_others_become_their_repr():
    summary = hparams_pb({"lr": 0.01, "layers": 3, "adam": True, "name": "mlp", "shape": (2, 3)})
    assert read_session_start_info(summary.value[0]) == {
        "adam": True,
        "layers": 3.0,
        "lr": 0.01,
        "name": "mlp",
        "shape": "(2, 3)",
    }


def test_a_training_run_records_its_arguments_for_the_reader(tmp_path):
    TrainingRun(lambda run: None, logdir=tmp_path / "r1", hparams={"lr": 0.1, "opt": "sgd"}).start()
    reader = LogReader(str(tmp_path))
    reader.reload()
    assert reader.runs() == ["r1"]
    assert reader.run("r1").hparams == {"lr": 0.1, "opt": "sgd"}
    assert reader.run("r1").tensors == {}  # not shown as a tensor summary besides


def test_tensorboards_hparams_plugin_reads_what_nbflow_writes(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    metadata = pytest.importorskip("tensorboard.plugins.hparams.metadata")
    TrainingRun(
        lambda run: None, logdir=tmp_path, name="r1", hparams={"lr": 0.1, "opt": "sgd"}
    ).start()
    acc = accumulator.EventAccumulator(str(tmp_path))
    acc.Reload()
    (content,) = acc.PluginTagToContent("hparams").values()
    info = metadata.parse_session_start_info_plugin_data(content)
    assert info.group_name == "r1"
    assert info.hparams["lr"].number_value == 0.1 and info.hparams["opt"].string_value == "sgd"


def test_nbflow_reads_the_hparams_summary_tensorboard_writes(tmp_path):
    summary_v2 = pytest.importorskip("tensorboard.plugins.hparams.summary_v2")
    written = summary_v2.hparams_pb({"lr": 0.5, "deep": False, "act": "relu"}, trial_id="t")
    with FileWriter(str(tmp_path)) as writer:
        writer.add_summary(written.SerializeToString(), 0)
    reader = LogReader(str(tmp_path))
    reader.reload()
    assert reader.run(".").hparams == {"act": "relu", "deep": False, "lr": 0.5}
