"""The nbflow Board in real headless Chromium against `jupyter lab` (Debian's chromium package,
driven by Python Playwright; never `playwright install`). Screenshots go to test-artifacts/board/.

One JupyterLab serves a root whose logs/ were written by real nbflow runs; the tests open the
Board from the command registry, check the graph's scope groups and expanding one, the scalar
point count, live updates while a background run writes more, histograms, images, the EEG
timeline, a frozen model's ``.pb`` written by TensorFlow drawn as its graph, restoring on
reload, the MIME renderer used by `%dataflow_board`, and that the console shows no errors.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.board.conftest import record_errors, CHROMIUM, launch_chromium, start_jupyter, stop
from tests.board.training_logs import LOSS_TAG, write_run

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "board"
TIMEOUT_MS = 20_000
TF_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf"

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Python Playwright is not installed")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    for run, steps in (("train", 30), ("eval", 10)):
        (root / "logs" / run).mkdir(parents=True)
        write_run(root / "logs" / run, steps=steps)
    write_big_graph(root / "big", 10_000)
    (root / "models").mkdir()
    shutil.copy(TF_FIXTURES / "frozen.pb", root / "models" / "frozen.pb")
    server = start_jupyter(root, "lab", tmp, ["--LabApp.expose_app_in_browser=True"])
    yield server
    stop(server)


@pytest.fixture(scope="module")
def page(lab):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        record_errors(page)
        page.goto(f"{lab.url}lab?token={lab.token}")
        wait_for_app(page)
        yield page
        context.close()
        browser.close()


def write_big_graph(logdir: Path, n: int) -> None:
    """A GraphDef of ``n`` ops in one flat scope "big" (a chain), as FileWriter logs it."""
    import nbflow.summary as summary

    node = [
        {"name": f"big/op{i}", "op": "Add", "input": [f"big/op{i - 1}"] if i else [], "device": ""}
        for i in range(n)
    ]
    summary.FileWriter(str(logdir), graph_def={"node": node, "versions": {"producer": 1}}).close()


def wait_for_app(page) -> None:
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('nbflow:open-board')"
    )
    page.wait_for_selector(".jp-LabShell")


def board_errors(page) -> list[str]:
    """``page.errors`` but for Jupyter's kernel and session routes: two tests open notebooks
    only to render a saved output, and the python3 kernels JupyterLab starts for them are not
    the Board's (a kernel that starts slowly on a loaded machine is Jupyter's business)."""
    return [e for e in page.errors if "/api/kernels" not in e and "/api/sessions" not in e]


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def open_board(page, logdir: str) -> None:
    page.evaluate(
        "(logdir) => window.jupyterapp.commands.execute('nbflow:open-board', {logdir})", logdir
    )


def board(page, logdir: str):
    return page.locator(f".nbflow-board:has(input.nbflow-logdir[value='{logdir}'])")


def loss_chart(page):
    """The "logs" Board's loss chart on its Scalars tab (opening the Board if no test has)."""
    open_board(page, "logs")
    b = board(page, "logs")
    b.locator("button.nbflow-tab[data-tab='Scalars']").click()
    return b.locator(f".nbflow-chart[data-tag='{LOSS_TAG}']")


