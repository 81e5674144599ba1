"""tf.strings against TensorFlow-written fixtures (fixtures/make_string_ops_fixture.py) and
Python's own string functions."""

import json
import pathlib

import numpy as np
import pytest

import nbflow as tf

FIXTURE = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "string_ops_tf.json").read_text("utf-8")
)
WORDS = FIXTURE["words"]
BIG = 2**63 - 1
BAD_UTF8 = b"a\xff" + "ü".encode()


def setup_function():
    tf.reset_default_graph()


def run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def texts(value):
    """Strings as the fixture script writes them (UTF-8, other bytes backslash-escaped)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return [v.decode("utf-8", "backslashreplace") for v in np.asarray(value).reshape(-1)]


def sparse(st):
    value = run(st)
    return {
        "indices": value.indices.tolist(),
        "values": texts(value.values),
        "dense_shape": value.dense_shape.tolist(),
    }


@pytest.mark.parametrize(
    "name, build",
    [
        ("hash_fast_big", lambda: tf.strings.to_hash_bucket_fast(WORDS, BIG)),
        ("hash_fast_1000", lambda: tf.string_to_hash_bucket_fast(WORDS, 1000)),
        ("hash_strong_big", lambda: tf.strings.to_hash_bucket_strong(WORDS, BIG, key=[1, 2])),
        (
            "hash_strong_key",
            lambda: tf.strings.to_hash_bucket_strong(WORDS, 97, key=[2**40 + 3, 12345]),
        ),
        ("hash_legacy_big", lambda: tf.string_to_hash_bucket(WORDS, BIG)),
        ("length_utf8", lambda: tf.strings.length(["aü∂b", ""], unit="UTF8_CHAR")),
        ("length_bytes", lambda: tf.strings.length(["aü∂b", ""])),
        ("regex_full_match", lambda: tf.strings.regex_full_match(["abc", "abcd", ""], "a.c")),
        ("to_number", lambda: tf.strings.to_number(["1.5", "-2", "1e3", " 4"])),
        ("to_number_int", lambda: tf.strings.to_number(["12", "-3"], out_type=tf.int64)),
        ("unicode_decode", lambda: tf.strings.unicode_decode("aü∂", "UTF-8")),
        (
            "unicode_decode_offsets",
            lambda: tf.strings.unicode_decode_with_offsets(BAD_UTF8, "UTF-8")[1],
        ),
        ("unicode_decode_bad", lambda: tf.strings.unicode_decode(BAD_UTF8, "UTF-8")),
        ("fingerprint_strings", lambda: tf.fingerprint(WORDS)),
        ("fingerprint_string_rows", lambda: tf.fingerprint([["a", "b"], ["c", "d"]])),
        ("fingerprint_int32", lambda: tf.fingerprint(np.arange(6, dtype=np.int32).reshape(3, 2))),
        ("fingerprint_float32", lambda: tf.fingerprint(np.array([1.5, 2.0], np.float32))),
    ],
)
def test_numeric_results_equal_tensorflows(name, build):
    assert run(build()).tolist() == FIXTURE[name]


@pytest.mark.parametrize(
    "name, build",
    [
        ("as_string_float", lambda: tf.as_string([1.5, -0.1, 1e10, 3.14159265])),
        ("as_string_precision", lambda: tf.as_string([1.5, -0.1, 3.14159265], precision=2)),
        ("as_string_scientific", lambda: tf.as_string([1.5, 31415.9], scientific=True)),
        ("as_string_shortest", lambda: tf.as_string([1.5, 1e10, 0.0001], shortest=True)),
        ("as_string_width", lambda: tf.as_string([3, -12], width=5, fill="0")),
        ("as_string_int", lambda: tf.as_string(np.array([3, -12], np.int64), width=4)),
        ("as_string_bool", lambda: tf.as_string([True, False])),
        (
            "format_vector",
            lambda: tf.strings.format(
                "a={} b={}", [tf.constant([1, 2, 3, 4, 5]), tf.constant("s")]
            ),
        ),
        (
            "format_matrix",
            lambda: tf.strings.format("{}", [tf.constant([[1.5, 2.0], [3.0, 4.0]])], summarize=-1),
        ),
        ("format_placeholder", lambda: tf.strings.format("x=%", [tf.constant(7)], placeholder="%")),
        ("substr_negative", lambda: tf.strings.substr(["hello", "world"], -3, 2)),
        ("substr_utf8", lambda: tf.strings.substr(["aü∂b"], 1, 2, unit="UTF8_CHAR")),
        ("reduce_join", lambda: tf.strings.reduce_join([["a", "b"], ["c", "d"]], 1, separator="-")),
        (
            "reduce_join_keep",
            lambda: tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=0, keepdims=True),
        ),
        ("reduce_join_all", lambda: tf.reduce_join([["a", "b"], ["c", "d"]])),
        ("regex_replace", lambda: tf.strings.regex_replace(["aaa bab", "cc"], "a(b?)", r"<\1>")),
        (
            "regex_replace_first",
            lambda: tf.regex_replace(["aaa"], "a", "x", replace_global=False),
        ),
        ("lower", lambda: tf.strings.lower(["ABC Ü"])),
        ("lower_utf8", lambda: tf.strings.lower(["ABC Ü"], encoding="utf-8")),
        ("strip", lambda: tf.strings.strip(["  a b \t\n", "c"])),
        ("ngrams_matrix", lambda: tf.strings.ngrams([["a", "b", "c"], ["d", "e", "f"]], 2)),
        ("ngrams_widths", lambda: tf.strings.ngrams(["a", "b", "c"], [1, 2], separator="-")),
        (
            "ngrams_padded",
            lambda: tf.strings.ngrams(["a", "b", "c"], 2, pad_values=("<", ">"), padding_width=1),
        ),
        ("unicode_split", lambda: tf.strings.unicode_split("aü∂", "UTF-8")),
        ("bytes_split", lambda: tf.strings.bytes_split("ab")),
        ("unicode_encode", lambda: tf.strings.unicode_encode([97, 252, 8706], "UTF-8")),
        (
            "unicode_encode_utf16",
            lambda: tf.strings.unicode_encode([[97, 98], [99, 100]], "UTF-16-BE"),
        ),
        ("unicode_transcode", lambda: tf.strings.unicode_transcode(["aü∂"], "UTF-8", "UTF-16-BE")),
        (
            "unicode_transcode_bad",
            lambda: tf.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-8"),
        ),
        ("encode_base64", lambda: tf.encode_base64(WORDS)),
        ("encode_base64_pad", lambda: tf.encode_base64(WORDS, pad=True)),
        ("decode_base64", lambda: tf.decode_base64(tf.encode_base64(WORDS))),
        (
            "unsorted_segment_join",
            lambda: tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [1, 0, 1, 3], 4, ":"),
        ),
    ],
)
def test_string_results_equal_tensorflows(name, build):
    assert texts(run(build())) == FIXTURE[name]


@pytest.mark.parametrize(
    "name, build",
    [
        ("string_split", lambda: tf.string_split(["a b", " c  d", "", "e"], " ")),
        ("string_split_chars", lambda: tf.string_split(["ab", "c"], "")),
        ("string_split_multi", lambda: tf.string_split(["a,b;c", ";;d"], ",;", skip_empty=False)),
        ("strings_split_none", lambda: tf.strings.split(["a  b ", " c"])),
        ("strings_split_sep", lambda: tf.strings.split(["a,,b", "c"], sep=",")),
        ("strings_split_max", lambda: tf.strings.split(["a,b,c", "d"], sep=",", maxsplit=1)),
    ],
)
def test_splits_give_tensorflows_sparse_tensor(name, build):
    assert sparse(build()) == FIXTURE[name]


@pytest.mark.parametrize("bad", ["abc", "1.5x", ""])
def test_to_number_of_a_non_number_fails_with_tensorflows_message(bad):
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(tf.strings.to_number([bad]))
    assert FIXTURE[f"to_number_error_{bad}"] in str(info.value)


def test_join_broadcasts_scalars_and_upper_matches_python():
    got = run(tf.strings.join([["a", "b"], "-", tf.constant(["x", "y"])], separator="|"))
    assert texts(got) == ["a|-|x", "b|-|y"]
    assert texts(run(tf.strings.upper(["abc ü"]))) == ["ABC ü"]
    assert texts(run(tf.strings.upper(["abc ü"], encoding="utf-8"))) == ["ABC Ü"]


def test_substr_out_of_range_and_bad_regex_fail_at_run_time():
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        run(tf.strings.substr(["ab"], 3, 1))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern"):
        run(tf.strings.regex_full_match(["ab"], "("))


def test_split_on_a_fed_vector_has_unknown_size_and_string_ops_reject_numbers():
    lines = tf.placeholder(tf.string, [None])
    st = tf.strings.split(lines)
    assert st.values.shape.as_list() == [None]
    with tf.Session() as sess:
        value = sess.run(st, {lines: ["x y z", "w"]})
    assert value.dense_shape.tolist() == [2, 3]
    with pytest.raises(ValueError, match="string"):
        tf.strings.length(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="num placeholders"):
        tf.strings.format("{} {}", [tf.constant(1)])


def test_ragged_results_ask_for_a_scalar_instead():
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tf.strings.unicode_decode(["ab", "c"], "UTF-8")
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tf.strings.bytes_split(["ab"])
