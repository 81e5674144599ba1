"""The board's server extension against a real `jupyter server` subprocess (base URL set)."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request

import pytest

from tests.board.conftest import wait_until
from tests.board.training_logs import LOSS_TAG, write_run

ROUTES = ["root", "runs", "tags", "scalars", "histograms", "images", "image", "graph", "traces", "trace"]  # fmt: skip


def get(url: str) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers.get("Content-Type", "")


def get_json(url: str):
    status, body, _ = get(url)
    assert status == 200, (url, status, body[:300])
    return json.loads(body)


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_answers_403_without_a_token(jupyter_server, route):
    query = {"logdir": "logs", "run": "train", "tag": LOSS_TAG, "name": "step0.trace.json"}
    status, _, _ = get(jupyter_server.api(route, token=None, **query))
    assert status == 403
    status, _, _ = get(jupyter_server.api(route, token="not-the-token", **query))
    assert status == 403


@pytest.mark.parametrize(
    "query",
    [
        {"logdir": ".."},
        {"logdir": "../outside"},
        {"logdir": "logs/../../outside"},
        {"logdir": "/etc"},
        {"logdir": "escape"},
        {"logdir": "escape/run"},
        {"logdir": "logs", "run": "../../outside/run"},
        {"logdir": "logs", "run": "/tmp"},
        {"logdir": ".", "run": "escape/run"},
    ],
    ids=str,
)
def test_paths_outside_the_root_are_refused(jupyter_server, query):
    status, body, _ = get(jupyter_server.api("runs" if "run" not in query else "tags", **query))
    assert status == 403, body


def test_absolute_path_of_the_root_itself_is_refused(jupyter_server):
    status, _, _ = get(jupyter_server.api("runs", logdir=str(jupyter_server.root)))
    assert status == 403


def test_trace_names_cannot_climb_or_follow_symlinks_out(jupyter_server):
    for name in ["../eval/step0.trace.json", "/etc/passwd", "..", "leak.trace.json"]:
        status, _, _ = get(jupyter_server.api("trace", logdir="logs", run="train", name=name))
        assert status == 403, name


def test_runs_lists_each_run_with_its_tags(jupyter_server):
    body = get_json(jupyter_server.api("runs", logdir="logs"))
    assert body["logdir"] == "logs"
    runs = {r["name"]: r["tags"] for r in body["runs"]}
    assert sorted(runs) == ["eval", "train"]
    tags = runs["train"]
    assert tags["scalars"] == [LOSS_TAG]
    assert tags["graph"] is True
    assert len(tags["histograms"]) == 1 and len(tags["images"]) == 1
    assert "step0.trace.json" in tags["traces"]
    root = get_json(jupyter_server.api("root"))
    assert root["root"] == str(jupyter_server.root.resolve())


def test_symlinked_run_folders_are_not_listed(jupyter_server):
    body = get_json(jupyter_server.api("runs", logdir="."))
    assert sorted(r["name"] for r in body["runs"]) == ["logs/eval", "logs/train"]


def test_scalars_have_one_point_per_logged_step(jupyter_server):
    body = get_json(jupyter_server.api("scalars", logdir="logs", run="train", tag=LOSS_TAG))
    assert set(body) >= {"run", "tag", "offset", "next_offset", "total", "downsampled"}
    assert body["steps"] == list(range(30))
    assert len(body["wall_times"]) == len(body["values"]) == 30
    assert all(isinstance(v, float) for v in body["values"])
    assert (body["offset"], body["next_offset"], body["total"], body["downsampled"]) == (
        0,
        30,
        30,
        False,
    )


def test_downsampling_keeps_the_extremes(jupyter_server):
    full = get_json(jupyter_server.api("scalars", logdir="logs", run="train", tag=LOSS_TAG))
    few = get_json(
        jupyter_server.api("scalars", logdir="logs", run="train", tag=LOSS_TAG, max_points="8")
    )
    assert few["downsampled"] and len(few["steps"]) <= 8
    assert max(few["values"]) == max(full["values"]) and min(few["values"]) == min(full["values"])
    assert few["steps"][0] == 0 and few["steps"][-1] == 29


def test_missing_things_are_404_not_500(jupyter_server):
    for route, query in [
        ("runs", {"logdir": "nope"}),
        ("scalars", {"logdir": "logs", "run": "train", "tag": "nope"}),
        ("tags", {"logdir": "logs", "run": "nope"}),
        ("image", {"logdir": "logs", "run": "train", "tag": "input/image", "index": "99"}),
        ("trace", {"logdir": "logs", "run": "train", "name": "nope.trace.json"}),
    ]:
        status, _, _ = get(jupyter_server.api(route, **query))
        assert status == 404, (route, query)
    status, _, _ = get(
        jupyter_server.api("scalars", logdir="logs", run="train", tag=LOSS_TAG, offset="x")
    )
    assert status == 400


def test_histograms_images_graph_and_trace_have_their_shapes(jupyter_server):
    q = {"logdir": "logs", "run": "train"}
    tags = get_json(jupyter_server.api("tags", **q))["tags"]
    hist = get_json(jupyter_server.api("histograms", tag=tags["histograms"][0], **q))
    assert len(hist["steps"]) == 30
    h = hist["values"][0]
    assert set(h) == {"min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket"}
    assert len(h["bucket_limit"]) == len(h["bucket"]) and sum(h["bucket"]) == h["num"]
    images = get_json(jupyter_server.api("images", tag=tags["images"][0], **q))
    assert images["values"][0] == {"index": 0, "width": 8, "height": 8}
    status, data, content_type = get(
        jupyter_server.api("image", tag=tags["images"][0], index="3", **q)
    )
    assert status == 200 and content_type == "image/png" and data.startswith(b"\x89PNG")
    graph = get_json(jupyter_server.api("graph", **q))["graph_def"]
    names = {n["name"] for n in graph["node"]}
    assert {"layer1/MatMul", "layer2/MatMul", "loss/Mean"} <= names
    assert all({"name", "op", "input"} <= set(n) for n in graph["node"])
    trace = get_json(jupyter_server.api("trace", name="step0.trace.json", **q))
    ops = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert any(e["args"]["name"] == "layer1/MatMul" for e in ops)


def test_offsets_return_only_points_written_since(jupyter_server, tmp_path):
    run = jupyter_server.root / "logs" / "growing"
    run.mkdir()
    try:
        write_run(run, steps=5)
        q = {"logdir": "logs", "run": "growing", "tag": LOSS_TAG}
        first = get_json(jupyter_server.api("scalars", **q))
        assert first["next_offset"] == 5
        write_run(run, steps=4, start=5)

        def more():
            body = get_json(jupyter_server.api("scalars", offset=str(first["next_offset"]), **q))
            return body if body["steps"] else None

        body = wait_until(more, 10, "the appended points")
        assert body["offset"] == 5 and body["steps"] == [5, 6, 7, 8] and body["next_offset"] == 9
        past_end = get_json(jupyter_server.api("scalars", offset="100", **q))
        assert past_end["offset"] == 0 and len(past_end["steps"]) == 9
    finally:
        shutil.rmtree(run)


def test_non_finite_values_become_null(jupyter_server):
    import nbflow.summary as summary

    run = jupyter_server.root / "logs" / "diverged"
    run.mkdir()
    try:
        writer = summary.FileWriter(str(run))
        for step, v in enumerate([1.0, float("nan"), float("inf")]):
            writer.add_summary(
                summary.Summary(value=[summary.Summary.Value(tag="loss", simple_value=v)]), step
            )
        writer.close()
        body = get_json(jupyter_server.api("scalars", logdir="logs", run="diverged", tag="loss"))
        assert body["values"] == [1.0, None, None]
    finally:
        shutil.rmtree(run)


def test_run_metadata_logged_with_the_writer_is_served_as_a_chrome_trace(jupyter_server):
    import nbflow.summary as summary
    from nbflow.framework import protos

    run = jupyter_server.root / "logs" / "traced"
    run.mkdir()
    try:
        metadata = protos.RunMetadata()
        device = metadata.step_stats.dev_stats.add(device="/job:localhost/task:0/device:CPU:0")
        device.node_stats.add(
            node_name="layer1/MatMul",
            all_start_micros=100,
            all_end_rel_micros=7,
            thread_id=3,
            timeline_label="layer1/MatMul = MatMul(x, layer1/weights/read)",
        )
        writer = summary.FileWriter(str(run))
        writer.add_run_metadata(metadata, "step7", 7)
        writer.close()
        q = {"logdir": "logs", "run": "traced"}
        assert get_json(jupyter_server.api("traces", **q))["traces"] == ["step7"]
        trace = get_json(jupyter_server.api("trace", name="step7", **q))
        ops = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        assert [e["args"]["name"] for e in ops] == ["layer1/MatMul"]
        assert ops[0]["dur"] == 7 and ops[0]["name"] == "MatMul"
    finally:
        shutil.rmtree(run)


def _damage(path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))


def _event_file(run):
    (path,) = [p for p in run.iterdir() if "tfevents" in p.name]
    return path


def _runs(server, logdir="logs"):
    return {r["name"]: r for r in get_json(server.api("runs", logdir=logdir))["runs"]}


def test_a_corrupt_event_file_is_skipped_and_shown_on_its_run(jupyter_server):
    run = jupyter_server.root / "logs" / "corrupt"
    run.mkdir()
    try:
        write_run(run, steps=20)
        path = _event_file(run)
        _damage(path, path.stat().st_size // 2)  # one record in the middle
        runs = _runs(jupyter_server)
        assert {"train", "eval", "corrupt"} <= set(runs)
        assert runs["train"]["tags"]["warnings"] == []
        (warning,) = runs["corrupt"]["tags"]["warnings"]
        assert warning["file"] == f"corrupt/{path.name}"
        assert 0 < warning["offset"] < path.stat().st_size
        assert "corrupt record" in warning["message"]
        q = {"logdir": "logs", "run": "corrupt"}
        scalars = get_json(jupyter_server.api("scalars", tag=LOSS_TAG, **q))
        tags = get_json(jupyter_server.api("tags", **q))["tags"]
        histograms = get_json(jupyter_server.api("histograms", tag=tags["histograms"][0], **q))
        # one record (a step's loss, or its merged summaries) is lost; those after it are read
        assert len(scalars["steps"]) + len(histograms["steps"]) == 39
        assert scalars["steps"][-1] == histograms["steps"][-1] == 19
        for route in ROUTES:
            query = {**q, "tag": LOSS_TAG, "name": "step0.trace.json", "index": "0"}
            status, _, _ = get(jupyter_server.api(route, **query))
            assert status != 500, route
    finally:
        shutil.rmtree(run)


def test_a_truncated_event_file_serves_what_it_has(jupyter_server):
    run = jupyter_server.root / "logs" / "truncated"
    run.mkdir()
    try:
        write_run(run, steps=10)
        path = _event_file(run)
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size - 7)
        q = {"logdir": "logs", "run": "truncated"}
        body = get_json(jupyter_server.api("scalars", tag=LOSS_TAG, **q))
        assert body["steps"][0] == 0 and 0 < len(body["steps"]) <= 10

        def flagged():
            warnings = get_json(jupyter_server.api("tags", **q))["tags"]["warnings"]
            return warnings and "truncated" in warnings[0]["message"] and warnings

        (warning,) = wait_until(flagged, 10, "the truncation to be reported")
        assert warning["file"] == f"truncated/{path.name}"
    finally:
        shutil.rmtree(run, ignore_errors=True)


def test_deleted_runs_disappear_from_the_listing(jupyter_server):
    run = jupyter_server.root / "logs" / "short_lived"
    run.mkdir()
    write_run(run, steps=3)
    assert "short_lived" in _runs(jupyter_server)
    shutil.rmtree(run)
    wait_until(lambda: "short_lived" not in _runs(jupyter_server), 10, "the run to go")
    status, _, _ = get(jupyter_server.api("tags", logdir="logs", run="short_lived"))
    assert status == 404


def test_event_files_linking_outside_the_root_are_refused(jupyter_server):
    outside = jupyter_server.root.parent / "outside" / "run"
    run = jupyter_server.root / "logs" / "linked"
    run.mkdir()
    try:
        (run / "events.out.tfevents.1.linked").symlink_to(_event_file(outside))
        assert "linked" not in _runs(jupyter_server)
        for route in ("tags", "scalars", "graph"):
            status, body, _ = get(
                jupyter_server.api(route, logdir="logs", run="linked", tag=LOSS_TAG)
            )
            assert status == 403, (route, body)
    finally:
        shutil.rmtree(run)


def test_the_walk_skips_virtual_environments_and_node_modules(jupyter_server):
    venv = jupyter_server.root / "venv"
    modules = jupyter_server.root / "node_modules" / "pkg"
    for folder in (venv / "lib" / "run", modules):
        folder.mkdir(parents=True)
        write_run(folder, steps=2)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    try:
        assert sorted(_runs(jupyter_server, ".")) == ["logs/eval", "logs/train"]
    finally:
        shutil.rmtree(venv)
        shutil.rmtree(jupyter_server.root / "node_modules")


def test_runs_carry_the_hyperparameters_their_training_recorded(jupyter_server):
    """What ``start_training(arguments=...)`` records (TensorBoard's HParams summary) comes with
    each run in the listing; a run without any has none."""
    from nbflow.notebook.training import write_hparams

    sweep = jupyter_server.root / "sweep"
    try:
        for name, lr in (("lr0.1", 0.1), ("lr0.01", 0.01)):
            (sweep / name).mkdir(parents=True)
            write_run(sweep / name, steps=2)
            write_hparams(sweep / name, {"lr": lr, "optimizer": "adam", "dropout": True}, name)
        (sweep / "plain").mkdir()
        write_run(sweep / "plain", steps=2)
        runs = {r["name"]: r for r in get_json(jupyter_server.api("runs", logdir="sweep"))["runs"]}
        assert runs["lr0.01"]["hparams"] == {"dropout": True, "lr": 0.01, "optimizer": "adam"}
        assert runs["lr0.1"]["hparams"]["lr"] == 0.1
        assert runs["plain"]["hparams"] == {}
        assert runs["lr0.1"]["tags"]["scalars"] == [LOSS_TAG]  # no stray tensor tag besides
    finally:
        shutil.rmtree(sweep)
