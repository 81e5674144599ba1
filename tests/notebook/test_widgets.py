import io
import json
import threading
import time

import numpy as np
import pytest
from PIL import Image as PILImage

import nbflow as tf
from nbflow.notebook.display import mimebundle
from nbflow.notebook.logs import LogDirSource, MemorySource
from nbflow.notebook.training import PROVENANCE_FILE, TrainingRun, start_training
from nbflow.notebook.widgets.controls import RunControls
from nbflow.notebook.widgets.dashboard import SummaryDashboard, png_bytes
from nbflow.notebook.widgets.front_end import DIST
from nbflow.notebook.widgets.graph import GraphWidget
from nbflow.notebook.widgets.timeline import TimelineWidget
from tests.notebook.conftest import run


def wait_for(condition, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        event.wait(0.01)


def mlp(layers=2):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    h = x
    for k in range(layers):
        with tf.name_scope(f"layer{k + 1}"):
            w = tf.Variable(tf.ones([3, 3]), name="w")
            h = tf.matmul(h, w)
    return x, tf.reduce_sum(h, name="loss")


# --- graph widget ------------------------------------------------------------------------
def test_graph_widget_expands_a_group_on_a_front_end_message():
    mlp()
    widget = GraphWidget(tf.get_default_graph())
    assert widget.expanded == []
    widget._handle_custom_msg({"type": "toggle", "id": "layer1"}, [])
    assert widget.get_state()["expanded"] == ["layer1"]
    widget._handle_custom_msg({"type": "toggle", "id": "layer10"}, [])
    widget._handle_custom_msg({"type": "toggle", "id": "layer1/inner"}, [])
    widget._handle_custom_msg({"type": "toggle", "id": "layer1"}, [])
    assert widget.expanded == ["layer10"]
    widget.toggle("layer10")
    assert widget.expanded == []  # collapsing a group collapses what is inside it


def test_clicking_an_op_fills_details_with_creation_site_and_last_value():
    x, loss = mlp()
    values = {"loss:0": np.float32(5.0)}
    widget = GraphWidget(tf.get_default_graph(), last_values=values)
    widget.set_state({"selected": "loss"})  # what the front end sends on a click
    details = widget.details
    assert details["op"] == "Sum" and details["outputs"][0]["dtype"] == "float32"
    assert details["created"]["file"].endswith("test_widgets.py")
    assert "reduce_sum" in details["created"]["source"]
    assert details["values"]["loss:0"] == "5"


def test_search_finds_op_names_and_reveal_asks_the_page():
    mlp()
    widget = GraphWidget(tf.get_default_graph())
    widget.set_state({"query": "matmul"})
    assert widget.results == ["layer1/MatMul", "layer2/MatMul"]
    sent = []
    widget.send = sent.append  # what goes to the page (no page in this test)
    widget._handle_custom_msg({"type": "reveal", "name": "layer2/MatMul"}, [])
    assert sent == [{"type": "reveal", "name": "layer2/MatMul"}]
    assert widget.selected == "layer2/MatMul" and widget.details["op"] == "MatMul"
    widget.set_state({"expanded": ["layer2"]})  # what the page reports once it revealed
    assert widget.expanded == ["layer2"]


def test_graph_widget_sends_the_graph_again_after_it_changed():
    mlp()
    widget = GraphWidget(tf.get_default_graph(), highlight=["layer2/MatMul"])
    tf.constant(1.0, name="late")
    widget.refresh()
    assert "late" in {n["name"] for n in widget.get_state()["graph_def"]["node"]}
    assert widget.get_state()["highlight"] == ["layer2/MatMul"]


def test_graph_widget_sends_the_page_a_graph_def_with_shapes_and_the_bookkeeping_rules():
    mlp()
    tf.constant(np.zeros((100, 100), np.float32), name="big")
    widget = GraphWidget(tf.get_default_graph())
    state = widget.get_state()
    nodes = {n["name"]: n for n in state["graph_def"]["node"]}
    assert nodes["layer2/MatMul"]["input"] == ["layer1/MatMul", "layer2/w/read"]
    assert nodes["loss"]["attr"]["_output_shapes"] == {"list": [{"shape": []}]}
    assert nodes["big"]["attr"]["value"] == {"tensor": {"dtype": "float32", "shape": [100, 100]}}
    assert state["rules"]["max_degree"] == 39 and "SaveV2" in state["rules"]["op_types"]
    assert "view" not in state  # the page's model lays the graph out; the kernel sends data


def test_widget_front_ends_are_the_boards_views_bundled_with_the_package():
    graph, scalars, css = (DIST / n for n in ("graph.js", "scalars.js", "board.css"))
    histograms, timeline = DIST / "histograms.js", DIST / "timeline.js"
    for bundle, marker in (
        (graph, "nbflow-graph-canvas"),
        (scalars, "nbflow-smoothing"),
        (histograms, "nbflow-hist-row"),
        (histograms, "nbflow-band"),
        (timeline, "nbflow-eeg-op"),
        (DIST / "images.js", "nbflow-step-slider"),
    ):
        source = bundle.read_text()
        assert "export" in source and marker in source
        for cdn in ("unpkg.com", "cdn.jsdelivr", "cdnjs.", "googleapis.com"):
            assert cdn not in source
    assert ".nbflow-graph" in css.read_text()
    mlp()
    assert GraphWidget(tf.get_default_graph())._esm == graph.read_text()


# --- rich display ----------------------------------------------------------------------------
def test_tensor_operation_graph_and_session_have_rich_html():
    x, loss = mlp()
    bundle = mimebundle(loss)
    assert "Tensor loss:0" in bundle["text/html"] and "float32" in bundle["text/html"]
    assert bundle["text/plain"] == repr(loss)
    assert "Sum" in loss.op._repr_mimebundle_()["text/html"]
    graph_html = tf.get_default_graph()._repr_mimebundle_()["text/html"]
    assert "layer1" in graph_html
    with tf.Session() as sess:
        assert "Session" in sess._repr_mimebundle_()["text/html"]
    assert set(loss._repr_mimebundle_(include=["text/plain"])) == {"text/plain"}


# --- summaries ---------------------------------------------------------------------------------
def test_histograms_reach_the_page_in_the_json_the_board_serves_from_either_source(tmp_path):
    values = np.random.default_rng(0).normal(size=1000)
    source = MemorySource()
    source.add_histogram("w", values, step=3)
    placeholder = tf.placeholder(tf.float64, [None], name="v")
    summary = tf.summary.histogram("w", placeholder)
    writer = tf.summary.FileWriter(str(tmp_path / "run"))
    with tf.Session() as sess:
        writer.add_summary(sess.run(summary, {placeholder: values}), 3)
    writer.close()
    sent = []
    for s in (source, LogDirSource(tmp_path)):
        board = SummaryDashboard(s, start=False)
        (series,) = board.histograms.get_state()["series"]
        assert (series["tag"], series["steps"]) == ("w", [3])
        sent.append(series["values"][0])
    memory, logged = sent
    assert memory == logged  # one schema, whichever source made the histogram
    assert set(memory) == {"min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket"}
    assert memory["min"] == values.min() and memory["max"] == values.max()
    assert memory["num"] == 1000 and memory["sum"] == pytest.approx(values.sum())
    assert memory["sum_squares"] == pytest.approx((values**2).sum())
    limits = np.array(memory["bucket_limit"])
    lower = np.concatenate([[-np.inf], limits[:-1]])
    expected = [((values >= lo) & (values < hi)).sum() for lo, hi in zip(lower, limits)]
    assert memory["bucket"] == expected  # TensorBoard's buckets: [previous limit, limit)
    json.dumps(memory, allow_nan=False)


def test_dashboard_streams_new_points_and_recomputes_smoothing_and_axes():
    source = MemorySource()
    for step in range(5):
        source.add_scalar("loss", 10.0 - step, step)
    source.add_histogram("weights", np.random.default_rng(0).normal(size=100), step=0)
    source.add_image("sample", png_bytes(np.zeros((4, 6), np.uint8)), step=0)
    board = SummaryDashboard(source, start=False, smoothing=0.0)
    chart = board.scalars
    assert chart.points_of(".", "loss")["values"] == [10.0, 9.0, 8.0, 7.0, 6.0]
    source.add_scalar("loss", 5.0, 5)
    assert board.poll() == 1
    (sent,) = chart.get_state()["series"]
    assert (sent["run"], sent["tag"], sent["steps"]) == (".", "loss", [0, 1, 2, 3, 4, 5])
    assert sent["wall_times"][0] > 1e9
    source.add_scalar("loss", float("nan"), 6)  # a diverged loss: a gap, as the Board's route
    board.poll()
    assert chart.get_state()["series"][0]["values"][-1] is None
    chart.set_state({"smoothing": 0.9, "x_axis": "wall"})  # the chart's toolbar changed
    assert chart.smoothing == 0.9 and chart.x_axis == "wall"
    source.add_histogram("weights", np.random.default_rng(1).normal(size=100), step=1)
    assert board.poll() == 1
    (hist,) = board.histograms.get_state()["series"]
    assert hist["steps"] == [0, 1] and [h["num"] for h in hist["values"]] == [100, 100]
    assert board.histogram_box.children == (board.histograms,)
    (images,) = board.images.get_state()["series"]
    assert images["values"] == [{"index": 0, "width": 6, "height": 4}]
    assert board.images.image(".", "sample", 0).startswith(b"\x89PNG")


def test_images_widget_answers_the_pages_request_with_the_encoded_bytes():
    pixels = np.random.default_rng(0).integers(0, 256, size=(3, 5, 3), dtype=np.uint8)
    source = MemorySource()
    source.add_image("digits", png_bytes(pixels), step=2)
    board = SummaryDashboard(source, start=False)
    replies = []
    board.images.send = lambda content, buffers=None: replies.append((content, buffers))
    request = {"type": "image", "request": 1, "run": ".", "tag": "digits", "index": 0}
    board.images._handle_custom_msg(request, [])
    ((content, (data,)),) = replies
    assert content == {"type": "image", "request": 1}
    decoded = np.asarray(PILImage.open(io.BytesIO(data)))
    np.testing.assert_array_equal(decoded, pixels)
    board.images._handle_custom_msg({**request, "index": 5}, [])
    assert "error" in replies[-1][0] and replies[-1][1] is None


def test_dashboard_polls_while_training_runs_in_a_background_thread_and_stop_stops_it():
    source = MemorySource()

    def train(run):
        step = 0
        while run.check():
            source.add_scalar("loss", 1.0 / (step + 1), step)
            step += 1
            time.sleep(0.002)  # a training step's work
        return step

    training = TrainingRun(train, name="mlp").start()
    board = SummaryDashboard(source, run=training, interval=0.02)
    wait_for(lambda: board.points >= 20, what="20 points on the chart")
    assert board.polling
    stops = [w for w in _descendants(board) if getattr(w, "description", None) == "Stop"]
    assert stops == [board.stop_button]  # one Stop control, the run's
    board.stop_button.click()
    assert training.wait(5.0) and training.status == "stopped"
    wait_for(lambda: not board.polling, what="polling to stop")
    wait_for(lambda: board.stop_button.disabled, what="Stop to be disabled once stopped")


def _descendants(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _descendants(child)


def test_the_progress_bar_goes_to_the_cell_that_started_the_run():
    import ipywidgets

    from nbflow.notebook.training import progress_hook

    output = ipywidgets.Output()  # what start_training displays in the training cell

    def train(run):
        hook = progress_hook(total=5)
        for _ in range(5):
            hook.update()
        hook.end()
        return hook

    training = TrainingRun(train, output=output).start()
    assert training.wait(10.0) and training.error is None, training.error
    (shown,) = output.outputs
    bar = training.result.bar
    assert shown["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] == (
        bar.container.model_id
    )
    assert bar.n == 5


def test_run_controls_pause_resume_and_stop_a_running_loop():
    steps = []

    def train(run):
        while run.check():
            steps.append(1)
            time.sleep(0.001)

    training = TrainingRun(train).start()
    controls = RunControls(training)
    wait_for(lambda: len(steps) > 3, what="steps")
    controls.pause_button.click()
    assert training.status == "paused" and controls.pause_button.description == "Resume"
    frozen = len(steps)
    with pytest.raises(AssertionError):  # paused: the loop makes no progress
        wait_for(lambda: len(steps) > frozen + 1, timeout=0.1, what="no progress")
    controls.pause_button.click()
    wait_for(lambda: len(steps) > frozen + 3, what="steps after resume")
    controls.stop_button.click()
    assert training.wait(5.0)
    assert "stopped" in controls.status.value and controls.stop_button.disabled


def test_training_started_from_a_cell_records_its_source_and_arguments(ip, tmp_path):
    ip.parent_header = {
        "metadata": {"cellId": "train-cell"},
        "content": {"code": "run = start_training(train, lr=0.1)"},
    }
    training = start_training(lambda run: 42, logdir=tmp_path, name="r1", arguments={"lr": 0.1})
    assert training.wait(5.0) and training.result == 42
    record = json.loads((tmp_path / PROVENANCE_FILE).read_text())
    assert record["cell"] == "train-cell" and "start_training" in record["source"]
    assert record["arguments"] == {"lr": "0.1"} and record["run"] == "r1"


def test_control_hook_requests_stop_from_a_monitored_session():
    class Context:
        stopped = False

        def request_stop(self):
            self.stopped = True

    training = TrainingRun(lambda run: None)
    hook, ctx = training.hook(), Context()
    hook.before_run(ctx)
    assert not ctx.stopped
    training.stop()
    hook.after_run(ctx, None)
    assert ctx.stopped


def test_log_directory_source_reads_event_files_incrementally(tmp_path):
    writer_mod = pytest.importorskip("nbflow.summary.writer")
    from nbflow.framework import protos
    from nbflow.notebook.logs import LogDirSource

    writer = writer_mod.FileWriter(str(tmp_path / "train"))
    for step in range(3):
        summary = protos.Summary(value=[protos.Summary.Value(tag="loss", simple_value=step)])
        writer.add_summary(summary, step)
    writer.flush()
    source = LogDirSource(tmp_path)
    board = SummaryDashboard(source, start=False)
    assert board.scalars.points_of("train", "loss")["steps"] == [0, 1, 2]
    writer.add_summary(protos.Summary(value=[protos.Summary.Value(tag="loss", simple_value=9)]), 3)
    writer.flush()
    assert board.poll() == 1
    writer.close()
    alone = SummaryDashboard(LogDirSource(tmp_path / "train"), start=False)  # run "." itself
    assert alone.scalars.points_of("train", "loss")["steps"] == [0, 1, 2, 3]


# --- timeline ------------------------------------------------------------------------------------
TRACE = {
    "traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "/cpu:0"}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/cpu:1"}},
        {
            "ph": "X",
            "pid": 0,
            "tid": 0,
            "ts": 100,
            "dur": 50,
            "name": "MatMul",
            "args": {"op": "MatMul"},
        },
        {
            "ph": "X",
            "pid": 0,
            "tid": 0,
            "ts": 150,
            "dur": 5,
            "name": "send",
            "args": {"op": "_Send", "key": "t0"},
        },
        {
            "ph": "X",
            "pid": 1,
            "tid": 3,
            "ts": 120,
            "dur": 40,
            "name": "recv",
            "args": {"op": "_Recv", "key": "t0"},
        },
        {"ph": "s", "pid": 0, "tid": 0, "ts": 150, "id": 7, "name": "flow"},
        {"ph": "f", "pid": 1, "tid": 3, "ts": 160, "id": 7, "name": "flow"},
    ]
}


