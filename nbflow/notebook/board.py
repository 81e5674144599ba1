"""``%dataflow_board LOGDIR``: ask the JupyterLab extension to open the nbflow Board.

The display carries ``application/vnd.nbflow.board+json`` (``{"logdir": ...}``), which the
extension's renderer turns into "open the Board panel on this log directory"; front ends
without the extension show the HTML or text fallback."""

from __future__ import annotations

import html
import os
from typing import Any

BOARD_MIME = "application/vnd.nbflow.board+json"


class BoardDisplay:
    def __init__(self, logdir: str):
        self.logdir = logdir

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        shown = html.escape(self.logdir)
        return {
            BOARD_MIME: {"logdir": self.logdir},
            "text/html": (
                f"<div class='nbflow-board-link'>nbflow Board for <code>{shown}</code>: open "
                "it from the command palette (<i>nbflow: Open Board</i>) if the panel did not "
                f"open, or run <code>tensorboard --logdir {shown}</code>.</div>"
            ),
            "text/plain": f"nbflow Board: {self.logdir}",
        }


def board_display(logdir: str) -> BoardDisplay:
    return BoardDisplay(os.path.abspath(os.path.expanduser(logdir)))
