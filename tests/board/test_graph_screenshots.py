"""The Board's graph view beside TensorBoard's on the same logs, in real headless Chromium.

Three graphs logged by nbflow (tests/board/graph_logs.py): the demo MLP, a 100-step RNN and a
CNN with Adam. For each, the Board's first paint is checked for what makes it readable (the
training machinery in the auxiliary area with stubs, the 100 cells as one series node, no op
beside a group of its name, labels at a contrast of at least 4.5:1), and screenshots of the
Board and, when TensorBoard is installed, of TensorBoard's graph dashboard go to
test-artifacts/graphs/{name}-board.png and {name}-tensorboard.png.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.board.conftest import (
    CHROMIUM,
    free_port,
    launch_chromium,
    start_jupyter,
    stop,
    wait_until,
)
from tests.board.graph_logs import write_all

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "graphs"
TIMEOUT_MS = 30_000

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Python Playwright is not installed")
pytestmark = pytest.mark.slow

TENSORBOARD = shutil.which("tensorboard", path=str(Path(sys.executable).parent))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("graphs") / "root"
    write_all(root / "graphs")
    return root


@pytest.fixture(scope="module")
def lab(logs, tmp_path_factory):
    server = start_jupyter(
        logs, "lab", tmp_path_factory.mktemp("lab"), ["--LabApp.expose_app_in_browser=True"]
    )
    yield server
    stop(server)


@pytest.fixture(scope="module")
def browser():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        chromium = launch_chromium(p)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def page(lab, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{lab.url}lab?token={lab.token}")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('nbflow:open-board')"
    )
    yield page
    context.close()


def open_graph(page, run: str):
    page.evaluate(
        "(logdir) => window.jupyterapp.commands.execute('nbflow:open-board', {logdir})",
        f"graphs/{run}",
    )
    board = page.locator(f".nbflow-board:has(input.nbflow-logdir[value='graphs/{run}'])")
    board.locator(".nbflow-graph[data-state='ready']").wait_for()
    board.locator(".nbflow-graph .nbflow-node").first.wait_for()
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    news = page.locator(".Toastify button:text-is('No')")
    if news.count():
        news.first.click()  # "get notified about Jupyter news?" would cover the graph
    board.locator(".nbflow-graph[data-state='ready']").wait_for()
    return board


def texts(board, selector: str) -> list[str]:
    return board.evaluate(
        "(root, sel) => [...root.querySelectorAll(sel)].map(n => n.textContent)", selector
    )


def label_contrasts(board) -> list[float]:
    """WCAG contrast of each node label's colour on its node's fill, as the browser paints it."""
    return board.evaluate(
        """(root) => {
      const lum = (c) => { const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map(Number)
        .map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      return [...root.querySelectorAll('.nbflow-node')].map(n => {
        const fill = getComputedStyle(n.querySelector('rect:last-of-type')).fill;
        const ink = getComputedStyle(n.querySelector('text')).fill;
        const [hi, lo] = [lum(fill), lum(ink)].sort((a, b) => b - a);
        return (hi + 0.05) / (lo + 0.05);
      });
    }"""
    )


def test_demo_mlp_sets_the_training_machinery_aside(page):
    board = open_graph(page, "mlp")
    aside = board.locator(".nbflow-aside-item")
    names = {aside.nth(i).get_attribute("data-name") for i in range(aside.count())}
    assert {"gradients", "Adagrad", "init", "save"} <= names
    for scope in ("gradients", "Adagrad", "save"):
        assert board.locator(f".nbflow-group[data-name='{scope}']").count() == 0
    assert board.locator(".nbflow-stub").count() >= 4  # the variables' edges to init/save/Adagrad
    page.screenshot(path=str(ARTIFACTS / "mlp-board.png"))
    labels = texts(board, ".nbflow-graph .nbflow-node > text:first-of-type")
    bare = {t for t in labels if not t.startswith("⊞")}
    groups = {t[2:] for t in labels if t.startswith("⊞")}
    assert not bare & groups, f"an op beside a group of its name: {bare & groups}"
    subs = texts(board, ".nbflow-graph .nbflow-sub")
    assert subs and not any(s.startswith("1 ops") for s in subs)
    assert min(label_contrasts(board)) >= 4.5


def test_rnn_cells_are_one_series_node(page):
    board = open_graph(page, "rnn")
    board.locator(".nbflow-group[data-name='rnn'] text").first.click()
    series = board.locator(".nbflow-series[data-name^='rnn/basic_rnn_cell']")
    series.wait_for()
    assert series.count() == 1 and series.get_attribute("data-series") == "99"
    board.locator(".nbflow-graph[data-state='ready']").wait_for()
    assert board.locator(".nbflow-group[data-name='rnn/basic_rnn_cell_7']").count() == 0
    assert min(label_contrasts(board)) >= 4.5
    page.screenshot(path=str(ARTIFACTS / "rnn-board.png"))


def test_cnn_with_adam(page):
    board = open_graph(page, "cnn")
    aside = board.locator(".nbflow-aside-item")
    names = {aside.nth(i).get_attribute("data-name") for i in range(aside.count())}
    assert {"gradients", "Adam", "init", "save"} <= names
    for scope in ("conv1", "conv2", "dense", "loss"):
        board.locator(f".nbflow-group[data-name='{scope}']").wait_for()
    assert min(label_contrasts(board)) >= 4.5
    page.screenshot(path=str(ARTIFACTS / "cnn-board.png"))


def start_tensorboard(logdir: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [TENSORBOARD, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )

    def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"tensorboard exited:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/runs", timeout=2) as r:
                return r.read().strip() not in (b"", b"[]")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    wait_until(ready, 90, "tensorboard to list the run", interval=0.3)
    return process, f"http://127.0.0.1:{port}/"


@pytest.mark.parametrize("run", ["mlp", "rnn", "cnn"])
def test_tensorboard_draws_the_same_graphs(logs, browser, run, tmp_path):
    if TENSORBOARD is None:
        pytest.skip("tensorboard is not installed beside this Python")
    process, url = start_tensorboard(logs / "graphs" / run, tmp_path / "tensorboard.log")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{url}#graphs")
        page.locator("tf-graph-basic, tf-graph-dashboard").first.wait_for()
        page.wait_for_function(
            """() => { const find = (root) => { if (!root) return null;
                 const n = root.querySelector && root.querySelector('g.node, .node');
                 if (n) return n;
                 for (const el of root.querySelectorAll ? root.querySelectorAll('*') : []) {
                   if (el.shadowRoot) { const f = find(el.shadowRoot); if (f) return f; } }
                 return null; };
               return !!find(document); }"""
        )
        page.screenshot(path=str(ARTIFACTS / f"{run}-tensorboard.png"))
    finally:
        context.close()
        process.terminate()
        process.wait(10)
