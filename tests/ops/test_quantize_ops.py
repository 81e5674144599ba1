"""Quantization ops against TensorFlow, bit for bit (tests/fixtures/tf/quantize.npz, written by
tests/fixtures/make_quantize_fixture.py): QuantizeV2 and Dequantize in every mode, rounding
mode and quantized type, QuantizeAndDequantizeV2 and its straight-through gradient,
QuantizedConcat; quantized dtypes through feeds, fetches and GraphDefs; TensorFlow's errors."""

import functools
import os

import numpy as np
import pytest

import nbflow as tf
from nbflow import errors
from nbflow.framework import protos

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf", "quantize.npz")
QTYPES = {
    "qint8": tf.qint8,
    "quint8": tf.quint8,
    "qint16": tf.qint16,
    "quint16": tf.quint16,
    "qint32": tf.qint32,
}


@functools.cache
def _fixture():
    with np.load(FIXTURE) as data:
        return dict(data)


def _text(value):
    value = np.asarray(value).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _rows(op):
    data = _fixture()
    return range(len(data[f"{op}/output"]))


def _field(op, row, name):
    return _fixture()[f"{op}/{name}"][row]


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


# --- dtypes -------------------------------------------------------------------------------------
def test_quantized_dtypes_have_tensorflows_enums_names_and_numpy_records():
    enums = {"qint8": 11, "quint8": 12, "qint32": 13, "qint16": 15, "quint16": 16}
    for name, enum in enums.items():
        dtype = QTYPES[name]
        assert dtype.name == name and tf.as_dtype(name) is dtype
        assert protos.DATA_TYPES[name] == enum
        assert dtype.is_quantized and not dtype.is_integer and dtype.is_numeric
        assert dtype.as_numpy_dtype == np.dtype([(name, tf.dtypes.quantized_base(dtype).np)])
        assert tf.as_dtype(dtype.as_numpy_dtype) is dtype
    assert tf.qint8 != tf.int8 and tf.as_dtype(np.int8) is tf.int8
    assert tf.quint16.size == 2 and tf.qint32.size == 4
    with pytest.raises(TypeError, match="quantized type"):
        tf.qint8.min  # noqa: B018 - the property raises, as TensorFlow's


def test_fetching_a_quantized_tensor_gives_plain_integers_and_feeds_take_them():
    p = tf.placeholder(tf.qint8, [3])
    out = tf.identity(p)
    value = _run(out, {p: [1, -2, 127]})
    assert value.dtype == np.int8 and value.tolist() == [1, -2, 127]
    record = np.array([3, 4, 5], np.int8).view(tf.qint8.as_numpy_dtype)
    assert _run(out, {p: record}).tolist() == [3, 4, 5]
    c = tf.constant([7, 255], dtype=tf.quint8)
    assert c.dtype is tf.quint8 and _run(c).dtype == np.uint8


def test_text_graphdefs_spell_the_quantized_types_as_tensorflow():
    from google.protobuf import text_format

    text = 'node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_QUINT16 } } }'
    graph = text_format.Parse(text, tf.GraphDef())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph, name="")
        assert g.get_tensor_by_name("p:0").dtype is tf.quint16
    assert "DT_QINT8" in text_format.MessageToString(
        protos.graph_def_to_proto(_qint8_placeholder_graph().as_graph_def())
    )


def _qint8_placeholder_graph():
    with tf.Graph().as_default() as g:
        tf.placeholder(tf.qint8, [2], name="q")
    return g


def test_quantized_constants_survive_a_graphdef_round_trip_with_tensorflows_enums():
    g = tf.Graph()
    with g.as_default():
        tf.constant([-3, 9], dtype=tf.qint16, name="c")
    proto = protos.graph_def_to_proto(g.as_graph_def())
    node = next(n for n in proto.node if n.name == "c")
    assert node.attr["dtype"].type == 15 and node.attr["value"].tensor.dtype == 15
    assert protos.make_ndarray(node.attr["value"].tensor).tolist() == [(-3,), (9,)]
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(proto, name="")
        c = g2.get_tensor_by_name("c:0")
        assert c.dtype is tf.qint16
        assert _run(c).tolist() == [-3, 9]


