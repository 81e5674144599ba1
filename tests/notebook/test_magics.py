from pathlib import Path

import pytest
from IPython.core.error import UsageError

import nbflow as tf
from nbflow.notebook import magics
from nbflow.notebook.board import BOARD_MIME
from tests.notebook.conftest import run

LAYER = """%%dataflow --name layer1 --scope layer1
w = tf.Variable(tf.ones([3, 4]), name="w")
h = tf.matmul(x, w)
"""


def op_names(graph=None):
    return [op.name for op in (graph or tf.get_default_graph()).get_operations()]


def test_load_ext_registers_every_magic_with_help(ip):
    cells = ip.magics_manager.magics["cell"]
    lines = ip.magics_manager.magics["line"]
    assert "dataflow" in cells
    for name in ("dataflow_graph", "dataflow_board", "dataflow_cluster"):
        assert name in lines and lines[name].__doc__.strip()
    assert "--graph" in cells["dataflow"].__doc__ and "--no-show" in cells["dataflow"].__doc__


def test_rerunning_a_cell_replaces_its_ops_instead_of_duplicating(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    for _ in range(7):
        run(ip, LAYER)
    names = op_names()
    assert names.count("layer1/MatMul") == 1
    assert not any(n.startswith("layer1_") or "MatMul_" in n for n in names)
    assert ip.user_ns["h"].name == "layer1/MatMul:0"


def test_rerun_shows_a_diff_of_added_removed_and_changed_ops(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    graphs = magics.notebook_graphs()
    from nbflow.notebook.cells import build_cell

    build_cell("h = tf.matmul(x, tf.ones([3, 4]))", ip.user_ns, graphs=graphs, key="c")
    built = build_cell(
        "h = tf.nn.relu(tf.matmul(x, tf.ones([3, 4]) * 2.0))"
        if hasattr(tf, "nn")
        else "h = tf.matmul(x, tf.ones([3, 4]) * 2.0)",
        ip.user_ns,
        graphs=graphs,
        key="c",
    )
    assert built.run == 2
    assert "mul" in built.diff.added or "Const" in built.diff.added
    assert "MatMul" in built.diff.changed
    assert "+" in built.diff.summary()


def test_other_cells_consumers_are_rewired_to_the_rebuilt_ops(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    run(ip, LAYER)
    run(ip, "%%dataflow --name loss\ny = tf.reduce_sum(h * 2.0)\n")
    value = run(
        ip,
        LAYER.replace(
            "--scope layer1", "--scope layer1 --run y --feed '{x: [[1, 2, 3]]}' --init"
        ).replace("tf.matmul(x, w)", "tf.matmul(x, w) + 1.0"),
    )
    assert value == pytest.approx((6 + 1) * 4 * 2)


def test_incompatible_rebuild_names_the_cell_to_rerun(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    run(ip, LAYER)
    run(ip, "%%dataflow --name loss\ny = tf.reduce_sum(h * 2.0)\n")
    result = ip.run_cell(LAYER.replace("[3, 4]", "[3, 5]"))
    assert isinstance(result.error_in_exec, UsageError)
    assert "re-run cell 'loss'" in str(result.error_in_exec)
    assert "Sum" not in op_names()
    run(ip, "%%dataflow --name loss\ny = tf.reduce_sum(h * 2.0)\n")
    assert op_names().count("Sum") == 1


def test_ops_record_the_cell_and_line_that_created_them(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    run(ip, LAYER)
    from nbflow.notebook.display import creation_site

    site = creation_site(ip.user_ns["h"].op)
    assert site["cell"] == "layer1" and site["line"] == 2
    assert site["source"] == "h = tf.matmul(x, w)"


def test_cell_key_comes_from_the_front_ends_cell_id(ip):
    ip.parent_header = {"metadata": {"cellId": "abc-123"}}
    run(ip, "%%dataflow\nc = tf.constant(1.0, name='c')\n")
    run(ip, "%%dataflow\nc = tf.constant(2.0, name='c')\n")  # an edit of the same cell
    assert op_names().count("c") == 1 and "c_1" not in op_names()
    assert magics.notebook_graphs().record(tf.get_default_graph(), "abc-123").runs == 2


def test_cell_key_falls_back_to_the_first_line(ip):
    run(ip, "%%dataflow --no-show\n# first layer\nc = tf.constant(1.0, name='c')\n")
    run(ip, "%%dataflow --no-show\n# first layer\nc = tf.constant(3.0, name='c')\n")
    assert op_names() == ["c"]


def test_graph_device_and_scope_options(ip):
    run(ip, "%%dataflow --graph side --device /cpu:0 --scope enc --no-show\nz = tf.zeros([2])\n")
    side = magics.notebook_graphs().graph("side")
    assert side is not tf.get_default_graph()
    (op,) = side.get_operations()
    assert op.name.startswith("enc/") and "CPU:0" in op.device.upper()
    assert op_names() == []


def test_run_with_feed_displays_and_records_the_values(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    out = run(ip, "%%dataflow --run s --feed '{x: [[1, 2, 3]]}'\ns = tf.reduce_sum(x)\n")
    assert out == pytest.approx(6.0)
    assert magics.notebook_graphs().last_values["Sum:0"] == pytest.approx(6.0)


def test_bad_options_give_usage_errors_not_tracebacks(ip):
    for line in ("%%dataflow --bogus\nx = 1\n", "%%dataflow --run 'undefined_name'\nx = 1\n"):
        result = ip.run_cell(line)
        error = result.error_in_exec or result.error_before_exec
        assert isinstance(error, UsageError), line
    result = ip.run_cell("%dataflow_graph nope")
    assert isinstance(result.error_in_exec, UsageError)
    for bad in ("--workers -1", "--ps -1", "--n-workers -1", "--threads 0"):
        result = ip.run_cell(f"%dataflow_cluster {bad}")
        assert isinstance(result.error_in_exec, UsageError), bad


def test_errors_in_the_cell_propagate_and_its_partial_ops_are_replaced_next_run(ip):
    result = ip.run_cell(
        "%%dataflow --name bad\na = tf.constant(1.0, name='a')\nraise ValueError('boom')\n"
    )
    assert isinstance(result.error_in_exec, ValueError)
    run(ip, "%%dataflow --name bad\na = tf.constant(1.0, name='a')\n")
    assert op_names() == ["a"]


def test_dataflow_graph_returns_the_graph_widget(ip):
    run(ip, "x = tf.placeholder(tf.float32, [None, 3], name='x')")
    run(ip, LAYER)
    widget = run(ip, "%dataflow_graph --expand layer1")
    assert widget.expanded == ["layer1"] and widget.color_by == "device"


def test_dataflow_board_emits_the_board_mime_type_with_a_fallback(ip):
    shown = run(ip, "%dataflow_board /tmp/some_logs")
    bundle = shown._repr_mimebundle_()
    assert bundle[BOARD_MIME] == {"logdir": "/tmp/some_logs"}
    assert "text/html" in bundle and "/tmp/some_logs" in bundle["text/plain"]


def test_dataflow_board_renders_the_runs_inline_where_no_panel_exists(ip, tmp_path):
    for run_name, losses in (("a", [3.0, 2.0, 1.5]), ("b", [4.0, 1.0])):
        with tf.summary.FileWriter(str(tmp_path / run_name)) as writer:
            for step, value in enumerate(losses):
                summary = tf.summary.Summary(
                    value=[tf.summary.Summary.Value(tag="loss", simple_value=value)]
                )
                writer.add_summary(summary, step)
    page = run(ip, f"%dataflow_board {tmp_path}")._repr_mimebundle_()["text/html"]
    rows = page.split("<tbody>")[1].split("</tr>")[:-1]
    assert len(rows) == 2
    assert "<td>a</td><td>loss</td><td>2</td><td>1.5</td>" in rows[0] and "<polyline" in rows[0]
    assert "<td>b</td><td>loss</td><td>1</td><td>1</td>" in rows[1]


def test_auto_registration_when_nbflow_is_imported_in_ipython(ip):
    from nbflow import notebook

    notebook._loaded.discard(id(ip))
    tf._register_in_ipython()
    assert id(ip) in notebook._loaded


def test_a_dataflow_cell_can_build_after_a_monitored_session_finalized_the_graph(ip):
    run(ip, "%%dataflow --name a --no-show\nx = tf.constant(1.0)")
    graph = ip.user_ns["x"].graph
    graph.finalize()  # what MonitoredTrainingSession does to the notebook's graph
    run(ip, "%%dataflow --name b --no-show\ny = x * 2.0")
    assert ip.user_ns["y"].op.graph is graph


def test_dataflow_board_on_a_frozen_pb_opens_the_board_on_the_file(ip, tmp_path):
    frozen = Path(__file__).resolve().parents[1] / "fixtures" / "tf" / "frozen.pb"
    bundle = run(ip, f"%dataflow_board {frozen}")._repr_mimebundle_()
    assert bundle[BOARD_MIME] == {"logdir": str(frozen)}
    # frozen.pb (written by TensorFlow): x, w, w/read, b, b/read, MatMul, add, Relu, y
    assert "a graph of 9 ops (Const 2, Identity 2," in bundle["text/html"]
    (tmp_path / "broken.pb").write_bytes(frozen.read_bytes()[:200])
    page = run(ip, f"%dataflow_board {tmp_path / 'broken.pb'}")._repr_mimebundle_()["text/html"]
    assert "broken.pb: not a readable binary protobuf" in page
