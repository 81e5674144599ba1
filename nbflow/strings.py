"""``tf.strings``: TensorFlow 1.15's string names over nbflow's string ops.

The ops live in ``ops/string_ops.py`` (elementwise: length, case, substr, regexes, numbers,
hash buckets, as_string, join) and ``ops/string_split_ops.py`` (split into a SparseTensor,
reduce_join, format); the hashes are TensorFlow's own, bit for bit (``ops/string_hash.py``).

    words = tf.strings.split(lines)             # a SparseTensor of tokens
    ids = tf.strings.to_hash_bucket_fast(words.values, 1000)

Not here: the ``unicode_*`` family, ``ngrams``, ``bytes_split`` and ``unsorted_segment_join``.
"""

from nbflow.ops.string_ops import (
    as_string,
    join,
    length,
    lower,
    regex_full_match,
    regex_replace,
    strip,
    substr,
    to_hash_bucket,
    to_hash_bucket_fast,
    to_hash_bucket_strong,
    to_number,
    upper,
)
from nbflow.ops.string_split_ops import format, reduce_join, split  # noqa: A004

__all__ = [
    "as_string",
    "format",
    "join",
    "length",
    "lower",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "strip",
    "substr",
    "to_hash_bucket",
    "to_hash_bucket_fast",
    "to_hash_bucket_strong",
    "to_number",
    "upper",
]
