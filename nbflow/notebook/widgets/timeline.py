"""The timeline widget: one traced step, a row per device and thread, ops as bars, Send/Recv
and flow arrows, zoom with the wheel (Bokeh, shown through ``BokehModel``)."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.models.annotations.arrows import Arrow, VeeHead
from bokeh.plotting import figure

from nbflow.notebook.timeline_model import TimelineModel, trace_model
from nbflow.notebook.widgets.plots import bokeh_widget

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1")


def timeline_figure(model: TimelineModel) -> tuple[Any, ColumnDataSource, ColumnDataSource]:
    rows = list(model.rows)[::-1] or ["(empty)"]
    fig = figure(
        y_range=rows,  # type: ignore[arg-type]  # Bokeh makes a FactorRange of the names
        height=max(160, 34 * len(rows) + 80),
        width=900,
        tools="xpan,xwheel_zoom,box_zoom,reset",
        active_scroll="xwheel_zoom",
        x_axis_label="µs since step start",
    )
    ops = sorted({b.op for b in model.bars})
    color = {op: PALETTE[k % len(PALETTE)] for k, op in enumerate(ops)}
    bars = ColumnDataSource(
        {
            "row": [b.row for b in model.bars],
            "left": [b.start for b in model.bars],
            "right": [b.end for b in model.bars],
            "name": [b.name for b in model.bars],
            "op": [b.op for b in model.bars],
            "dur": [b.end - b.start for b in model.bars],
            "color": [color[b.op] for b in model.bars],
        }
    )
    fig.hbar(y="row", left="left", right="right", height=0.7, color="color", source=bars)
    fig.add_tools(HoverTool(tooltips=[("op", "@name (@op)"), ("µs", "@dur{0.0}")]))
    arrows = ColumnDataSource(
        {
            "x_start": [a.start for a in model.arrows],
            "y_start": [a.start_row for a in model.arrows],
            "x_end": [a.end for a in model.arrows],
            "y_end": [a.end_row for a in model.arrows],
        }
    )
    fig.add_layout(
        Arrow(  # type: ignore[call-arg]  # Bokeh's stubs lack Arrow's line_color (3.9 has it)
            end=VeeHead(size=8, fill_color="#d62728", line_color="#d62728"),
            x_start="x_start",
            y_start="y_start",
            x_end="x_end",
            y_end="y_end",
            line_color="#d62728",
            source=arrows,
        )
    )
    return fig, bars, arrows


class TimelineWidget(widgets.VBox):
    """A traced step: ``TimelineWidget(run_metadata)``, a Chrome trace dict, JSON or path."""

    def __init__(self, trace: Any):
        self.model = trace_model(trace)
        self.figure, self.bars, self.arrows = timeline_figure(self.model)
        summary = widgets.HTML(
            f"<b>step timeline</b>: {len(self.model.bars)} ops on {len(self.model.rows)} rows, "
            f"{self.model.duration:.0f} µs, {len(self.model.arrows)} transfers"
        )
        super().__init__([summary, bokeh_widget(self.figure)])
