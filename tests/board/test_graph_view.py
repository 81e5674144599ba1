"""The Board's graph view in real headless Chromium (Debian's chromium, Python Playwright):
edge kinds and their hover labels, the legend, the minimap, SVG and PNG export, colouring by
memory, node details with the cell that created an op (and the jump to it), the diff after a
re-run, and a 10,000-op graph (its time budget is measured by ``bench/board_graph.py``).

Screenshots go to test-artifacts/board/graph-view-*.png.
"""

from __future__ import annotations

import json
import os
import struct
import urllib.request
from pathlib import Path

import pytest

import nbflow.summary as summary
from tests.board.conftest import CHROMIUM, launch_chromium, start_jupyter, stop
from tests.board.graph_logs import layered_graph, write_mlp
from tests.board.training_logs import write_run

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "board"
TIMEOUT_MS = 30_000

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Python Playwright is not installed")
pytestmark = pytest.mark.slow

CELL_ID = "cell-built-the-model"


def cell_graph(extra: bool = False) -> dict:
    """A small graph whose ops say a notebook cell made them; ``extra`` is its re-run."""
    shapes = {
        "_output_shapes": {"list": [{"shape": [None, 3]}]},
        "_output_types": {"list": [{"type": "float32"}]},
    }
    node = [
        {"name": "x", "op": "Placeholder", "attr": {**shapes, "_source": f"cell:{CELL_ID}#4:2"}},
        {
            "name": "y",
            "op": "Square",
            "input": ["x"],
            "attr": {**shapes, "_source": f"cell:{CELL_ID}#4:3"},
        },
        {"name": "z", "op": "Neg" if extra else "Identity", "input": ["y"], "attr": shapes},
    ]
    if extra:
        node.append({"name": "w", "op": "Relu", "input": ["z"], "attr": shapes})
    else:
        node.append({"name": "gone", "op": "Relu", "input": ["z"], "attr": shapes})
    for n in node:
        n["device"] = ""
    return {"node": node, "versions": {"producer": 1}}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("graphview")
    root = tmp / "root"
    write_mlp(root / "mlp")
    (root / "traced" / "run").mkdir(parents=True)
    write_run(root / "traced" / "run", steps=2)  # its step0.trace.json has allocation figures
    (root / "untraced" / "run").mkdir(parents=True)
    write_run(root / "untraced" / "run", steps=1)
    (root / "untraced" / "run" / "step0.trace.json").write_text(
        json.dumps(
            {
                "traceEvents": [
                    {
                        "ph": "X",
                        "name": "MatMul",
                        "ts": 0,
                        "dur": 5,
                        "args": {"name": "layer1/MatMul"},
                    }
                ]
            }
        )
    )
    summary.FileWriter(str(root / "cell"), graph_def=cell_graph()).close()
    summary.FileWriter(str(root / "big"), graph_def=layered_graph()).close()
    server = start_jupyter(root, "lab", tmp, ["--LabApp.expose_app_in_browser=True"])
    server.root = root
    yield server
    stop(server)


@pytest.fixture(scope="module")
def page(lab):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(
            viewport={"width": 1400, "height": 900}, accept_downloads=True
        )
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.goto(f"{lab.url}lab?token={lab.token}")
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('nbflow:open-board')"
        )
        page.wait_for_selector(".jp-LabShell")
        yield page
        context.close()
        browser.close()


def open_board(page, logdir: str):
    page.evaluate(
        "(logdir) => window.jupyterapp.commands.execute('nbflow:open-board', {logdir})", logdir
    )
    board = page.locator(f".nbflow-board:has(input.nbflow-logdir[value='{logdir}'])")
    board.locator(".nbflow-graph[data-state='ready'] .nbflow-node").first.wait_for()
    return board


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"graph-view-{name}.png"))


