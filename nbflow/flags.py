"""``tf.flags`` / ``tf.app.flags``: command-line flags, as TensorFlow 1.x offered them.

TensorFlow 1.x re-exported ``absl.flags`` and so does nbflow: the same ``DEFINE_*`` functions,
parsers, errors and the process-wide ``FLAGS``, shared with every other absl user in the process.
On top of absl, as TensorFlow did:

- ``FLAGS`` parses ``sys.argv`` itself the first time a flag is read (absl would raise
  ``UnparsedFlagAccessError``), ignoring arguments it does not know. In a notebook, where
  ``sys.argv`` is the kernel's (``-f kernel.json``), flags therefore read their defaults.
- The old keyword names ``flag_name``, ``default_value`` and ``docstring`` are accepted.

And one notebook convenience: defining a flag again from the module that defined it (a re-run
notebook cell) replaces it instead of raising ``DuplicateFlagError``.

    >>> import nbflow as tf
    >>> _ = tf.flags.DEFINE_integer("doctest_batch_size", 32, "examples per step")
    >>> tf.flags.FLAGS.doctest_batch_size
    32
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any

import absl.flags
from absl.flags import *  # noqa: F403 - tf.flags is absl.flags

# absl credits a flag to the module that called DEFINE_*: skip this one, credit the caller.
absl.flags.disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


class ImplicitlyParsedFlags:
    """``absl.flags.FLAGS`` that parses ``sys.argv`` (known flags only) on the first flag read."""

    def __init__(self, flag_values: absl.flags.FlagValues):
        self.__dict__["_wrapped"] = flag_values

    def __getattr__(self, name: str) -> Any:
        wrapped = self.__dict__["_wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv, known_only=True)
        return getattr(wrapped, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.__dict__["_wrapped"], name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self.__dict__["_wrapped"], name)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__["_wrapped"])

    def __contains__(self, name: str) -> bool:
        return name in self.__dict__["_wrapped"]

    def __getitem__(self, name: str) -> absl.flags.Flag:
        return self.__dict__["_wrapped"][name]

    def __setitem__(self, name: str, flag: absl.flags.Flag) -> None:
        self.__dict__["_wrapped"][name] = flag

    def __len__(self) -> int:
        return len(self.__dict__["_wrapped"])

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dict__["_wrapped"])

    def __str__(self) -> str:
        return str(self.__dict__["_wrapped"])

    def __call__(self, *args: Any, **kwargs: Any) -> list[str]:
        return self.__dict__["_wrapped"](*args, **kwargs)


# (replaces the FLAGS of ``from absl.flags import *`` with the wrapper that parses on first use)
FLAGS = ImplicitlyParsedFlags(absl.flags.FLAGS)  # type: ignore[assignment]


def _defines_flag(define: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an absl ``DEFINE_*`` with TF's old keyword names and notebook re-definition."""

    @functools.wraps(define)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for old, new in _RENAMED_ARGUMENTS.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        flag_values = kwargs.get("flag_values", absl.flags.FLAGS)
        if isinstance(flag_values, ImplicitlyParsedFlags):
            flag_values = kwargs["flag_values"] = flag_values.__dict__["_wrapped"]
        name = args[0] if args else kwargs.get("name", "")
        caller = sys._getframe(1).f_globals.get("__name__")
        if name in flag_values and flag_values.find_module_defining_flag(name) == caller:
            delattr(flag_values, name)  # a re-run notebook cell defines its flags again
        return define(*args, **kwargs)

    return wrapper


DEFINE_string = _defines_flag(absl.flags.DEFINE_string)
DEFINE_boolean = _defines_flag(absl.flags.DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _defines_flag(absl.flags.DEFINE_float)
DEFINE_integer = _defines_flag(absl.flags.DEFINE_integer)
DEFINE_enum = _defines_flag(absl.flags.DEFINE_enum)
DEFINE_enum_class = _defines_flag(absl.flags.DEFINE_enum_class)
DEFINE_list = _defines_flag(absl.flags.DEFINE_list)
DEFINE_spaceseplist = _defines_flag(absl.flags.DEFINE_spaceseplist)
DEFINE_multi_string = _defines_flag(absl.flags.DEFINE_multi_string)
DEFINE_multi_integer = _defines_flag(absl.flags.DEFINE_multi_integer)
DEFINE_multi_float = _defines_flag(absl.flags.DEFINE_multi_float)
DEFINE_multi_enum = _defines_flag(absl.flags.DEFINE_multi_enum)
DEFINE_multi_enum_class = _defines_flag(absl.flags.DEFINE_multi_enum_class)
