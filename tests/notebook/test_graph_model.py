from nbflow.notebook import graph_model as gm
from tests.notebook.graphs import big_graph_def, mlp_graph_def


def test_scopes_collapse_into_groups_with_counted_edges():
    model = gm.build_model(mlp_graph_def(3))
    items, edges = gm.collapse(model)
    assert {"layer1/", "layer2/", "layer3/", "x", "loss", "train/"} <= set(items)
    assert ("layer1/", "layer2/") in edges and ("x", "layer1/") in edges
    assert model.groups["layer1/"].op_count == 6


def test_expanding_a_group_shows_its_ops_inside_the_group_box():
    model = gm.build_model(mlp_graph_def(2))
    view = gm.layout_view(model, expanded=["layer1/"])
    by_id = {n["id"]: n for n in view["nodes"]}
    assert by_id["layer1/"]["expanded"] and "layer1/MatMul" in by_id
    box, op = by_id["layer1/"], by_id["layer1/MatMul"]
    assert box["x"] <= op["x"] and op["x"] + op["w"] <= box["x"] + box["w"]
    assert box["y"] <= op["y"] and op["y"] + op["h"] <= box["y"] + box["h"]
    assert "layer2/MatMul" not in by_id


def test_layers_are_ordered_top_to_bottom_along_the_data_flow():
    model = gm.build_model(mlp_graph_def(3))
    view = gm.layout_view(model)
    y = {n["id"]: n["y"] for n in view["nodes"]}
    assert y["x"] < y["layer1/"] < y["layer2/"] < y["layer3/"] < y["loss"]


def test_groups_built_by_the_same_code_are_marked_identical():
    model = gm.build_model(mlp_graph_def(3))
    classes = {g: model.groups[g].identical_class for g in ("layer1/", "layer2/", "layer3/")}
    assert len(set(classes.values())) == 1 and None not in classes.values()
    assert model.groups["train/"].identical_class is None


def test_bookkeeping_ops_are_set_aside_and_their_edges_not_drawn():
    model = gm.build_model(mlp_graph_def(3))
    aside = {model.names[i] for i in model.aside}
    assert {"init", "global_step"} <= aside
    view = gm.layout_view(model)
    assert {a["id"] for a in view["aside"]} >= {"init", "global_step"}
    drawn = {n["id"] for n in view["nodes"]}
    assert "init" not in drawn
    assert all("init" not in (e["source"], e["target"]) for e in view["edges"])


def test_bookkeeping_rules_are_settable():
    rules = gm.BookkeepingRules(name_patterns=(r"^loss$",), op_types=(), degree_threshold=10**6)
    model = gm.build_model(mlp_graph_def(2), rules)
    assert {model.names[i] for i in model.aside} == {"loss"}


def test_colour_by_device_and_structure():
    model = gm.build_model(mlp_graph_def(3))
    view = gm.layout_view(model)
    fills = {n["id"]: n["fill"] for n in view["nodes"]}
    assert fills["layer1/"] == fills["layer3/"] != fills["layer2/"]
    structure = gm.layout_view(model, color_by="structure")
    fills = {n["id"]: n["fill"] for n in structure["nodes"]}
    assert fills["layer1/"] == fills["layer2/"] == fills["layer3/"]


def test_search_and_reveal_an_op():
    model = gm.build_model(mlp_graph_def(3))
    assert gm.search(model, "relu")[0] == "layer1/Relu"
    assert gm.reveal(model, "layer2/extra/op0") == set()
    model = gm.build_model(mlp_graph_def(2, extra_per_layer=2))
    assert gm.reveal(model, "layer2/extra/op1") == {"layer2/", "layer2/extra/"}
    view = gm.layout_view(model, gm.reveal(model, "layer2/extra/op1"))
    assert "layer2/extra/op1" in {n["id"] for n in view["nodes"]}


def test_cycles_from_loop_back_edges_are_laid_out():
    nodes = [
        {"name": "loop/Merge", "op": "Merge", "input": ["loop/Enter", "loop/NextIteration"]},
        {"name": "loop/Enter", "op": "Enter", "input": []},
        {"name": "loop/add", "op": "Add", "input": ["loop/Merge"]},
        {"name": "loop/NextIteration", "op": "NextIteration", "input": ["loop/add"]},
    ]
    model = gm.build_model({"node": nodes})
    view = gm.layout_view(model, ["loop/"])
    assert len([n for n in view["nodes"] if n["kind"] == "op"]) == 4


def test_ten_thousand_node_graph_collapses_and_expands_one_block():
    """Its timings are measured by ``python -m bench.board_graph``, not asserted here."""
    model = gm.build_model(big_graph_def(100, 100))
    view = gm.layout_view(model)
    assert model.num_ops == 10_001
    assert len(view["nodes"]) == 101  # 100 collapsed blocks and the input
    view = gm.layout_view(model, expanded=["block7/"])
    assert len(view["nodes"]) == 201
    assert len(set(model.groups[f"block{g}/"].identical_class for g in range(100))) == 1
