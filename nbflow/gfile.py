"""``tf.gfile``: TensorFlow 1.x's file API over the local file system.

TF1 programs use it for checkpoints directories and data files (``tf.gfile.MakeDirs``,
``tf.gfile.GFile(path, "r")``); here every call is the ``os``/``shutil``/``glob`` call it names,
and errors are TensorFlow's (``NotFoundError`` for a missing path).
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from typing import IO, Any
from collections.abc import Iterator

from nbflow import errors


def _not_found(path: str, e: OSError) -> errors.OpError:
    return errors.NotFoundError(None, None, f"{path}; {e.strerror or e}")


class GFile:
    """A file object: ``with tf.gfile.GFile(path, "w") as f: f.write(text)``."""

    def __init__(self, name: str, mode: str = "r"):
        self.name = name
        self.mode = mode
        try:
            self._file: IO[Any] = open(name, mode)  # noqa: SIM115 - closed by close()
        except FileNotFoundError as e:
            raise _not_found(name, e) from None

    def read(self, n: int = -1) -> Any:
        return self._file.read(n)

    def readline(self) -> Any:
        return self._file.readline()

    def readlines(self) -> list[Any]:
        return self._file.readlines()

    def write(self, data: Any) -> None:
        self._file.write(data)

    def flush(self) -> None:
        self._file.flush()

    def seek(self, offset: int, whence: int = 0) -> None:
        self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def size(self) -> int:
        return os.path.getsize(self.name)

    def close(self) -> None:
        self._file.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._file)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


FastGFile = GFile
Open = GFile


def Exists(filename: str) -> bool:  # noqa: N802 - TensorFlow's names
    return os.path.exists(filename)


def IsDirectory(dirname: str) -> bool:  # noqa: N802
    return os.path.isdir(dirname)


def MakeDirs(dirname: str) -> None:  # noqa: N802
    os.makedirs(dirname, exist_ok=True)


def MkDir(dirname: str) -> None:  # noqa: N802
    os.mkdir(dirname)


def ListDirectory(dirname: str) -> list[str]:  # noqa: N802
    try:
        return sorted(os.listdir(dirname))
    except FileNotFoundError as e:
        raise _not_found(dirname, e) from None


def Glob(pattern: str) -> list[str]:  # noqa: N802
    return sorted(_glob.glob(pattern))


def Remove(filename: str) -> None:  # noqa: N802
    try:
        os.remove(filename)
    except FileNotFoundError as e:
        raise _not_found(filename, e) from None


def DeleteRecursively(dirname: str) -> None:  # noqa: N802
    try:
        shutil.rmtree(dirname)
    except FileNotFoundError as e:
        raise _not_found(dirname, e) from None


def Copy(oldpath: str, newpath: str, overwrite: bool = False) -> None:  # noqa: N802
    if not overwrite and os.path.exists(newpath):
        raise errors.AlreadyExistsError(None, None, f"{newpath} already exists")
    shutil.copyfile(oldpath, newpath)


def Rename(oldname: str, newname: str, overwrite: bool = False) -> None:  # noqa: N802
    if not overwrite and os.path.exists(newname):
        raise errors.AlreadyExistsError(None, None, f"{newname} already exists")
    os.replace(oldname, newname)


def Walk(top: str, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:  # noqa: N802
    yield from os.walk(top, topdown=in_order)


class _Stat:
    def __init__(self, path: str):
        st = os.stat(path)
        self.length = st.st_size
        self.mtime_nsec = st.st_mtime_ns
        self.is_directory = os.path.isdir(path)


def Stat(filename: str) -> _Stat:  # noqa: N802
    try:
        return _Stat(filename)
    except FileNotFoundError as e:
        raise _not_found(filename, e) from None