def open_notebook_with_output(page, lab, path: str, source: str, data: dict) -> None:
    """Save a notebook whose one cell shows the display ``data``, and open it in the page."""
    notebook = {
        "cells": [{
            "cell_type": "code", "execution_count": 1, "metadata": {}, "source": source,
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": data}],
        }],
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
    page.evaluate(
        "(path) => window.jupyterapp.commands.execute('docmanager:open', {path, factory: 'Notebook'})",
        path,
    )


def test_graph_shows_scope_groups_and_expands_one(page):
    open_board(page, "logs")
    b = board(page, "logs")
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    for scope in ("layer1", "layer2", "loss"):
        b.locator(f".nbflow-group[data-name='{scope}']").wait_for()
    assert b.locator(".nbflow-op[data-name='layer1/MatMul']").count() == 0
    assert b.locator(".nbflow-graph").get_attribute("data-layout-engine") == "worker"
    # layer1 and layer2 have the same structure: marked alike
    sig = b.locator(".nbflow-group[data-name='layer1']").get_attribute("data-signature")
    assert sig and sig == b.locator(".nbflow-group[data-name='layer2']").get_attribute(
        "data-signature"
    )
    shot(page, "graph-collapsed")
    b.locator(".nbflow-group[data-name='layer1'] text").first.click()
    b.locator(".nbflow-cluster[data-name='layer1']").wait_for()
    b.locator(".nbflow-op[data-name='layer1/MatMul']").wait_for()
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    b.locator(".nbflow-op[data-name='layer1/MatMul']").click()
    details = b.locator(".nbflow-graph-details")
    assert "MatMul" in details.inner_text()
    b.locator("select.nbflow-graph-color").select_option("compute")
    shot(page, "graph-expanded")


def test_scalars_show_every_logged_point_and_update_live(page, lab):
    b = board(page, "logs")
    b.locator("button.nbflow-tab[data-tab='Scalars']").click()
    line = b.locator(f".nbflow-chart[data-tag='{LOSS_TAG}'] path.nbflow-line[data-run='train']")
    line.wait_for()
    assert line.get_attribute("data-points") == "30"
    shot(page, "scalars")
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.board.training_logs", str(lab.root / "logs" / "train"),
         "--start", "30", "--steps", "10", "--delay", "0.05"],
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    try:
        page.wait_for_function(
            "(sel) => { const p = document.querySelector(sel); return p && p.getAttribute('data-points') === '40'; }",
            arg=f".nbflow-chart[data-tag='{LOSS_TAG}'] path.nbflow-line[data-run='train']",
        )
    finally:
        writer.wait(30)
    shot(page, "scalars-live")


