"""Bokeh in notebook outputs, offline: BokehJS is loaded inline (no CDN) once per kernel, and
figures are wrapped in jupyter_bokeh's ``BokehModel`` widget so data streamed into their
``ColumnDataSource`` from Python (even from a background thread) reaches the page live."""

from __future__ import annotations

from typing import Any

from nbflow.notebook.display import in_kernel

_bokeh_loaded = False


def ensure_bokeh() -> None:
    """Load BokehJS inline into the page (``output_notebook(INLINE)``) the first time."""
    global _bokeh_loaded
    if _bokeh_loaded or not in_kernel():
        return
    from bokeh.io import output_notebook
    from bokeh.resources import INLINE

    output_notebook(INLINE, hide_banner=True)
    _bokeh_loaded = True


def bokeh_widget(figure: Any) -> Any:
    """An ipywidget showing a Bokeh model, kept in sync with it."""
    from jupyter_bokeh.widgets import BokehModel

    ensure_bokeh()
    return BokehModel(figure)
