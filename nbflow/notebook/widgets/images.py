"""Image summaries in a notebook output, drawn by the nbflow Board's own images view.

The page renders with the panel's TypeScript ``ImagesView`` (bundled by ``front_end``): a card
per (run, tag) with a step slider that follows the newest step. As with the Board's routes, the
series (``series``) carries only each image's ``index``, ``width`` and ``height`` (the JSON of
the ``images`` route); the view asks for the bytes of the image it shows with a message
``{"type": "image", "request", "run", "tag", "index"}`` and the kernel answers with the encoded
image as a binary buffer (what the ``image`` route serves).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import traitlets

from nbflow.notebook.widgets.front_end import BoardWidget


class ImagesWidget(BoardWidget):
    """Image series by (run, tag), shown as the Board shows them; ``extend`` adds steps."""

    bundle = "images.js"
    series = traitlets.List(traitlets.Dict()).tag(sync=True)

    def __init__(self, **kwargs: Any):
        self._series: dict[tuple[str, str], dict[str, list]] = {}
        self._bytes: dict[tuple[str, str], list[bytes]] = {}
        self._lock = threading.Lock()
        super().__init__(**kwargs)
        self.on_msg(self._on_front_end_msg)

    def extend(
        self,
        run: str,
        tag: str,
        steps: Sequence[int],
        wall_times: Sequence[float],
        values: Sequence[Any],
        *,
        restart: bool = False,
    ) -> None:
        """Append images (objects with ``png`` bytes, ``width`` and ``height``, as
        ``nbflow.summary.reader.ImageValue``) to a series (``restart``: replace it)."""
        with self._lock:
            key = (run, tag)
            series = self._series.get(key)
            if series is None or restart:
                series = self._series[key] = {"steps": [], "wall_times": [], "values": []}
                self._bytes[key] = []
            stored = self._bytes[key]
            for image in values:
                series["values"].append(
                    {"index": len(stored), "width": int(image.width), "height": int(image.height)}
                )
                stored.append(bytes(image.png))
            series["steps"] += [int(s) for s in steps]
            series["wall_times"] += [float(w) for w in wall_times]
            self.series = [
                {"run": r, "tag": t, **{k: list(v) for k, v in s.items()}}
                for (r, t), s in sorted(self._series.items())
            ]

    def image(self, run: str, tag: str, index: int) -> bytes:
        """The encoded bytes of one image, as the page asks for them."""
        with self._lock:
            return self._bytes[(run, tag)][index]

    def _on_front_end_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("type") != "image":
            return
        reply: dict[str, Any] = {"type": "image", "request": content.get("request")}
        try:
            data = self.image(str(content["run"]), str(content["tag"]), int(content["index"]))
        except (KeyError, IndexError, ValueError) as e:
            self.send({**reply, "error": f"no image {e}"})
            return
        self.send(reply, buffers=[data])