def _logged_scalars(run_dir: Path, tag: str) -> dict[int, float]:
    """Step -> value of ``tag`` in a run's event files, as TensorBoard's own reader sees them."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    return {e.step: e.value for e in events.Scalars(tag)}


def test_hovering_a_scalar_chart_reads_out_each_run_and_dragging_zooms(page, lab):
    """TensorBoard's readout: at the pointer, each run's nearest point with its value (checked
    against TensorBoard's reader of the same logs) and step; a flat drag zooms the x axis to the
    span dragged, a box zooms both axes to it, and a double-click zooms back out."""
    chart = loss_chart(page)
    overlay = chart.locator("rect.nbflow-plot-overlay")
    overlay.wait_for()
    box = overlay.bounding_box()
    page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] / 2)  # the right end
    readout = chart.locator(".nbflow-readout")
    readout.wait_for(state="visible")
    logged = {run: _logged_scalars(lab.root / "logs" / run, LOSS_TAG) for run in ("train", "eval")}
    for run, values in logged.items():
        row = readout.locator(f"tr[data-run='{run}']")
        last = max(values)
        assert int(row.get_attribute("data-step")) == last  # each run's last point
        assert float(row.get_attribute("data-value")) == pytest.approx(values[last], rel=1e-6)
    assert chart.locator("circle.nbflow-hover-point").count() == 2
    shot(page, "scalars-readout")

    train = chart.locator("path.nbflow-line[data-run='train']")
    whole = int(train.get_attribute("data-drawn"))
    x0, y = box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2
    page.mouse.move(x0, y)
    page.mouse.down()
    page.mouse.move(x0 + box["width"] * 0.25, y, steps=5)
    page.mouse.up()
    page.wait_for_function(
        "(sel) => { const c = document.querySelector(sel); return c && c.dataset.zoomed; }",
        arg=f".nbflow-board .nbflow-chart[data-tag='{LOSS_TAG}']",
    )
    low, high = (float(v) for v in chart.get_attribute("data-zoomed").split(","))
    last_train = max(logged["train"])
    # a quarter of the axis (steps 0 to the last one), starting a quarter of the way in
    assert low == pytest.approx(0.25 * last_train, abs=1.0)
    assert high == pytest.approx(0.5 * last_train, abs=1.0)
    zoomed = int(chart.locator("path.nbflow-line[data-run='train']").get_attribute("data-drawn"))
    assert zoomed < whole  # only the points in the span, and one beyond each end
    page.mouse.move(box["x"] + box["width"] / 2, y)
    row = readout.locator("tr[data-run='train']")
    row.wait_for()
    assert low <= int(row.get_attribute("data-step")) <= high
    if max(logged["eval"]) < low:  # a run that ended before the span has nothing to say in it
        assert readout.locator("tr[data-run='eval']").count() == 0
    shot(page, "scalars-zoomed")
    selector = f".nbflow-board .nbflow-chart[data-tag='{LOSS_TAG}']"
    zoomed_out = (
        "(sel) => { const c = document.querySelector(sel); return c && !c.dataset.zoomed; }"
    )
    overlay.dblclick()
    page.wait_for_function(zoomed_out, arg=selector)
    assert int(chart.locator("path.nbflow-line[data-run='train']").get_attribute("data-drawn")) == (
        whole
    )
    # a box: the y axis zooms to its rows too, as TensorBoard's cards do
    y_min, y_max = (
        float(chart.get_attribute("data-y-min")),
        float(chart.get_attribute("data-y-max")),
    )
    page.mouse.move(x0, box["y"] + box["height"] * 0.6)  # the lower rows, where the lines run
    page.mouse.down()
    page.mouse.move(x0 + box["width"] * 0.25, box["y"] + box["height"] * 0.95, steps=5)
    page.mouse.up()
    page.wait_for_function(
        "(sel) => { const c = document.querySelector(sel); return c && c.dataset.zoomed; }",
        arg=selector,
    )
    span = y_max - y_min
    assert float(chart.get_attribute("data-y-min")) == pytest.approx(
        y_min + 0.05 * span, abs=0.02 * span
    )
    assert float(chart.get_attribute("data-y-max")) == pytest.approx(
        y_min + 0.4 * span, abs=0.02 * span
    )
    shot(page, "scalars-box-zoomed")
    overlay.dblclick()
    page.wait_for_function(zoomed_out, arg=selector)
    assert float(chart.get_attribute("data-y-min")) == y_min
    assert float(chart.get_attribute("data-y-max")) == y_max
    page.mouse.move(0, 0)
    readout.wait_for(state="hidden")


def test_a_readout_goes_when_the_pointer_leaves_a_chart_redrawn_under_it(page, lab):
    """Zooming redraws the chart under the pointer: the overlay the pointer entered is gone, and
    Chromium sends the leave to it. Leaving the charts must still take the readout down (it
    stayed up, every time, before the charts' own leave handler)."""
    chart = loss_chart(page)
    overlay = chart.locator("rect.nbflow-plot-overlay")
    readout = chart.locator(".nbflow-readout")
    for _ in range(3):
        overlay.wait_for()
        box = overlay.bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(box["x"] + box["width"] * 0.2, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.6, y, steps=5)
        page.mouse.up()  # zoomed: the chart is redrawn under the pointer
        overlay.dblclick()  # and again, zoomed out
        readout.wait_for(state="visible")
        page.mouse.move(0, 0)
        readout.wait_for(state="hidden", timeout=2000)


def test_a_pinned_chart_is_copied_to_the_top_and_unpinned_from_either_copy(page):
    b = board(page, "logs")
    b.locator("button.nbflow-tab[data-tab='Scalars']").click()
    charts = b.locator(".nbflow-charts")
    charts.locator(f".nbflow-chart[data-tag='{LOSS_TAG}'] button.nbflow-pin").click()
    pinned = charts.locator(f".nbflow-pinned .nbflow-chart[data-tag='{LOSS_TAG}']")
    pinned.wait_for()
    assert charts.locator(f".nbflow-chart[data-tag='{LOSS_TAG}']").count() == 2  # and in place
    assert pinned.locator("button.nbflow-pin").get_attribute("aria-pressed") == "true"
    assert pinned.locator("path.nbflow-line[data-run='train']").get_attribute("data-points")
    kept = page.evaluate("() => JSON.parse(localStorage.getItem('nbflow-scalars-pinned'))")
    assert kept == [LOSS_TAG]  # outlives a reload
    shot(page, "scalars-pinned")
    pinned.locator("button.nbflow-pin").click()
    charts.locator(".nbflow-pinned").wait_for(state="detached")
    assert charts.locator(f".nbflow-chart[data-tag='{LOSS_TAG}']").count() == 1
    assert page.evaluate("() => JSON.parse(localStorage.getItem('nbflow-scalars-pinned'))") == []


def test_histograms_images_and_timeline_render(page):
    b = board(page, "logs")
    b.locator("button.nbflow-tab[data-tab='Histograms']").click()
    b.locator(".nbflow-histograms path.nbflow-hist-row").first.wait_for()
    shot(page, "histograms")
    b.locator("button.nbflow-tab[data-tab='Images']").click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('img.nbflow-image')].some(i => i.complete && i.naturalWidth === 8)"
    )
    shot(page, "images")
    b.locator("button.nbflow-tab[data-tab='Timeline']").click()
    b.locator(".nbflow-eeg rect.nbflow-eeg-op").first.wait_for()
    assert b.locator(".nbflow-eeg-row").count() >= 1
    shot(page, "timeline")


