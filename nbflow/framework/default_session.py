"""The default session: a per-thread stack of sessions, innermost last.

``Session.__enter__`` and ``sess.as_default()`` push a session; ``Tensor.eval()`` and
``Operation.run()`` use the innermost one when they are given none.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any


class _Sessions(threading.local):
    def __init__(self) -> None:
        self.stack: list[Any] = []


_sessions = _Sessions()


def get_default_session() -> Any:
    return _sessions.stack[-1] if _sessions.stack else None


@contextlib.contextmanager
def default_session(session: Any) -> Iterator[Any]:
    _sessions.stack.append(session)
    try:
        yield session
    finally:
        _sessions.stack.pop()


def _push_session(session: Any) -> None:
    _sessions.stack.append(session)


def _remove_session(session: Any) -> None:
    if session in _sessions.stack:
        _sessions.stack.remove(session)
