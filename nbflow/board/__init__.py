"""The nbflow Board's server side: a Jupyter server extension serving event logs as JSON.

Enabled on install by ``jupyter-config/jupyter_server_config.d/nbflow.json``. The board root
(the directory that request paths are relative to, and that none may leave) defaults to the
server's ``root_dir``; set it with ``--NbflowBoard.root=PATH`` or ``c.NbflowBoard.root``.
The JupyterLab front end lives in ``extension/`` and is shipped prebuilt as
``share/jupyter/labextensions/nbflow``.
"""

from __future__ import annotations

from typing import Any

from traitlets import Unicode
from traitlets.config import Configurable


class NbflowBoard(Configurable):
    """Settings of the nbflow Board server extension."""

    root = Unicode(
        "",
        config=True,
        help="Directory that log paths are relative to; defaults to the server's root_dir.",
    )


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    return [{"module": "nbflow.board"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "../labextension", "dest": "nbflow"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from nbflow.board.handlers import setup_handlers

    settings = NbflowBoard(parent=serverapp)
    root = settings.root or serverapp.root_dir
    setup_handlers(serverapp.web_app, root)
    serverapp.log.info("nbflow Board serving logs under %s", root)
