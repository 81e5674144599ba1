"""``tf.train.warm_start``: start a new model's variables from an older model's checkpoint.

    tf.train.warm_start("/tmp/old_model", vars_to_warm_start="dense.*",
                        var_name_to_vocab_info={"emb": tf.train.VocabInfo(
                            new_vocab="new_words.txt", new_vocab_size=5000, num_oov_buckets=1,
                            old_vocab="old_words.txt")})
    sess.run(tf.global_variables_initializer())     # now loads from the checkpoint

It changes the chosen variables' initializers (as ``init_from_checkpoint`` does), so it is
called after the model is built and before its initializer runs. A variable with a
``VocabInfo`` has one row (or column, ``axis=1``) per vocabulary word: each row of a word the
old vocabulary also has is copied from the old row; rows of new words and of the
``num_oov_buckets`` out-of-vocabulary buckets take ``backup_initializer`` (zeros by default).
"""

from __future__ import annotations

import collections
import re
from typing import Any

import numpy as np

from nbflow.framework import ops as ops_lib
from nbflow.framework.ops import GraphKeys
from nbflow.ops import array_ops, init_ops, state_ops, variables
from nbflow.train import checkpoint_utils

_VocabInfoBase = collections.namedtuple(  # type: ignore[name-match]  # repr says VocabInfo
    "VocabInfo",
    [
        "new_vocab",
        "new_vocab_size",
        "num_oov_buckets",
        "old_vocab",
        "old_vocab_size",
        "backup_initializer",
        "axis",
    ],
)


class VocabInfo(_VocabInfoBase):
    """How a vocabulary-indexed variable maps from the old vocabulary file to the new one."""

    def __new__(
        cls,
        new_vocab: str,
        new_vocab_size: int,
        num_oov_buckets: int,
        old_vocab: str,
        old_vocab_size: int = -1,
        backup_initializer: Any = None,
        axis: int = 0,
    ) -> VocabInfo:
        if axis not in (0, 1):
            raise ValueError(
                f"The only supported values for the axis argument are 0 and 1. "
                f"Provided axis: {axis}"
            )
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


def _read_vocab(path: str, size: int) -> list[str]:
    with open(path, encoding="utf-8") as f:
        words = [line.rstrip("\n") for line in f]
    return words if size < 0 else words[:size]


def _chosen_variables(vars_to_warm_start: Any) -> list[Any]:
    if vars_to_warm_start is None:
        return []
    if isinstance(vars_to_warm_start, str):
        pattern = re.compile(vars_to_warm_start)
        return [v for v in variables.trainable_variables() if pattern.match(v.op.name)]
    items = list(vars_to_warm_start)
    if all(isinstance(item, str) for item in items):
        patterns = [re.compile(p) for p in items]
        return [
            v
            for v in ops_lib.get_collection(GraphKeys.GLOBAL_VARIABLES)
            if any(p.match(v.op.name) for p in patterns)
        ]
    if all(isinstance(item, variables.Variable) for item in items):
        return items
    raise ValueError(
        f"vars_to_warm_start must be a regex, a list of regexes or of Variables, "
        f"got {vars_to_warm_start!r}"
    )


def _warm_start_with_vocab(v: Any, ckpt: str, prev_name: str, info: VocabInfo) -> None:
    """Make ``v``'s initializer the old rows remapped to the new vocabulary, backup elsewhere."""
    old = checkpoint_utils.load_variable(ckpt, prev_name)
    old_words = _read_vocab(info.old_vocab, info.old_vocab_size)
    new_words = _read_vocab(info.new_vocab, info.new_vocab_size)
    if len(new_words) != info.new_vocab_size:
        raise ValueError(
            f"new_vocab {info.new_vocab} has {len(new_words)} words, fewer than "
            f"new_vocab_size {info.new_vocab_size}"
        )
    shape = v.shape.as_list()
    rows = info.new_vocab_size + info.num_oov_buckets
    if shape[info.axis] != rows:
        raise ValueError(
            f"Variable {v.op.name} has {shape[info.axis]} entries along axis {info.axis}, but "
            f"the vocabulary gives {info.new_vocab_size} + {info.num_oov_buckets} OOV buckets"
        )
    old_index = {w: i for i, w in enumerate(old_words) if i < old.shape[info.axis]}
    moved = np.moveaxis(old, info.axis, 0)
    remapped = np.zeros((rows,) + moved.shape[1:], dtype=old.dtype)
    found = np.zeros(rows, dtype=bool)
    for i, word in enumerate(new_words):
        if word in old_index:
            remapped[i] = moved[old_index[word]]
            found[i] = True
    remapped = np.moveaxis(remapped, 0, info.axis)
    mask_shape = [1] * len(shape)
    mask_shape[info.axis] = rows
    mask = np.broadcast_to(found.reshape(mask_shape), remapped.shape)
    backup_initializer = info.backup_initializer or init_ops.zeros_initializer()
    with v.graph.as_default(), ops_lib.control_dependencies(None):
        with ops_lib.colocate_with(v.op), ops_lib.name_scope(f"{v.op.name}/warm_starting"):
            backup = backup_initializer(shape, v.dtype.base_dtype)
            value = array_ops.where(
                array_ops.constant(mask),
                array_ops.constant(remapped, dtype=v.dtype.base_dtype),
                backup,
            )
            v._initializer_op = state_ops.assign(v, value, name="Assign").op
            v._initial_value = value


def warm_start(
    ckpt_to_initialize_from: str,
    vars_to_warm_start: Any = ".*",
    var_name_to_vocab_info: dict[str, VocabInfo] | None = None,
    var_name_to_prev_var_name: dict[str, str] | None = None,
) -> None:
    """Initialize the chosen variables from ``ckpt_to_initialize_from`` (a prefix or directory).

    ``vars_to_warm_start``: a regex over trainable variables' names, a list of regexes over all
    global variables, a list of Variables, or None (only those with vocabulary info).
    ``var_name_to_prev_var_name`` renames: the checkpoint's name for a variable of this model.
    Every name in the two maps must be a chosen variable (else ValueError, as TensorFlow).
    """
    vocab_info = dict(var_name_to_vocab_info or {})
    prev_names = dict(var_name_to_prev_var_name or {})
    chosen = {v.op.name: v for v in _chosen_variables(vars_to_warm_start)}
    for name in vocab_info:
        if name not in chosen:
            matches = [
                v for v in ops_lib.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.op.name == name
            ]
            chosen.update((v.op.name, v) for v in matches)
    unused = (set(vocab_info) | set(prev_names)) - set(chosen)
    if unused:
        raise ValueError(
            f"You provided the following variables in var_name_to_vocab_info or "
            f"var_name_to_prev_var_name that were not used: {sorted(unused)}. Perhaps you "
            f"misspelled them, or they were not in vars_to_warm_start."
        )
    for name, v in chosen.items():
        prev_name = prev_names.get(name, name)
        if name in vocab_info:
            _warm_start_with_vocab(v, ckpt_to_initialize_from, prev_name, vocab_info[name])
        else:
            checkpoint_utils.init_from_checkpoint(ckpt_to_initialize_from, {prev_name: v})