def test_timeline_widget_sends_the_chrome_trace_of_what_it_is_given(tmp_path):
    stats = {
        "dev_stats": [
            {
                "device": "/cpu:0",
                "node_stats": [
                    {
                        "node_name": "a",
                        "all_start_micros": 10,
                        "all_end_rel_micros": 5,
                        "timeline_label": "a = Const()",
                        "thread_id": 1,
                    }
                ],
            },
        ]
    }
    widget = TimelineWidget(stats)
    (event,) = widget.events
    assert (event["name"], event["ts"], event["dur"], event["tid"]) == ("a", 10, 5, 1)
    assert widget.get_state()["trace"]["traceEvents"][0]["args"] == {"name": "/cpu:0"}
    assert TimelineWidget(json.dumps(TRACE)).get_state()["trace"] == TRACE
    path = tmp_path / "step_trace.json"
    path.write_text(json.dumps(TRACE))
    assert TimelineWidget(str(path)).trace == TRACE
    assert TimelineWidget(TRACE["traceEvents"]).trace == TRACE


# --- cluster -------------------------------------------------------------------------------------
TASKS = ["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"]


@pytest.fixture(scope="module")
def nb_cluster():
    from nbflow.distributed import Cluster

    cluster = Cluster.local(
        n_workers=2, threads_per_worker=1, spec={"ps": 1, "worker": 1}, dashboard=True
    )
    try:
        yield cluster
    finally:
        cluster.close()


