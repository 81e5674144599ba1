"""``tf.logging``: TensorFlow 1.x's logging functions, on Python's ``logging``.

Messages go to the ``nbflow`` logger, the parent of nbflow's own loggers (``nbflow.train``,
``nbflow.estimator``), so ``tf.logging.set_verbosity(tf.logging.INFO)`` shows both a program's
``tf.logging.info`` lines and the training hooks' ``loss = ..., step = ...`` lines, as TensorFlow's
did. As in TensorFlow, the first use adds a handler when the process has configured none (to
stdout at INFO in an interactive interpreter, else to stderr; silent once the process configures
logging, e.g. through ``tf.app.run``), and records name the caller's file and line, not this
module's.

    >>> import nbflow as tf
    >>> tf.logging.set_verbosity(tf.logging.WARN)
    >>> tf.logging.get_verbosity() == tf.logging.WARN
    True
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

DEBUG = logging.DEBUG
INFO = logging.INFO
WARN = logging.WARN
ERROR = logging.ERROR
FATAL = logging.FATAL


class _DefaultHandler(logging.StreamHandler):
    """Prints while the process has configured no logging of its own; once the root logger has
    handlers (``absl.app.run`` under ``tf.app.run``, ``logging.basicConfig``), records reach
    them by propagation instead, so no line is printed twice."""

    def emit(self, record: logging.LogRecord) -> None:
        if not logging.getLogger().handlers:
            super().emit(record)


_logger: logging.Logger | None = None
_logger_lock = threading.Lock()
_calls_per_site: dict[tuple[str, int], int] = {}


def get_logger() -> logging.Logger:
    """The ``nbflow`` logger behind ``tf.logging`` (``tf.get_logger()``)."""
    global _logger
    with _logger_lock:
        if _logger is None:
            logger = logging.getLogger("nbflow")
            if not logging.getLogger().handlers and not logger.handlers:
                interactive = hasattr(sys, "ps1") or bool(sys.flags.interactive)
                if interactive:
                    logger.setLevel(INFO)
                handler = _DefaultHandler(sys.stdout if interactive else sys.stderr)
                handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT))
                logger.addHandler(handler)
            _logger = logger
        return _logger


def _log(level: int, msg: Any, args: tuple, kwargs: dict, depth: int) -> None:
    # stacklevel: this function, the tf.logging function(s) above it, then the caller.
    get_logger().log(level, msg, *args, stacklevel=depth + 1, **kwargs)


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Log ``msg % args`` at ``level``."""
    _log(level, msg, args, kwargs, depth=2)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Log ``msg % args`` at ``level`` (TensorFlow's verbose log, the same as ``log``)."""
    _log(level, msg, args, kwargs, depth=2)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    _log(DEBUG, msg, args, kwargs, depth=2)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    _log(INFO, msg, args, kwargs, depth=2)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    _log(WARN, msg, args, kwargs, depth=2)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    _log(ERROR, msg, args, kwargs, depth=2)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Log at FATAL; like TensorFlow's Python logger, this does not end the process."""
    _log(FATAL, msg, args, kwargs, depth=2)


def log_if(level: int, msg: Any, condition: object, *args: Any) -> None:
    """Log ``msg % args`` at ``level`` only when ``condition`` holds."""
    if condition:
        _log(level, msg, args, {}, depth=2)


def _next_call_count() -> int:
    """How often the line calling the tf.logging function has called it before (0 first)."""
    frame = sys._getframe(2)
    site = (frame.f_code.co_filename, frame.f_lineno)
    count = _calls_per_site[site] = _calls_per_site.get(site, -1) + 1
    return count


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Log on the 1st, (n+1)st, (2n+1)st... call from the same line."""
    if _next_call_count() % n == 0:
        _log(level, msg, args, {}, depth=2)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Log on the first ``n`` calls from the same line only."""
    if _next_call_count() < n:
        _log(level, msg, args, {}, depth=2)


def TaskLevelStatusMessage(msg: Any) -> None:  # noqa: N802 - TensorFlow's name
    """Report a task's status (logged at ERROR, as TensorFlow did)."""
    _log(ERROR, msg, (), {}, depth=2)


def flush() -> None:
    """Flush the handlers of the ``nbflow`` logger (TensorFlow 1.15 raised NotImplementedError)."""
    for handler in get_logger().handlers:
        handler.flush()


def get_verbosity() -> int:
    """The level below which messages are dropped."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v: int) -> None:
    """Drop messages below level ``v`` (``tf.logging.INFO``, ``WARN``, ...)."""
    get_logger().setLevel(v)
