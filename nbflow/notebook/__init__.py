"""nbflow in notebooks: the ``%%dataflow`` magics, rich display, and the live widgets.

    %load_ext nbflow          # or just `import nbflow` inside IPython

This is the top layer: it imports IPython, ipywidgets and anywidget; only the package
``nbflow`` imports it (this light module), and ``display`` registers the rich display of graphs,
ops and tensors with the framework (``register_mimebundle_renderer``). Two plug-in points stay
lazy: ``load_ipython_extension`` imports the magics (and IPython's machinery), and the magics
import ``cluster`` (and Dask) when ``%dataflow_cluster`` first runs.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

_loaded: set[int] = set()


def load_ipython_extension(ipython: Any) -> None:
    """Register the nbflow magics in ``ipython`` (idempotent)."""
    from nbflow.notebook.magics import DataflowMagics
    from nbflow.notebook.sources import CellFiles

    if id(ipython) in _loaded:
        return
    ipython.register_magics(DataflowMagics)
    CellFiles().install(ipython)  # the logged graph names the cell that created each op
    _loaded.add(id(ipython))


def unload_ipython_extension(ipython: Any) -> None:
    _loaded.discard(id(ipython))


def register_if_in_ipython() -> None:
    """Load the extension when nbflow is imported inside a running IPython."""
    if "IPython" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        load_ipython_extension(shell)


_LAZY = {
    "build_cell": "nbflow.notebook.cells",
    "NotebookGraphs": "nbflow.notebook.cells",
    "StaleCellsError": "nbflow.notebook.cells",
    "notebook_graphs": "nbflow.notebook.magics",
    "GraphWidget": "nbflow.notebook.widgets.graph",
    "SummaryDashboard": "nbflow.notebook.widgets.dashboard",
    "TimelineWidget": "nbflow.notebook.widgets.timeline",
    "HistogramsWidget": "nbflow.notebook.widgets.histograms",
    "ImagesWidget": "nbflow.notebook.widgets.images",
    "ScalarsWidget": "nbflow.notebook.widgets.scalars",
    "ClusterWidget": "nbflow.notebook.widgets.cluster",
    "RunControls": "nbflow.notebook.widgets.controls",
    "MemorySource": "nbflow.notebook.logs",
    "LogDirSource": "nbflow.notebook.logs",
    "TrainingRun": "nbflow.notebook.training",
    "start_training": "nbflow.notebook.training",
    "progress_hook": "nbflow.notebook.training",
}


def __getattr__(name: str) -> Any:
    """Widgets and helpers load on first use, so ``import nbflow`` in IPython stays light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nbflow.notebook' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