# --- QuantizeV2 ---------------------------------------------------------------------------------
@pytest.mark.parametrize("row", _rows("quantize"))
def test_quantize_matches_tensorflow_bit_for_bit(row):
    f = functools.partial(_field, "quantize", row)
    dtype = QTYPES[_text(f("T"))]
    out = tf.quantize(
        f("input"),
        f("min"),
        f("max"),
        dtype,
        mode=_text(f("mode")),
        round_mode=_text(f("round_mode")),
        narrow_range=bool(f("narrow_range")),
    )
    value, out_min, out_max = _run(out)
    case = (dtype.name, _text(f("mode")), _text(f("round_mode")), float(f("min")), float(f("max")))
    assert value.dtype == tf.dtypes.quantized_base(dtype).np, case
    np.testing.assert_array_equal(value.astype(np.int64), f("output"), err_msg=str(case))
    assert (out_min, out_max) == (f("output_min"), f("output_max")), case


def test_quantize_per_slice_uses_each_slices_own_range():
    x = np.array([[-1.0, 0.5, 1.0], [-4.0, 2.0, 4.0]], np.float32)
    out = tf.quantization.quantize(x, [-1.0, -4.0], [1.0, 4.0], tf.qint8, mode="SCALED", axis=0)
    value, lo, hi = _run(out)
    np.testing.assert_array_equal(value, [[-127, 64, 127], [-127, 64, 127]])
    np.testing.assert_array_equal(lo, np.float32([-1.0, -4.0]) * np.float32(128 / 127))
    np.testing.assert_array_equal(hi, [1.0, 4.0])


# --- Dequantize ---------------------------------------------------------------------------------
@pytest.mark.parametrize("row", _rows("dequantize"))
def test_dequantize_matches_tensorflow_bit_for_bit(row):
    f = functools.partial(_field, "dequantize", row)
    dtype = QTYPES[_text(f("T"))]
    p = tf.placeholder(dtype, [None])
    out = tf.dequantize(
        p, f("min"), f("max"), mode=_text(f("mode")), narrow_range=bool(f("narrow_range"))
    )
    value = _run(out, {p: f("input")})
    case = (dtype.name, _text(f("mode")), float(f("min")), float(f("max")))
    np.testing.assert_array_equal(value, f("output"), err_msg=str(case))


def test_quantize_then_dequantize_round_trips_within_one_step():
    x = np.linspace(-2.0, 3.0, 41, dtype=np.float32)
    q = tf.quantize(x, -2.0, 3.0, tf.quint8, mode="MIN_FIRST")
    back = _run(tf.dequantize(q.output, q.output_min, q.output_max, mode="MIN_FIRST"))
    assert np.max(np.abs(back - x)) <= 5.0 / 255


# --- QuantizeAndDequantizeV2 --------------------------------------------------------------------
@pytest.mark.parametrize("row", _rows("qdq"))
def test_quantize_and_dequantize_and_its_gradient_match_tensorflow(row):
    f = functools.partial(_field, "qdq", row)
    x = tf.constant(f("input"))
    out = tf.quantization.quantize_and_dequantize(
        x,
        f("input_min"),
        f("input_max"),
        signed_input=bool(f("signed_input")),
        num_bits=int(f("num_bits")),
        range_given=bool(f("range_given")),
        round_mode=_text(f("round_mode")),
        narrow_range=bool(f("narrow_range")),
    )
    assert out.op.type == "QuantizeAndDequantizeV2"
    (grad,) = tf.gradients(tf.reduce_sum(out * f("upstream")), [x])
    value, grad_value = _run([out, grad])
    np.testing.assert_array_equal(value, f("output"))
    np.testing.assert_array_equal(grad_value, f("grad"))


# --- QuantizedConcat ----------------------------------------------------------------------------
CONCAT_CASES = sorted({k.split("/")[1] for k in _fixture() if k.startswith("concat/")})


@pytest.mark.parametrize("case", CONCAT_CASES)
def test_quantized_concat_requantizes_into_the_union_range_as_tensorflow(case):
    data, key = _fixture(), f"concat/{case}"
    dtype = QTYPES[_text(data[f"{key}/T"])]
    count = int(data[f"{key}/count"])
    values = [data[f"{key}/value{i}"] for i in range(count)]
    holders = [tf.placeholder(dtype, v.shape) for v in values]
    out = tf.quantized_concat(
        int(data[f"{key}/axis"]),
        holders,
        [data[f"{key}/min{i}"] for i in range(count)],
        [data[f"{key}/max{i}"] for i in range(count)],
    )
    assert out.output.shape.as_list() == list(data[f"{key}/output"].shape)
    value, lo, hi = _run(out, dict(zip(holders, values)))
    np.testing.assert_array_equal(value, data[f"{key}/output"])
    assert (lo, hi) == (data[f"{key}/output_min"], data[f"{key}/output_max"])


# --- errors -------------------------------------------------------------------------------------
def _tf_error(case):
    data = _fixture()
    for key in data:
        if key.endswith("/case") and _text(data[key]) == case:
            return _text(data[key.replace("/case", "/message")])
    raise KeyError(case)


