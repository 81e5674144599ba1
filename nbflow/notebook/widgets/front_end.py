"""The notebook widgets' front ends: the Board's own TypeScript views, bundled for anywidget.

``extension/src/notebook/*Widget.ts`` wrap the JupyterLab panel's ``GraphView`` and
``ScalarsView`` (extension/src/views/) as anywidget modules; ``npm run build:prod`` — run by the
package build, so ``pip install`` and ``pip install -e .`` do it — bundles each into one
self-contained ES module in ``dist/`` next to this file, with the panel's stylesheet. The panel
and the inline widgets therefore draw and behave the same way, and nothing is fetched from a
CDN: the kernel sends the module's text to the page.
"""

from __future__ import annotations

import functools
import pathlib
from typing import ClassVar

import anywidget
import traitlets

DIST = pathlib.Path(__file__).parent / "dist"
STYLESHEET = "board.css"


@functools.cache
def bundle_text(name: str) -> str:
    """The text of a built front-end file; says how to build it when it is missing."""
    path = DIST / name
    if not path.is_file():
        raise FileNotFoundError(
            f"nbflow's notebook widget front end {path} is missing: it is built with the "
            "package (`pip install -e .`), or run `npm install && npm run build:widgets` in "
            "extension/"
        )
    return path.read_text(encoding="utf-8")


class BoardWidget(anywidget.AnyWidget):
    """An anywidget whose front end is one of the bundled Board views (``bundle`` names it)."""

    bundle: ClassVar[str] = ""
    _esm = traitlets.Unicode().tag(sync=True)
    _css = traitlets.Unicode().tag(sync=True)

    @traitlets.default("_esm")
    def _default_esm(self) -> str:
        return bundle_text(self.bundle)

    @traitlets.default("_css")
    def _default_css(self) -> str:
        return bundle_text(STYLESHEET)