def test_edges_are_drawn_by_kind_and_name_their_tensors_on_hover(page):
    b = open_board(page, "mlp")
    kinds = b.evaluate(
        "(root) => [...root.querySelectorAll('.nbflow-edge-group')].map(g => g.dataset.kind)"
    )
    assert "data" in kinds
    b.locator(".nbflow-group[data-name='Variable'] text").first.click()
    ref = b.locator(".nbflow-edge-group[data-kind='ref'][data-src='op:Variable']")
    ref.wait_for()
    style = ref.locator("path.nbflow-edge").evaluate(
        "(p) => { const s = getComputedStyle(p); return [s.stroke, s.strokeDasharray]; }"
    )
    data = b.locator(".nbflow-edge-group[data-kind='data'] path.nbflow-edge").first.evaluate(
        "(p) => { const s = getComputedStyle(p); return [s.stroke, s.strokeDasharray]; }"
    )
    assert style[0] != data[0], "a reference edge looks like a data edge"
    assert data[1] == "none"
    # the placeholder's [?,784] batch enters MatMul: hovering names dtype and shape
    edge = b.locator(
        ".nbflow-edge-group[data-src='op:Placeholder'][data-dst='op:MatMul'] path.nbflow-edge-hit"
    )
    x, y = edge.evaluate(
        """(p) => { const m = p.getScreenCTM(); const q = p.getPointAtLength(p.getTotalLength() / 2);
                   return [q.x * m.a + q.y * m.c + m.e, q.x * m.b + q.y * m.d + m.f]; }"""
    )
    page.mouse.move(x, y)  # a point on the (bent) edge, not its bounding box's centre
    label = b.locator(".nbflow-edge-label")
    label.wait_for(state="visible")
    assert label.inner_text() == "Placeholder:0 float32[?,784]"
    wide = b.locator(
        ".nbflow-edge-group[data-src='op:Placeholder'][data-dst='op:MatMul'] path.nbflow-edge"
    )
    narrow = b.locator(
        ".nbflow-edge-group[data-src='op:MatMul'][data-dst='op:add'] path.nbflow-edge"
    )
    assert float(wide.get_attribute("stroke-width")) > float(narrow.get_attribute("stroke-width"))
    shot(page, "edges")
    b.locator(".nbflow-cluster[data-name='Variable'] text").first.click()  # collapse again
    b.locator(".nbflow-group[data-name='Variable']").wait_for()


def test_control_edges_are_dashed(page):
    b = open_board(page, "mlp")
    b.locator(".nbflow-aside-item[data-name='init'] .nbflow-aside-toggle").click()
    control = b.locator(".nbflow-edge-group[data-kind='control'] path.nbflow-edge").first
    control.wait_for()
    assert control.evaluate("(p) => getComputedStyle(p).strokeDasharray") != "none"
    b.locator(".nbflow-aside-kept[data-name='init'] .nbflow-aside-toggle").click()
    b.locator(".nbflow-aside-item[data-name='init'] .nbflow-aside-toggle").wait_for()