@pytest.mark.parametrize(
    "case, build",
    [
        ("quantize_min_above_max", lambda x: tf.quantize(x, 1.0, -1.0, tf.quint8)),
        (
            "dequantize_scaled_bad_mode",
            lambda x: tf.quantize(
                x, -1.0, 1.0, tf.qint8, mode="MIN_FIRST", round_mode="HALF_TO_EVEN"
            ),
        ),
        (
            "qdq_min_above_max",
            lambda x: tf.quantization.quantize_and_dequantize(x, 1.0, -1.0, range_given=True),
        ),
    ],
)
def test_bad_ranges_and_modes_raise_tensorflows_error_and_message(case, build):
    kind, message = _tf_error(case).split(": ", 1)
    with pytest.raises(errors.InvalidArgumentError) as info:
        _run(build(tf.constant([0.5, 1.0])))
    assert type(info.value).__name__ == kind
    assert message in str(info.value)


def test_wrong_dtypes_and_modes_are_refused_while_building():
    with pytest.raises(TypeError, match="quantized"):
        tf.quantize([1.0], -1.0, 1.0, tf.int8)
    with pytest.raises(TypeError, match="quantized"):
        tf.dequantize(tf.constant([1], tf.int8), -1.0, 1.0)
    with pytest.raises(ValueError, match="mode"):
        tf.quantize([1.0], -1.0, 1.0, tf.qint8, mode="ROUND")
    with pytest.raises(TypeError, match="float32"):
        tf.quantize(tf.constant([1], tf.int32), -1.0, 1.0, tf.qint8)


def test_tf_quantization_namespace_holds_tensorflow_1_15s_names():
    names = [
        "dequantize",
        "fake_quant_with_min_max_args",
        "fake_quant_with_min_max_args_gradient",
        "fake_quant_with_min_max_vars",
        "fake_quant_with_min_max_vars_gradient",
        "fake_quant_with_min_max_vars_per_channel",
        "fake_quant_with_min_max_vars_per_channel_gradient",
        "quantize",
        "quantize_and_dequantize",
        "quantized_concat",
    ]
    for name in names:
        assert callable(getattr(tf.quantization, name)), name
    assert tf.quantization.fake_quant_with_min_max_args is tf.fake_quant_with_min_max_args
    assert tf.quantize_v2 is not None and tf.quantization.quantize is tf.quantize


# --- eight-bit nn ops ---------------------------------------------------------------------------
def _cases(op):
    return sorted({k.split("/")[1] for k in _fixture() if k.startswith(f"{op}/")}, key=int)


@pytest.mark.parametrize("case", _cases("pool"))
def test_quantized_pools_match_tensorflow(case):
    data, key = _fixture(), f"pool/{case}"
    kind, x = _text(data[f"{key}/kind"]), data[f"{key}/input"]
    pool = tf.nn.quantized_max_pool if kind == "max" else tf.nn.quantized_avg_pool
    p = tf.placeholder(tf.quint8, x.shape)
    out = pool(
        p,
        data[f"{key}/min"],
        data[f"{key}/max"],
        data[f"{key}/ksize"].tolist(),
        data[f"{key}/strides"].tolist(),
        _text(data[f"{key}/padding"]),
    )
    assert out.output.dtype is tf.quint8
    assert out.output.shape.as_list() == list(data[f"{key}/output"].shape)
    value, lo, hi = _run(out, {p: x})
    np.testing.assert_array_equal(value, data[f"{key}/output"], err_msg=kind)
    assert (lo, hi) == (data[f"{key}/output_min"], data[f"{key}/output_max"])


@pytest.mark.parametrize("case", _cases("conv"))
def test_quantized_conv2d_matches_tensorflow(case):
    data, key = _fixture(), f"conv/{case}"
    x, f = data[f"{key}/input"], data[f"{key}/filter"]
    px, pf = tf.placeholder(tf.quint8, x.shape), tf.placeholder(tf.quint8, f.shape)
    out = tf.nn.quantized_conv2d(
        px,
        pf,
        data[f"{key}/min_input"],
        data[f"{key}/max_input"],
        data[f"{key}/min_filter"],
        data[f"{key}/max_filter"],
        data[f"{key}/strides"].tolist(),
        _text(data[f"{key}/padding"]),
    )
    assert out.output.dtype is tf.qint32
    assert out.output.shape.as_list() == list(data[f"{key}/output"].shape)
    value, lo, hi = _run(out, {px: x, pf: f})
    np.testing.assert_array_equal(value, data[f"{key}/output"])
    assert (lo, hi) == (data[f"{key}/output_min"], data[f"{key}/output_max"])


