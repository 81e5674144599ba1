"""The smoke notebook, executed end to end in a real kernel (this venv's python) by nbclient."""

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "00_widgets_smoke.ipynb"


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernelspec for this interpreter in a temporary JUPYTER_PATH (nothing global)."""
    spec = tmp_path / "jupyter" / "kernels" / "nbflow-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "nbflow test", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in sys.path if p))
    return "nbflow-test"


@pytest.mark.timeout(180)
def test_smoke_notebook_runs_every_magic_and_widget(kernel_name, tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb, kernel_name=kernel_name, timeout=120, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    mimes = {m for o in outputs for m in o.get("data", {})}
    assert "application/vnd.jupyter.widget-view+json" in mimes
    assert "application/vnd.nbflow.board+json" in mimes
    assert "application/vnd.bokehjs_load.v0+json" not in mimes  # the widgets are the Board's
    text = json.dumps([cell.get("outputs", []) for cell in nb.cells])
    assert "diff to last run" in text  # the re-run cell showed its diff
    provenance = json.loads((tmp_path / "logs" / "smoke" / "nbflow_run.json").read_text())
    assert "start_training" in provenance["source"]  # nbclient sends no cell id; JupyterLab does
