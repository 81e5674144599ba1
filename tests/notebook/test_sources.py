"""The logged GraphDef names the notebook cell and line that created each op (``_source``)."""

from tests.notebook.conftest import run


def sources(graph) -> dict[str, str]:
    return {
        n["name"]: n["attr"].get("_source") for n in graph.as_graph_def(add_shapes=True)["node"]
    }


def test_ops_built_in_a_cell_name_its_cell_id_execution_count_and_line(ip):
    ip.parent_header = {"metadata": {"cellId": "cell-7f3a"}}
    run(
        ip,
        "g = tf.Graph()\nwith g.as_default():\n    x = tf.placeholder(tf.float32, [2], name='x')\n\n    y = tf.square(x, name='y')",
    )
    count = ip.execution_count  # run_cell without history keeps the count it ran under
    assert sources(ip.user_ns["g"]) == {
        "x": f"cell:cell-7f3a#{count}:3",
        "y": f"cell:cell-7f3a#{count}:5",
    }


def test_a_dataflow_cell_counts_lines_from_the_magic_line(ip):
    ip.parent_header = {"metadata": {"cellId": "cell-df"}}
    run(ip, "%%dataflow\nz = tf.constant(1.0, name='z')\n\nw = tf.identity(z, name='w')\n")
    from nbflow.notebook import magics

    found = sources(magics.notebook_graphs().graph("default"))
    assert found["z"].startswith("cell:cell-df#") and found["z"].endswith(":2")
    assert found["w"].endswith(":4")


def test_a_named_dataflow_cell_names_its_cell_id(ip):
    """``%%dataflow --name NAME`` keys the cell's ops by the name; their sites still name the cell."""
    ip.parent_header = {"metadata": {"cellId": "cell-named"}}
    run(ip, "%%dataflow --name encoder\nq = tf.constant(1.0, name='q')\n")
    from nbflow.notebook import magics

    found = sources(magics.notebook_graphs().graph("default"))
    assert found["q"].startswith("cell:cell-named#") and found["q"].endswith(":2")


def test_without_a_cell_id_the_source_is_file_and_line(ip):
    ip.parent_header = {}
    run(ip, "g2 = tf.Graph()\nwith g2.as_default():\n    c = tf.constant(1.0, name='c')")
    site = sources(ip.user_ns["g2"])["c"]
    assert not site.startswith("cell:") and site.endswith(":3")