def _float_to_quantized_uint8(value, lo, hi):
    """TensorFlow's FloatToQuantized<quint8>, written out in float64 from its source."""
    steps = 256
    scale = steps / (float(np.float32(hi) - np.float32(lo)) * (steps / (steps - 1.0)))

    def away(v):
        return int(np.sign(v) * np.floor(abs(v) + 0.5))

    q = away(float(np.float32(value)) * scale) - away(float(np.float32(lo)) * scale)
    return min(max(q, 0), 255)


@pytest.mark.parametrize(
    "max_value, lo, hi", [(6.0, -1.0, 10.0), (1.5, -3.0, 3.0), (0.2, 0.5, 2.0)]
)
def test_quantized_relu_x_clamps_to_the_integers_of_zero_and_max_value(max_value, lo, hi):
    # TensorFlow 2.21's CPU build has no QuantizedReluX kernel to write a fixture with; the
    # expected integers follow its kernel: clamp to FloatToQuantized(0) and (max_value).
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    p = tf.placeholder(tf.quint8, x.shape)
    value, out_lo, out_hi = _run(tf.nn.quantized_relu_x(p, max_value, lo, hi), {p: x})
    zero = _float_to_quantized_uint8(0.0, lo, hi)
    top = _float_to_quantized_uint8(max_value, lo, hi)
    np.testing.assert_array_equal(value, np.clip(x, zero, top))
    assert (out_lo, out_hi) == (np.float32(lo), np.float32(hi))
    assert zero <= top


def test_nn_ops_refuse_types_without_kernels():
    with pytest.raises(TypeError, match="quint8"):
        tf.nn.quantized_max_pool(
            tf.constant(np.zeros((1, 2, 2, 1)), tf.qint16),
            0.0,
            1.0,
            [1, 2, 2, 1],
            [1, 1, 1, 1],
            "VALID",
        )
    with pytest.raises(TypeError, match="quantized"):
        tf.nn.quantized_conv2d(
            tf.zeros([1, 2, 2, 1]),
            tf.zeros([1, 1, 1, 1]),
            0.0,
            1.0,
            0.0,
            1.0,
            [1, 1, 1, 1],
            "VALID",
        )


def test_tensorflow_runs_a_quantization_graph_nbflow_wrote(tmp_path):
    from tests.tf_interop import run_tensorflow

    x = np.linspace(-1.5, 2.5, 12, dtype=np.float32).reshape(1, 2, 3, 2)
    with tf.Graph().as_default() as g:
        p = tf.placeholder(tf.float32, x.shape, name="x")
        q = tf.quantize(p, -1.0, 2.0, tf.quint8, mode="MIN_FIRST")
        pooled = tf.nn.quantized_max_pool(*q, [1, 1, 2, 1], [1, 1, 1, 1], "VALID")
        joined = tf.quantized_concat(
            3,
            [pooled.output, pooled.output],
            [pooled.min_output, np.float32(-3.0)],
            [pooled.max_output, np.float32(3.0)],
        )
        qdq = tf.quantization.quantize_and_dequantize(p, -1.0, 1.0, num_bits=4)
        averaged = tf.nn.quantized_avg_pool(*q, [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        kernel = tf.constant(np.arange(8).reshape(2, 2, 2, 1) * 30, tf.quint8)
        conv = tf.nn.quantized_conv2d(
            averaged.output,
            kernel,
            averaged.min_output,
            averaged.max_output,
            -1.0,
            1.0,
            [1, 1, 1, 1],
            "SAME",
        )
        tf.identity(tf.dequantize(*conv), name="c")
        tf.identity(tf.dequantize(*joined), name="y")
        tf.identity(qdq, name="z")
        with tf.Session() as sess:
            y, z, c = sess.run(["y:0", "z:0", "c:0"], {p: x})
    path = tf.train.write_graph(g, str(tmp_path), "quantized.pb", as_text=False)
    np.save(tmp_path / "x.npy", x)
    run_tensorflow(
        """
        import sys, numpy as np
        tf1.disable_eager_execution()
        graph_def = tf1.GraphDef()
        graph_def.ParseFromString(open(sys.argv[1], "rb").read())
        tf1.import_graph_def(graph_def, name="")
        with tf1.Session() as sess:
            y, z, c = sess.run(["y:0", "z:0", "c:0"], {"x:0": np.load(sys.argv[2])})
        np.save(sys.argv[3], y)
        np.save(sys.argv[4], z)
        np.save(sys.argv[5], c)
        """,
        path,
        str(tmp_path / "x.npy"),
        str(tmp_path / "y.npy"),
        str(tmp_path / "z.npy"),
        str(tmp_path / "c.npy"),
        # TensorFlow's reference kernels: on a CPU with AVX-512 its default oneDNN rewrite of
        # QuantizedConv2D requantizes the output differently (by up to two steps of its scale,
        # 0.03 here), so TensorFlow's own result would depend on the host
        env={"TF_ENABLE_ONEDNN_OPTS": "0"},
    )
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), c)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), y)
    np.testing.assert_array_equal(np.load(tmp_path / "z.npy"), z)