def test_legend_minimap_and_export(page, tmp_path):
    b = open_board(page, "mlp")
    legend = b.locator(".nbflow-graph-legend")
    for kind in ("op", "group", "series", "data", "control", "ref"):
        assert legend.locator(f".nbflow-legend-row[data-kind='{kind}']").count() == 1, kind
    assert legend.locator(".nbflow-legend-colors").get_attribute("data-mode") == "structure"
    b.locator("select.nbflow-graph-color").select_option("device")
    legend.locator(".nbflow-legend-colors[data-mode='device'] .nbflow-legend-row").first.wait_for()
    b.locator("select.nbflow-graph-color").select_option("structure")

    minimap = b.locator(".nbflow-minimap")
    assert minimap.locator(".nbflow-minimap-node").count() >= 10
    before = b.locator(".nbflow-viewport").get_attribute("transform")
    frame_before = minimap.locator(".nbflow-minimap-view").get_attribute("y")
    box = minimap.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] - 3)
    after = b.locator(".nbflow-viewport").get_attribute("transform")
    assert after != before, "clicking the minimap does not move the view"
    assert minimap.locator(".nbflow-minimap-view").get_attribute("y") != frame_before
    b.locator("button", has_text="Fit").click()

    with page.expect_download() as download:
        b.locator("button.nbflow-export-svg").click()
    text = Path(download.value.path()).read_text()
    assert text.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in text
    assert "MatMul" in text and "stroke-dasharray" in text  # labels and inline styles travel along
    assert "nbflow-minimap" not in text and "nbflow-edge-hit" not in text
    with page.expect_download() as download:
        b.locator("button.nbflow-export-png").click()
    png = Path(download.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    canvas = b.locator("svg.nbflow-graph-canvas").bounding_box()
    assert (width, height) == (round(canvas["width"]) * 2, round(canvas["height"]) * 2)
    assert len(png) > 20_000  # drawn, not blank
    shot(page, "legend-minimap")


def test_memory_colouring_from_a_traced_step_and_said_missing_otherwise(page):
    b = open_board(page, "traced")
    color = b.locator("select.nbflow-graph-color")
    color.locator("option[value='memory']").wait_for(state="attached")
    color.select_option("memory")
    b.locator(".nbflow-legend-colors[data-mode='memory']").wait_for()
    fills = set(
        b.evaluate(
            "(root) => [...root.querySelectorAll('.nbflow-node > rect:last-of-type')].map(r => r.getAttribute('fill'))"
        )
    )
    assert len(fills) >= 2, fills
    assert "B" in b.locator(".nbflow-legend-ends").inner_text()
    shot(page, "memory")
    u = open_board(page, "untraced")
    u.locator(".nbflow-legend-note", has_text="no allocation figures").wait_for()
    assert u.locator("select.nbflow-graph-color option[value='memory']").count() == 0


def save_notebook(lab, path: str) -> None:
    notebook = {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# a model"},
            {
                "cell_type": "code", "id": CELL_ID, "execution_count": 4, "metadata": {}, "outputs": [],
                "source": "import nbflow as tf\nx = tf.placeholder(tf.float32, [None, 3])\ny = tf.square(x)",
            },
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    request = urllib.request.Request(
        f"{lab.url}api/contents/{path}?token={lab.token}",
        data=json.dumps({"type": "notebook", "content": notebook}).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=10).close()


def test_details_show_outputs_and_the_cell_and_a_click_opens_it(page, lab):
    save_notebook(lab, "model.ipynb")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('docmanager:open', {path: 'model.ipynb', factory: 'Notebook'})"
    )
    page.locator(".jp-Notebook .jp-Cell").nth(1).wait_for()
    b = open_board(page, "cell")
    b.locator(".nbflow-op[data-name='y']").click()
    details = b.locator(".nbflow-graph-details")
    text = details.inner_text()
    assert "Square" in text and "float32[?,3]" in text, text
    link = details.locator("a.nbflow-cell-link")
    assert link.inner_text() == "cell [4], line 3"
    link.click()
    page.wait_for_function(
        """() => { const w = window.jupyterapp.shell.currentWidget;
                   return w && w.context && w.context.path === 'model.ipynb' && w.content.activeCellIndex === 1; }"""
    )


def test_a_re_logged_graph_marks_what_changed(page, lab):
    b = open_board(page, "cell")
    assert b.locator(".nbflow-graph-changes").is_hidden()
    summary.FileWriter(str(lab.root / "cell"), graph_def=cell_graph(extra=True)).close()
    changes = b.locator(".nbflow-graph-changes")
    changes.locator(".nbflow-diff-counts").wait_for(timeout=20_000)  # the next poll reloads it
    assert (
        changes.locator(".nbflow-diff-counts").inner_text() == "+1 added · −1 removed · ~1 changed"
    )
    assert "gone" in changes.locator(".nbflow-diff-list-removed").inner_text()
    b.locator(".nbflow-op.nbflow-diff-added[data-name='w']").wait_for()
    b.locator(".nbflow-op.nbflow-diff-changed[data-name='z']").wait_for()
    assert b.locator(".nbflow-op[data-name='x']").get_attribute("class").count("nbflow-diff") == 0
    shot(page, "diff")
    changes.locator("button.nbflow-diff-clear").click()
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    assert b.locator(".nbflow-diff-added").count() == 0


def test_ten_thousand_ops_paint_grouped_and_a_group_expands(page):
    """A 10,000-op graph paints as its 60 scopes and one expands to its ops, without errors.

    How long that takes (first paint, expand, the longest main-thread task) is measured by
    ``python -m bench.board_graph``: timings are not asserted in tests.
    """
    b = open_board(page, "big")
    page.wait_for_function(
        "() => performance.getEntriesByName('nbflow-graph-first-paint').length > 0"
    )
    assert b.locator(".nbflow-graph .nbflow-node").count() == 60  # one group per scope
    b.locator(".nbflow-group[data-name='layer2'] text").first.click()
    b.locator(".nbflow-op[data-name='layer2/step123_Identity']").wait_for(state="attached")
    assert b.locator(".nbflow-op[data-name^='layer2/']").count() == 142  # 140 + 2 ops, all drawn
    assert b.locator(".nbflow-op[data-name^='layer3/']").count() == 0  # its neighbours stay shut
    page.wait_for_function("() => performance.getEntriesByName('nbflow-graph-expand').length > 0")
    shot(page, "10k-expanded")
    assert page.errors == [], page.errors
