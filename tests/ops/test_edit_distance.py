"""tf.edit_distance against TensorFlow (tests/fixtures/tf/edit_distance.json, written by
tests/fixtures/make_edit_distance.py) and against a brute-force Levenshtein count."""

import json
import os

import numpy as np
import pytest

import nbflow as tf

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf", "edit_distance.json")


@pytest.mark.parametrize("normalize", [True, False])
def test_edit_distance_matches_tensorflow(normalize):
    with open(FIXTURE) as f:
        fixture = json.load(f)
    h = tf.SparseTensor(**fixture["case"]["hypothesis"])
    t = tf.SparseTensor(**fixture["case"]["truth"])
    out = tf.edit_distance(h, t, normalize=normalize)
    assert out.dtype == tf.float32 and out.shape.ndims == 2
    expected = np.array(fixture[f"normalize={normalize}"], dtype=np.float64)
    np.testing.assert_array_equal(tf.Session().run(out), expected)


def _brute_force(a, b):
    """Fewest edits by breadth-first search over strings (tiny alphabets only)."""
    frontier, seen, steps = {a}, {a}, 0
    alphabet = set(a) | set(b)
    while b not in frontier:
        nxt = set()
        for s in frontier:
            for i in range(len(s) + 1):
                nxt.update(s[:i] + c + s[i:] for c in alphabet)
                if i < len(s):
                    nxt.add(s[:i] + s[i + 1 :])
                    nxt.update(s[:i] + c + s[i + 1 :] for c in alphabet)
        frontier, steps = nxt - seen, steps + 1
        seen |= nxt
    return steps


def test_edit_distance_counts_the_fewest_edits():
    rng = np.random.default_rng(0)
    pairs = [
        (
            "".join(rng.choice(list("ab"), rng.integers(1, 5))),
            "".join(rng.choice(list("ab"), rng.integers(1, 5))),
        )
        for _ in range(6)
    ]

    def sparse(words):
        idx = [[i, j] for i, w in enumerate(words) for j in range(len(w))]
        vals = [ord(c) for w in words for c in w]
        return tf.SparseTensor(idx, np.array(vals, np.int64), [len(words), 4])

    out = tf.edit_distance(
        sparse([p[0] for p in pairs]), sparse([p[1] for p in pairs]), normalize=False
    )
    got = tf.Session().run(out)
    np.testing.assert_array_equal(got, [_brute_force(a, b) for a, b in pairs])


def test_edit_distance_needs_sparse_tensors_of_one_dtype():
    h = tf.SparseTensor([[0, 0]], [1.0], [1, 1])
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.edit_distance(h, tf.constant([[1.0]]))
    with pytest.raises(TypeError, match="truth values are int32"):
        tf.edit_distance(h, tf.SparseTensor([[0, 0]], [1], [1, 1]))