def assert_task_rows(state, cluster):
    worker_addresses = {w["address"] for w in state["workers"]}
    assert [t["task"] for t in state["tasks"]] == TASKS
    assert [(t["job"], t["index"]) for t in state["tasks"]] == [("ps", 0), ("worker", 0)]
    for row in state["tasks"]:
        info = cluster.tasks[row["task"]]
        assert row["address"] == info.address and row["address"] in worker_addresses
        assert row["devices"] == info.devices and row["devices"]
        assert all(d.startswith(row["task"] + "/device:") for d in row["devices"])
        assert row["healthy"] is True and row["restarts"] == info.restarts
    hosted = sorted(n for w in state["workers"] for n in w["nbflow_tasks"])
    assert hosted == TASKS


@pytest.mark.timeout(120)
def test_cluster_widget_shows_the_nbflow_tasks_devices_health_and_dashboard(nb_cluster):
    from nbflow.notebook.widgets.cluster import ClusterWidget

    widget = ClusterWidget(nb_cluster)
    state = widget.state
    assert state["target"] == nb_cluster.target and state["n_workers"] == 2
    assert state["can_scale"] and not widget.scale_up.disabled
    assert state["dashboard_link"] == nb_cluster.dashboard_link != ""
    assert_task_rows(state, nb_cluster)
    assert {t["address"] for t in state["tasks"]} == {w["address"] for w in state["workers"]}
    assert "nbflow cluster" in widget.header.value and "2 tasks" in widget.header.value
    assert "Dask dashboard" in widget.header.value
    assert "/job:worker/replica:0/task:0" in widget.task_table.value
    assert "CPU:0" in widget.task_table.value and ">ok<" in widget.task_table.value
    # a plain client on the same scheduler finds the nbflow cluster made in this process
    again = ClusterWidget(nb_cluster.client).state["tasks"]
    assert [(t["task"], t["address"]) for t in again] == [
        (t["task"], t["address"]) for t in state["tasks"]
    ]


