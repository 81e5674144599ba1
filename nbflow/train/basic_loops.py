"""``tf.train.basic_train_loop``: the simplest loop over a supervisor's managed session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def basic_train_loop(
    supervisor: Any,
    train_step_fn: Callable[..., Any],
    args: tuple | None = None,
    kwargs: dict | None = None,
    master: str = "",
) -> None:
    """Call ``train_step_fn(session, *args, **kwargs)`` until ``supervisor.should_stop()``.

    ``supervisor`` is anything with TensorFlow's Supervisor interface: ``managed_session(master)``
    (a context manager yielding a session) and ``should_stop()``.
    """
    args = tuple(args or ())
    kwargs = dict(kwargs or {})
    with supervisor.managed_session(master) as sess:
        while not supervisor.should_stop():
            train_step_fn(sess, *args, **kwargs)
