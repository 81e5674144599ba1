"""Graph files as board runs, against a real Jupyter server: the TF-written frozen model
(``tests/fixtures/tf``) as a logdir of its own and as a run inside one, its text twin, a
MetaGraphDef (as the logdir; a checkpoint folder's .meta files are no runs), a SavedModel, a damaged ``.pb`` (a warning, never a 500) and a ``.pb`` linking
outside the root (403). Expected nodes are read from the ``.pbtxt`` TensorFlow wrote, with a
regular expression, not with nbflow's protobuf code."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.board.conftest import Server, start_jupyter, stop
from tests.board.test_server import get, get_json
from tests.board.training_logs import write_run

TF = Path(__file__).resolve().parents[1] / "fixtures" / "tf"


def frozen_nodes() -> list[tuple[str, str, list[str]]]:
    """(name, op, inputs) of each node of frozen.pbtxt, in file order."""
    nodes = []
    for block in re.split(r"^node \{$", (TF / "frozen.pbtxt").read_text(), flags=re.M)[1:]:
        name = re.search(r'^  name: "(.*)"$', block, re.M)
        op = re.search(r'^  op: "(.*)"$', block, re.M)
        inputs = re.findall(r'^  input: "(.*)"$', block, re.M)
        assert name and op
        nodes.append((name.group(1), op.group(1), inputs))
    return nodes


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("graphfiles")
    root = base / "root"
    (root / "models").mkdir(parents=True)
    shutil.copy(TF / "frozen.pb", root / "models" / "frozen.pb")
    shutil.copy(TF / "frozen.pbtxt", root / "models" / "frozen.pbtxt")
    shutil.copy(TF / "model.meta", root / "models" / "model.meta")
    shutil.copytree(TF / "saved_model", root / "models" / "export")
    (root / "models" / "export" / "fingerprint.pb").write_bytes(b"\x08\x01\x10\x02")
    (root / "models" / "corrupt.pb").write_bytes((TF / "frozen.pb").read_bytes()[:200])
    (root / "models" / "notes.pbtxt").write_text("these are not the nodes you are looking for\n")
    (root / "logs" / "train").mkdir(parents=True)
    write_run(root / "logs" / "train", steps=3)
    shutil.copy(TF / "frozen.pb", root / "logs" / "frozen.pb")
    outside = base / "outside"
    outside.mkdir()
    shutil.copy(TF / "frozen.pb", outside / "secret.pb")
    (root / "models" / "leak.pb").symlink_to(outside / "secret.pb")
    server = start_jupyter(root, "server", base)
    yield server
    stop(server)


def graph_nodes(server: Server, **query: str) -> list[tuple[str, str, list[str]]]:
    graph = get_json(server.api("graph", **query))["graph_def"]
    return [(n["name"], n["op"], n["input"]) for n in graph["node"]]


def test_a_frozen_pb_as_the_logdir_is_one_run_with_its_graph(server):
    runs = get_json(server.api("runs", logdir="models/frozen.pb"))["runs"]
    assert [r["name"] for r in runs] == ["."]
    assert runs[0]["tags"]["graph"] is True and runs[0]["tags"]["warnings"] == []
    assert graph_nodes(server, logdir="models/frozen.pb", run=".") == frozen_nodes()


def test_graph_files_in_a_logdir_are_runs_with_only_a_graph(server):
    runs = {r["name"]: r["tags"] for r in get_json(server.api("runs", logdir="models"))["runs"]}
    assert {"frozen.pb", "frozen.pbtxt", "export/saved_model.pb"} <= set(runs)
    assert "model.meta" not in runs and "export/fingerprint.pb" not in runs
    for name in ("frozen.pb", "frozen.pbtxt", "export/saved_model.pb"):
        assert runs[name]["graph"] is True, name
        assert runs[name]["scalars"] == [] and runs[name]["warnings"] == [], name
    assert graph_nodes(server, logdir="models", run="frozen.pbtxt") == frozen_nodes()
    meta = {name for name, _, _ in graph_nodes(server, logdir="models/model.meta", run=".")}
    assert {"dense/kernel", "dense/bias"} <= meta
    saved = graph_nodes(server, logdir="models", run="export/saved_model.pb")
    assert saved and all(name and op for name, op, _ in saved)


def test_a_pb_beside_event_runs_is_listed_with_them(server):
    runs = {r["name"]: r["tags"] for r in get_json(server.api("runs", logdir="logs"))["runs"]}
    assert sorted(runs) == ["frozen.pb", "train"]
    assert runs["train"]["scalars"] and runs["frozen.pb"]["scalars"] == []
    assert graph_nodes(server, logdir="logs", run="frozen.pb") == frozen_nodes()


@pytest.mark.parametrize("name", ["corrupt.pb", "notes.pbtxt"])
def test_a_file_that_is_no_graphdef_gives_a_warning_not_a_500(server, name):
    runs = {r["name"]: r["tags"] for r in get_json(server.api("runs", logdir="models"))["runs"]}
    (warning,) = runs[name]["warnings"]
    assert warning["file"] == name and name in warning["message"]
    assert runs[name]["graph"] is False
    tags = get_json(server.api("tags", logdir="models", run=name))["tags"]
    assert tags["warnings"] == [warning]
    status, body, _ = get(server.api("graph", logdir="models", run=name))
    assert status == 404, body[:300]
    status, body, _ = get(server.api("runs", logdir=f"models/{name}"))
    assert status == 200, body[:300]


def test_a_pb_linking_outside_the_root_is_refused(server):
    runs = {r["name"]: r["tags"] for r in get_json(server.api("runs", logdir="models"))["runs"]}
    assert runs["leak.pb"]["graph"] is False
    assert "outside the board root" in runs["leak.pb"]["warnings"][0]["message"]
    for query in ({"logdir": "models", "run": "leak.pb"}, {"logdir": "models/leak.pb"}):
        status, _, _ = get(server.api("graph", **query))
        assert status == 403, query
    status, _, _ = get(server.api("runs", logdir="models/leak.pb"))
    assert status == 403


def test_other_files_are_no_logdir(server):
    status, _, _ = get(server.api("runs", logdir="models/export/variables/variables.index"))
    assert status == 404
    status, _, _ = get(server.api("runs", logdir="models/missing.pb"))
    assert status == 404