@pytest.mark.timeout(180)
def test_cluster_widget_scale_buttons_scale_dask_and_keep_the_tasks_placed(nb_cluster):
    from nbflow.notebook.widgets.cluster import ClusterWidget

    widget = ClusterWidget(nb_cluster)
    try:
        widget.scale_up.click()
        assert widget.state["n_workers"] == 3 and widget.message.value == ""
        assert_task_rows(widget.state, nb_cluster)
        widget.scale_down.click()
        widget.scale_down.click()  # down to one worker: both tasks end up on it
        assert widget.state["n_workers"] == 1
        assert_task_rows(widget.state, nb_cluster)
        assert len({t["address"] for t in widget.state["tasks"]}) == 1
        widget.scale_down.click()  # never below one worker while there are tasks
        assert widget.state["n_workers"] == 1
    finally:
        widget.handle.scale(2)
    widget.refresh()
    assert widget.state["n_workers"] == 2
    assert_task_rows(widget.state, nb_cluster)


@pytest.mark.timeout(60)
def test_cluster_widget_still_shows_a_plain_dask_local_cluster():
    from dask.distributed import LocalCluster

    from nbflow.notebook.widgets.cluster import ClusterWidget

    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0"
    ) as dask_cluster:
        widget = ClusterWidget(dask_cluster)
        try:
            assert widget.state["tasks"] == [] and widget.task_table.value == ""
            assert widget.state["n_workers"] == 1 and widget.state["target"] == ""
            assert "Dask cluster" in widget.header.value and "1 Dask workers" in widget.header.value
            widget.scale_up.click()
            wait_for(lambda: widget.target_workers == 2, timeout=30, what="2 workers")
            assert widget.refresh()["n_workers"] == 2
        finally:
            widget.handle.client.close()