def test_mime_output_opens_the_board_on_its_logdir(page, lab):
    """The output `%dataflow_board` makes, `text/html` fallback included: the Board's renderer
    must win over HTML (JupyterLab prefers the lowest rank) and open the panel."""
    from nbflow.notebook.board import BOARD_MIME, board_display

    data = board_display(str(lab.root / "logs" / "eval"))._repr_mimebundle_()
    assert {"text/html", "text/plain", BOARD_MIME} <= set(data)
    data[BOARD_MIME] = {**data[BOARD_MIME], "bookkeeping": {"opTypes": ["NoOp"]}}
    open_notebook_with_output(page, lab, "board.ipynb", "%dataflow_board logs/eval", data)
    b = board(page, "logs/eval")
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    page.locator(".jp-OutputArea .nbflow-board-link button").wait_for(state="attached")
    assert page.locator(".jp-OutputArea .nbflow-board-inline").count() == 0  # not the fallback
    b.locator(".nbflow-group[data-name='layer1']").wait_for()
    # the bookkeeping rules sent from the kernel set the init NoOp aside
    b.locator(".nbflow-aside-item[data-name='init']").wait_for()
    assert b.locator(".nbflow-op[data-name='init']").count() == 0
    shot(page, "mime-opened")


def test_dataflow_board_on_a_frozen_pb_written_by_tensorflow_draws_its_graph(page, lab):
    """`%dataflow_board models/frozen.pb`'s output opens the Board on the file."""
    from nbflow.notebook.board import board_display

    data = board_display(str(lab.root / "models" / "frozen.pb"))._repr_mimebundle_()
    source = "%dataflow_board models/frozen.pb"
    open_notebook_with_output(page, lab, "frozen.ipynb", source, data)
    b = board(page, "models/frozen.pb")
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    assert b.locator("select.nbflow-run-select").inner_text().strip() == "frozen.pb"
    for name in ("x", "MatMul", "add", "Relu", "y"):  # TensorFlow's node names
        b.locator(f".nbflow-op[data-name='{name}']").wait_for()
    b.locator(".nbflow-op[data-name='MatMul']").click()
    details = b.locator(".nbflow-graph-details").inner_text()
    assert "MatMul" in details and "x, w/read" in details
    # edges point at this panel's own arrowhead: with other boards open (hidden), a shared
    # marker id would draw them without arrows
    marker = b.locator("path.nbflow-edge").first.get_attribute("marker-end")
    marker_id = marker.removeprefix("url(#").removesuffix(")")
    assert page.locator(f"[id='{marker_id}']").count() == 1
    assert b.locator(f"marker[id='{marker_id}']").count() == 1
    shot(page, "graph-frozen-pb")
    assert not [e for e in board_errors(page) if "frozen" in e], page.errors


