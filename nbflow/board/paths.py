"""Resolving request paths inside the board's root, refusing everything that escapes it.

Every path a request names (log directory, run, trace file) is relative to the root the server
was configured with. ``resolve_inside`` refuses absolute paths, ``..`` components and paths
whose real location (after following symlinks) lies outside the root.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath


class PathRefused(ValueError):
    """A requested path is absolute, climbs out with ``..`` or resolves outside the root."""


def resolve_inside(root: str | os.PathLike, relative: str) -> Path:
    """The real path of ``relative`` under ``root``; raises ``PathRefused`` if it escapes.

    >>> resolve_inside("/", "../etc")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    nbflow.board.paths.PathRefused: path '../etc' climbs out of the root with '..'
    """
    relative = relative or "."
    if "\x00" in relative:
        raise PathRefused("path contains a NUL byte")
    if PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute():
        raise PathRefused(f"path {relative!r} is absolute; give it relative to the board root")
    if PureWindowsPath(relative).drive:
        raise PathRefused(f"path {relative!r} names a drive")
    parts = relative.replace("\\", "/").split("/")
    if ".." in parts:
        raise PathRefused(f"path {relative!r} climbs out of the root with '..'")
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(real_root / relative))
    if real != real_root and real_root not in real.parents:
        raise PathRefused(f"path {relative!r} resolves outside the board root (a symlink?)")
    return real