# --- tf.train.do_quantize_training_on_graphdef --------------------------------------------------
def _graph_def(key):
    graph = tf.GraphDef()
    graph.ParseFromString(_fixture()[key].tobytes())
    return graph


def _node_summary(node):
    attrs = {}
    for key, value in node.attr.items():
        decoded = protos.attr_value(value)
        attrs[key] = decoded.tolist() if isinstance(decoded, np.ndarray) else decoded
    return node.name, node.op, list(node.input), attrs


def test_quantize_training_rewrite_builds_tensorflows_graph_node_for_node():
    rewritten = tf.train.do_quantize_training_on_graphdef(_graph_def("training/input_graph"), 5)
    expected = _graph_def("training/graph")
    ours = [_node_summary(n) for n in rewritten.node]
    theirs = [_node_summary(n) for n in expected.node]
    assert [n[0] for n in ours] == [n[0] for n in theirs]
    for mine, tfs in zip(ours, theirs):
        assert mine[:3] == tfs[:3], mine[0]
        assert mine[3] == tfs[3], mine[0]


def test_the_rewritten_graph_trains_its_ranges_and_computes_tensorflows_values():
    rewritten = tf.train.do_quantize_training_on_graphdef(_graph_def("training/input_graph"), 5)
    data = _fixture()
    with tf.Graph().as_default():
        tf.import_graph_def(rewritten, name="")
        with tf.Session() as sess:
            sess.run("v/Assign")
            for i in range(2):
                z, x_min = sess.run(["z:0", "x/Min/AssignValue:0"], {"x:0": data[f"training/x{i}"]})
                np.testing.assert_allclose(z, data[f"training/z{i}"], rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(x_min, data[f"training/x_min{i}"], rtol=1e-6)


def test_quantize_training_takes_nbflow_graphs_and_refuses_bad_arguments():
    with tf.Graph().as_default() as g:
        a = tf.placeholder(tf.float32, [2, 2], name="a")
        b = tf.placeholder(tf.float32, [2, 2], name="b")
        c = tf.placeholder(tf.float32, [2, 2], name="c")
        tf.matmul(tf.matmul(a, b, name="ab"), c, name="abc")
    with pytest.raises(errors.UnimplementedError, match="unknown op: ab with type: MatMul"):
        tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    with pytest.raises(errors.OutOfRangeError, match="num_bits"):
        tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 64)


def test_quantize_training_adds_the_range_variables_to_the_savers_checkpoints():
    rewritten = tf.train.do_quantize_training_on_graphdef(
        _graph_def("training/saver_input_graph"), 5
    )
    expected = _graph_def("training/saver_graph")
    ours = [_node_summary(n) for n in rewritten.node]
    theirs = [_node_summary(n) for n in expected.node]
    assert [n[0] for n in ours] == [n[0] for n in theirs]
    for mine, tfs in zip(ours, theirs):
        assert mine[:3] == tfs[:3], mine[0]
        assert {k: v for k, v in mine[3].items() if not k.startswith("_")} == {
            k: v for k, v in tfs[3].items() if not k.startswith("_")
        }, mine[0]


def test_a_saver_of_a_rewritten_nbflow_graph_restores_the_learned_ranges(tmp_path):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        tf.matmul(x, w, name="y")
        tf.train.Saver()
    rewritten = tf.train.do_quantize_training_on_graphdef(g.as_graph_def(), 8)
    feed = {"x:0": np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0}
    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        tf.import_graph_def(rewritten, name="")
        with tf.Session() as sess:
            sess.run("w/Assign")
            sess.run("y:0", feed)  # sets every range variable
            learned = sess.run("x/Min/Variable:0")
            sess.run("save/control_dependency:0", {"save/filename:0": prefix})
    assert learned == -2.0
    with tf.Graph().as_default():
        tf.import_graph_def(rewritten, name="")
        with tf.Session() as sess:
            sess.run("save/restore_all", {"save/filename:0": prefix})
            assert sess.run("x/Min/Variable:0") == learned
            assert sess.run("w/read/Max/Variable:0") == 1.0