@pytest.mark.timeout(120)
def test_cluster_magic_creates_an_nbflow_cluster_with_the_asked_tasks(ip):
    from nbflow.notebook import cluster

    try:
        widget = run(ip, "%dataflow_cluster --ps 1 --workers 1")
        state = widget.state
        assert state["n_workers"] == 2 and state["target"].startswith("nbflow://")
        assert_task_rows(state, widget.handle.nbflow)
        assert "nbflow cluster" in widget.header.value
        again = run(ip, "%dataflow_cluster --workers 2")  # adds the missing worker task
        assert again.handle is widget.handle
        assert [t["task"] for t in again.state["tasks"]] == [
            *TASKS,
            "/job:worker/replica:0/task:1",
        ]
        assert all(t["healthy"] for t in again.state["tasks"])
        assert not widget.state["closed"] and not widget.scale_up.disabled
    finally:
        run(ip, "%dataflow_cluster --close")
    assert cluster._current is None
    for shown in (widget, again):  # both outputs of the closed cluster say so
        assert shown.state["closed"] and "closed" in shown.header.value
        assert "ok" not in shown.header.value
        assert shown.scale_up.disabled and shown.scale_down.disabled
        assert shown.refresh_button.disabled
        assert shown.refresh()["closed"]  # no IOLoop error underneath
        assert shown.scale_by(1) == []