def test_ten_thousand_ops_stay_responsive(page):
    """Layout runs in the worker: the page keeps answering while a large scope is laid out."""
    open_board(page, "big")
    b = board(page, "big")
    b.locator(".nbflow-group[data-name='big']").wait_for()
    page.evaluate(
        """() => { window.__gaps = []; let last = performance.now();
        window.__ticker = setInterval(() => { const now = performance.now();
          window.__gaps.push(now - last); last = now; }, 20); }"""
    )
    b.locator(".nbflow-group[data-name='big'] text").first.click()
    chunk = b.locator(".nbflow-group[data-name='big/[op0 … op199]']")
    chunk.wait_for()
    chunk.locator("text").first.click()
    b.locator(".nbflow-op[data-name='big/op123']").wait_for()
    b.locator(".nbflow-graph[data-state='ready']").wait_for()
    worst = page.evaluate(
        "() => { clearInterval(window.__ticker); return Math.max(...window.__gaps); }"
    )
    assert worst < 1000, f"main thread blocked for {worst:.0f} ms"
    b.locator("input.nbflow-graph-search").fill("op9876")
    b.locator(".nbflow-search-result").first.click()
    b.locator(".nbflow-op.nbflow-selected[data-name='big/op9876']").wait_for()
    shot(page, "graph-10k")


def test_a_corrupt_run_beside_good_ones_then_a_logdir_switch(page, lab):
    """A damaged event file shows what it could read and a warning naming file and offset; the
    other run is untouched. Switching the log directory drops the old cards and requests."""
    for run, steps in (("good", 5), ("bad", 12)):
        (lab.root / "mixed" / run).mkdir(parents=True)
        write_run(lab.root / "mixed" / run, steps=steps)
    (bad,) = (lab.root / "mixed" / "bad").glob("*tfevents*")
    data = bytearray(bad.read_bytes())
    data[len(data) // 2] ^= 0x40
    bad.write_bytes(bytes(data))
    open_board(page, "mixed")
    b = board(page, "mixed")
    warning = b.locator(".nbflow-warning[data-run='bad']")
    warning.wait_for()
    assert "corrupt record" in warning.inner_text() and bad.name in warning.inner_text()
    b.locator("button.nbflow-tab[data-tab='Scalars']").click()
    for run in ("good", "bad"):
        b.locator(
            f".nbflow-chart[data-tag='{LOSS_TAG}'] path.nbflow-line[data-run='{run}']"
        ).wait_for()
    shot(page, "corrupt-beside-good")
    b.locator("button.nbflow-tab[data-tab='Images']").click()
    b.locator(".nbflow-image-card[data-run='good']").first.wait_for()
    logdir = b.locator("input.nbflow-logdir")
    logdir.fill("logs/eval")
    logdir.press("Enter")
    b.locator(".nbflow-image-card[data-run='.']").first.wait_for()
    assert b.locator(".nbflow-image-card[data-run='good']").count() == 0
    assert b.locator(".nbflow-warning").count() == 0
    b.locator("button.nbflow-tab[data-tab='Timeline']").click()
    b.locator(".nbflow-eeg rect.nbflow-eeg-op").first.wait_for()
    errors = board_errors(page)
    assert errors == [], errors  # no request for the previous directory's runs


def test_board_is_restored_after_reload_without_console_errors(page):
    page.reload()
    wait_for_app(page)
    for logdir in (
        "logs",
        "logs/eval",
        "big",
    ):  # both boards come back; one of them is the active tab
        board(page, logdir).locator(".nbflow-graph[data-state='ready']").wait_for(state="attached")
    shot(page, "restored")
    errors = board_errors(page)
    assert errors == [], errors
