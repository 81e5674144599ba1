"""``tf.resource_loader``: find and read data files shipped beside a program's modules.

    path = tf.resource_loader.get_path_to_datafile("vocab.txt")   # next to the calling module
    data = tf.resource_loader.load_resource("nbflow/api/tf1_names.json")

Paths given to ``load_resource`` are relative to the directory that holds the ``nbflow``
package (TensorFlow's are relative to the one holding ``tensorflow``).
"""

from __future__ import annotations

import inspect
import os


def get_root_dir_with_all_resources() -> str:
    """The directory ``load_resource`` paths are relative to: the one holding ``nbflow``."""
    return os.path.dirname(get_data_files_path())


def get_data_files_path() -> str:
    """The directory of the ``nbflow`` package."""
    return os.path.dirname(os.path.abspath(__file__))


def get_path_to_datafile(path: str) -> str:
    """``path`` joined to the directory of the module that calls this function."""
    caller = inspect.stack()[1].filename
    return os.path.join(os.path.dirname(os.path.abspath(caller)), path)


def load_resource(path: str) -> bytes:
    """The bytes of ``path`` (relative to ``get_root_dir_with_all_resources()``).

    Raises IOError if the file cannot be read.
    """
    full = os.path.join(get_root_dir_with_all_resources(), path.replace("/", os.sep))
    with open(full, "rb") as f:
        return f.read()


def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """``path`` itself: nbflow reads local files directly, with no readahead cache."""
    del readahead
    return path
