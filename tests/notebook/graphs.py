"""GraphDefs for the graph-model tests: layered MLPs with bookkeeping, and a 10,000-op graph."""


def node(name, op, inputs=(), device=""):
    return {"name": name, "op": op, "input": list(inputs), "device": device}


def mlp_graph_def(layers=3, extra_per_layer=0):
    nodes = [node("x", "Placeholder"), node("global_step", "VariableV2")]
    prev = "x"
    for k in range(1, layers + 1):
        s = f"layer{k}"
        dev = "/device:CPU:0" if k % 2 else "/device:CPU:1"
        nodes += [
            node(f"{s}/w", "VariableV2", device=dev),
            node(f"{s}/w/read", "Identity", [f"{s}/w"], dev),
            node(f"{s}/b", "VariableV2", device=dev),
            node(f"{s}/MatMul", "MatMul", [prev, f"{s}/w/read"], dev),
            node(f"{s}/add", "Add", [f"{s}/MatMul", f"{s}/b"], dev),
            node(f"{s}/Relu", "Relu", [f"{s}/add"], dev),
        ]
        for j in range(extra_per_layer):
            nodes.append(node(f"{s}/extra/op{j}", "Identity", [f"{s}/Relu"], dev))
        prev = f"{s}/Relu"
    nodes.append(node("loss", "Sum", [prev]))
    nodes.append(node("train/update", "AssignAdd", ["global_step", "loss"]))
    assigns = [n["name"] for n in nodes if n["op"] == "VariableV2"]
    nodes.append(node("init", "NoOp", ["^" + a for a in assigns]))
    return {"node": nodes, "versions": {"producer": 1}}


def big_graph_def(groups=100, per_group=100):
    nodes = [node("input", "Placeholder")]
    prev = "input"
    for g in range(groups):
        s = f"block{g}"
        for j in range(per_group - 1):
            src = prev if j == 0 else f"{s}/op{j - 1}"
            nodes.append(node(f"{s}/op{j}", "Add" if j % 2 else "Mul", [src]))
        prev = f"{s}/op{per_group - 2}"
        nodes.append(node(f"{s}/side", "Identity", [f"{s}/op0"]))
    return {"node": nodes, "versions": {"producer": 1}}
