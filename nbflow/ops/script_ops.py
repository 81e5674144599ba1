"""Ops that call back into Python: PyFunc (``tf.py_func``, ``tf.numpy_function``) and the
printing ops Print (``tf.Print``) and PrintV2 (``tf.print``).

A graph can only hold serialisable attrs, so ``py_func`` registers the Python function in a
process-wide table under a token (``pyfunc_7``) and the node records the token. The graph holds
the registration: it ends when the graph is garbage-collected. The kernel looks the token up,
calls the function on NumPy arrays (PyFunc kernels run on the CPU only) and checks the results
against ``Tout``. An exception raised by the function becomes the OpError TensorFlow raises for
it (ValueError and TypeError: InvalidArgumentError; anything unexpected: UnknownError), with the
function's traceback in the message; the executor adds the node's name.
"""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
import weakref
from typing import Any
from collections.abc import Callable

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import REQUIRED, KernelContext, OpDef, Sample, TensorSpec
from nbflow.framework.op_def import kernel_attrs
from nbflow.framework.tensor_shape import TensorShape
from nbflow.ops.constant_ops import _create

Tensor = ops_lib.Tensor


# --- the process-wide table of Python functions ---------------------------------------------------
class FuncRegistry:
    """Python callables by token, shared by every graph and session of the process."""

    def __init__(self) -> None:
        self._funcs: dict[str, Callable[..., Any]] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    def insert(self, func: Callable[..., Any], token: str | None = None) -> str:
        with self._lock:
            token = token or f"pyfunc_{next(self._ids)}"
            self._funcs[token] = func
        return token

    def remove(self, token: str) -> None:
        with self._lock:
            self._funcs.pop(token, None)

    def get(self, token: str) -> Callable[..., Any] | None:
        return self._funcs.get(token)

    def size(self) -> int:
        return len(self._funcs)


_FUNCS = FuncRegistry()

# TensorFlow's translation of Python exceptions raised inside a py_func (py_func.cc).
_ERROR_FOR_EXCEPTION: list[tuple[type[BaseException], type[errors.OpError]]] = [
    (ValueError, errors.InvalidArgumentError),
    (TypeError, errors.InvalidArgumentError),
    (StopIteration, errors.OutOfRangeError),
    (IndexError, errors.OutOfRangeError),
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
]


def _error_type(exc: BaseException) -> type[errors.OpError]:
    if isinstance(exc, errors.OpError):
        return type(exc)
    return next((v for k, v in _ERROR_FOR_EXCEPTION if isinstance(exc, k)), errors.UnknownError)


def _result_array(value: Any, dtype: dtypes.DType, i: int, token: str) -> np.ndarray:
    """A returned value as an array of ``dtype``: arrays must match it, Python values convert."""
    if isinstance(value, (np.ndarray, np.generic)):
        if dtypes.as_dtype(value.dtype).base_dtype != dtype:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{i}-th value returned by {token} is {dtypes.as_dtype(value.dtype).name}, but "
                f"expects {dtype.name}",
            )
        return np.asarray(value)
    try:
        return np.asarray(value, dtype=dtype.np)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(
            None, None, f"{i}-th value returned by {token} cannot be read as {dtype.name}: {e}"
        ) from e


class PyFunc(OpDef):
    """The results of the Python function registered under ``token``, called on the inputs;
    their dtypes are ``Tout``, their shapes unknown until run."""

    inputs = ("input*",)
    attrs = {"token": REQUIRED, "Tout": REQUIRED}
    stateful = True
    differentiable = False
    cpu_only = True
    samples = [
        Sample(input=[(2, 3), (3,)], token="pyfunc_sample_add", Tout=[dtypes.float64]),
        Sample(input=[(4,)], token="pyfunc_sample_add", Tout=[dtypes.float64, dtypes.int64]),
    ]

    def output_count(self, attrs: dict[str, Any]) -> int:
        return len(attrs["Tout"])

    def infer(self, input: list[TensorSpec], token: str, Tout: list[Any]) -> list[TensorSpec]:
        return [TensorSpec(TensorShape(None), dtypes.as_dtype(t)) for t in Tout]

    def compute(self, ctx: KernelContext, input: Any, token: str, Tout: list[Any]) -> Any:
        func = _FUNCS.get(token)
        if func is None:
            raise errors.UnknownError(
                None,
                None,
                f"callback {token} is not found: the graph that registered it is gone, or it "
                "was imported into another process",
            )
        try:
            result = func(*[np.asarray(x) for x in input])
        except Exception as e:
            frames = traceback.extract_tb(e.__traceback__)[1:]  # the function's own frames
            trace = "".join(traceback.format_list(frames))
            name = getattr(func, "__name__", repr(func))
            raise _error_type(e)(
                None,
                None,
                f"{type(e).__name__}: {e} (raised by {name}, {token})\n"
                f"Traceback (most recent call last):\n{trace}",
            ) from e
        tout = [dtypes.as_dtype(t).base_dtype for t in Tout]
        if not tout:
            return ()
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(values) != len(tout):
            raise errors.InvalidArgumentError(
                None, None, f"{token} returned {len(values)} values, but expects {len(tout)}"
            )
        out = [_result_array(v, t, i, token) for i, (v, t) in enumerate(zip(values, tout))]
        return out[0] if len(out) == 1 else tuple(out)


class PyFuncStateless(PyFunc):
    """PyFunc for a function without side effects: graph optimizations may fold or merge it."""

    stateful = False
    samples = [Sample(input=[(3,), (3,)], token="pyfunc_sample_add", Tout=[dtypes.float64])]


def _sample_add(*arrays: np.ndarray) -> Any:
    """The function of the PyFunc samples: the sum of the inputs (and, for a second output,
    the input's size)."""
    total = sum(arrays)
    return total if len(arrays) > 1 else [total, np.int64(arrays[0].size)]


_FUNCS.insert(_sample_add, "pyfunc_sample_add")


def py_func(
    func: Callable[..., Any],
    inp: Any,
    Tout: Any,
    stateful: bool = True,
    name: str | None = None,
) -> Any:
    """Wraps the Python function ``func`` (NumPy arrays in, NumPy values out) as an op.

    ``Tout`` is a dtype (one output tensor) or a list of dtypes (a list of tensors; an empty list
    gives the Operation). The op has no gradient.

    >>> import numpy as np, nbflow as tf
    >>> y = tf.py_func(lambda x: x * 2, [tf.constant([1, 2])], tf.int32)
    >>> tf.Session().run(y).tolist()
    [2, 4]
    """
    graph = ops_lib.get_default_graph()
    token = _FUNCS.insert(func)
    weakref.finalize(graph, _FUNCS.remove, token)  # the graph holds the registration
    is_list = isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(t).base_dtype for t in (Tout if is_list else [Tout])]
    if isinstance(inp, (list, tuple)):
        tensors = [ops_lib.convert_to_tensor(x) for x in inp]
    else:
        tensors = [ops_lib.convert_to_tensor(inp)]
    op_type = "PyFunc" if stateful else "PyFuncStateless"
    op = _create(op_type, [tensors], {"token": token, "Tout": tout}, name=name)
    if not is_list:
        return op.outputs[0]
    return list(op.outputs) if tout else op


def numpy_function(
    func: Callable[..., Any], inp: Any, Tout: Any, stateful: bool = True, name: str | None = None
) -> Any:
    """``py_func`` under its TensorFlow 2 name: ``func`` gets and returns NumPy arrays."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


class EagerValue(np.ndarray):
    """What ``py_function``'s function receives: a NumPy array that also answers ``.numpy()``,
    as TensorFlow's eager tensors do, so code written for ``tf.py_function`` runs unchanged."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)


def py_function(func: Callable[..., Any], inp: Any, Tout: Any, name: str | None = None) -> Any:
    """Wraps ``func`` as an op; its arguments have ``.numpy()`` (TensorFlow passes eager tensors).

    Unlike TensorFlow's, the op has no gradient: nbflow does not record ``func``'s operations.

    >>> import nbflow as tf
    >>> y = tf.py_function(lambda x: x.numpy() + 1, [tf.constant([1, 2])], tf.int32)
    >>> tf.Session().run(y).tolist()
    [2, 3]
    """

    def call(*arrays: np.ndarray) -> Any:
        return func(*[np.asarray(a).view(EagerValue) for a in arrays])

    call.__name__ = getattr(func, "__name__", "py_function")
    return py_func(call, inp, Tout, stateful=True, name=name)


# --- printing -------------------------------------------------------------------------------------
def summarize_value(value: Any, summarize: int) -> str:
    """``value`` as TensorFlow 1.x's Print and Assert write it (``Tensor::SummarizeValue`` with
    ``max_entries=summarize``, -1 or any negative: all): at most ``summarize`` elements in
    row-major order, nested in brackets by dimension, and "..." where elements were left out.

    The caller adds the outer brackets: ``[[0 1 2][3...]...]`` is ``[`` + this + ``]`` for a
    2x3 tensor and ``summarize=4``. Integers print in decimal, bools as 1 and 0, floats as C's
    ``%.6g`` (``%.9g`` when that does not read back as the same float32; ``%.15g`` and ``%.17g``
    for float64), strings C-escaped, and other dtypes (complex) as ``?``.
    """
    array = np.asarray(value)
    flat = array.reshape(-1)
    num_elements = flat.size
    limit = num_elements if summarize < 0 else min(summarize, num_elements)
    element = _element_writer(array.dtype)
    if element is None:  # TensorFlow's "irregular" dtypes: one "?" an element, no nesting
        return " ".join("?" for _ in range(limit)) + ("..." if limit < num_elements else "")
    if array.ndim == 0:
        text = " ".join(element(flat[i]) for i in range(limit))
        return text + ("..." if num_elements > limit else "")
    shape = array.shape
    parts: list[str] = []
    index = 0

    def print_dim(dim: int) -> None:  # TensorFlow's PrintOneDim
        nonlocal index
        if index >= limit:
            return
        if dim == len(shape) - 1:
            for i in range(shape[dim]):
                if index >= limit:
                    if dim != 0:  # cut within a row: the rest of the row is "..."
                        parts.append("...")
                    return
                if i > 0:
                    parts.append(" ")
                parts.append(element(flat[index]))
                index += 1
            return
        for _ in range(shape[dim]):
            opened = index < limit
            if opened:
                parts.append("[")
            print_dim(dim + 1)
            if opened:
                parts.append("]")

    print_dim(0)
    if num_elements > limit:
        parts.append("...")
    return "".join(parts)


def _element_writer(dtype: np.dtype) -> Callable[[Any], str] | None:
    """How SummarizeValue writes one element of ``dtype``; None for the dtypes it writes as
    ``?``."""
    if dtype == np.bool_:
        return lambda v: "1" if v else "0"
    if dtype.kind in "iu":
        return lambda v: str(int(v))
    if dtype == np.float64:
        return lambda v: _legacy_float_text(float(v), 15, np.float64)
    if dtype.kind == "f" or dtype == dtypes.bfloat16.np:  # float32, half, bfloat16: as float
        return lambda v: _legacy_float_text(float(v), 6, np.float32)
    if dtype.kind in "OSU":
        return _c_escape
    return None


def _legacy_float_text(v: float, digits: int, kind: Any) -> str:
    """TensorFlow's FloatToBuffer / DoubleToBuffer: ``%.{digits}g``, or three (float) or two
    (double) digits more when that text does not read back as the same value."""
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    text = f"{v:.{digits}g}"
    if np.isinf(v) or kind(text) == kind(v):
        return text
    return f"{v:.{digits + (3 if kind is np.float32 else 2)}g}"


_C_ESCAPES = {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    ord('"'): '\\"',
    ord("'"): "\\'",
    ord("\\"): "\\\\",
}


def _c_escape(v: Any) -> str:
    """A string element as TensorFlow's CEscape writes it: C escapes, other bytes outside
    printable ASCII (UTF-8 included) as three-digit octal."""
    data = v if isinstance(v, bytes) else str(v).encode("utf-8")
    return "".join(
        _C_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in data
    )


def _stream(output_stream: str) -> Any:
    # Looked up at each write, so that a notebook's captured stdout/stderr receives it.
    return sys.stdout if output_stream == "stdout" else sys.stderr


def _write(output_stream: str, text: str) -> None:
    if output_stream.startswith("file://"):
        with open(output_stream[len("file://") :], "a", encoding="utf-8") as f:
            f.write(text)
        return
    stream = _stream(output_stream)
    stream.write(text)
    stream.flush()


class _PrintCount:
    """How many times one Print node has printed (its ``first_n`` budget)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def take(self, first_n: int) -> bool:
        with self.lock:
            if 0 <= first_n <= self.count:
                return False
            self.count += 1
            return True


class PrintOp(OpDef):
    """``input`` unchanged; as a side effect writes ``message`` and the ``data`` tensors to
    stderr (only the first ``first_n`` times, when that is not -1)."""

    type = "Print"
    inputs = ("input", "data*")
    attrs = {"message": "", "first_n": -1, "summarize": 3}
    stateful = True
    forwards_input = True
    cpu_only = True
    samples = [
        Sample(input=(2, 3), data=[(2, 3), (5,)], message="x: "),
        Sample(input=(4,), data=[np.array([1, 2, 3, 4], np.int32)], first_n=1, summarize=-1),
    ]

    def infer(self, input: TensorSpec, data: list[TensorSpec], message, first_n, summarize):
        return TensorSpec(input.shape, input.dtype.base_dtype)

    def compute(self, ctx, input, data, message: str, first_n: int, summarize: int, count=None):
        if count is None or count.take(first_n):
            text = message + "".join(f"[{summarize_value(d, summarize)}]" for d in data)
            _write("stderr", text + "\n")
        return input

    def bind(self, op: Any, device_type: str = "CPU") -> Callable[..., Any]:
        attrs = kernel_attrs(op.attrs)
        attrs.pop("N", None)
        key = op.name

        def print_kernel(ctx: KernelContext, input: Any, *data: Any) -> Any:
            count = ctx.resources.lookup_or_create("_print_counts", key, _PrintCount)
            return self.compute(ctx, input, data, count=count, **attrs)

        return print_kernel

    def gradient(self, op: Any, grad: Any) -> list[Any]:
        return [grad] + [None] * (len(op.inputs) - 1)


def Print(  # noqa: N802 - TensorFlow's name
    input_: Any,
    data: Any,
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Tensor:
    """``input_`` unchanged; running it writes ``message`` and ``data``'s values to stderr.

    >>> import nbflow as tf
    >>> x = tf.constant([1, 2, 3])
    >>> tf.Session().run(tf.Print(x, [x], "x: ")).tolist()  # stderr: x: [1 2 3]
    [1, 2, 3]
    """
    tensors = [ops_lib.convert_to_tensor(d) for d in data]
    attrs = {
        "message": message or "",
        "first_n": -1 if first_n is None else int(first_n),
        "summarize": 3 if summarize is None else int(summarize),
    }
    return _create("Print", [ops_lib.convert_to_tensor(input_), tensors], attrs, name).outputs[0]


class PrintV2(OpDef):
    """Writes ``template`` with its ``{}`` slots filled by the formatted ``inputs`` (NumPy's
    layout, at most ``summarize`` elements at each end of an axis) to ``output_stream``."""

    inputs = ("inputs*",)
    attrs = {"template": REQUIRED, "output_stream": "stderr", "summarize": 3, "end": "\n"}
    num_outputs = 0
    stateful = True
    differentiable = False
    cpu_only = True
    samples = [
        Sample(inputs=[(2, 3), np.array(7, np.int32)], template="x: {} n: {}"),
        Sample(inputs=[(20,)], template="{}", summarize=-1, end=""),
    ]

    def infer(self, inputs: list[TensorSpec], template, output_stream, summarize, end) -> list:
        return []

    def compute(self, ctx, inputs, template: str, output_stream: str, summarize: int, end: str):
        _write(output_stream, template.format(*(format_value(v, summarize) for v in inputs)) + end)
        return ()


def format_value(value: Any, summarize: int) -> str:
    """A tensor value as ``tf.print`` writes it: NumPy's layout, axes longer than
    ``2 * summarize`` shortened to their ends (-1: never shortened)."""
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind == "S":
        array = np.vectorize(
            lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else v, otypes=[object]
        )(array)
    if array.ndim == 0:
        return _float_text(array.item()) if array.dtype.kind == "f" else str(array.item())
    threshold = sys.maxsize if summarize < 0 else 0
    return np.array2string(
        array,
        threshold=threshold,
        edgeitems=max(summarize, 1),
        separator=" ",
        formatter={"float_kind": _float_text},
    )


def _float_text(v: Any) -> str:
    """1, 0.5, 1e-08: floats as TensorFlow writes them (no trailing point)."""
    return np.format_float_positional(v, trim="-") if abs(v) < 1e16 else str(v)


def print_v2(
    *inputs: Any,
    output_stream: Any = None,
    summarize: int = 3,
    sep: str = " ",
    end: str = "\n",
    name: str | None = None,
) -> ops_lib.Operation:
    """An op that prints ``inputs`` (tensors and Python values) separated by ``sep`` when run;
    ``output_stream`` is ``sys.stderr`` (default), ``sys.stdout`` or ``"file://path"``.

    >>> import nbflow as tf
    >>> op = tf.print("total:", tf.constant([1, 2]))
    >>> tf.Session().run(op)  # stderr: total: [1 2]
    """
    if output_stream is None or output_stream is sys.stderr or output_stream == "stderr":
        stream = "stderr"
    elif output_stream is sys.stdout or output_stream == "stdout":
        stream = "stdout"
    elif isinstance(output_stream, str) and output_stream.startswith("file://"):
        stream = output_stream
    else:
        raise ValueError(
            f"Unsupported output stream {output_stream!r}: use sys.stderr, sys.stdout or "
            "'file://<path>'"
        )
    tensors, pieces = [], []
    for value in inputs:
        if isinstance(value, (Tensor, ops_lib.Operation)) or ops_lib._contains_tensor(value):
            if isinstance(value, ops_lib.Operation):
                raise ValueError(f"tf.print cannot print the Operation {value.name}")
            tensors.append(ops_lib.convert_to_tensor(value))
            pieces.append("{}")
        else:
            pieces.append(str(value).replace("{", "{{").replace("}", "}}"))
    attrs = {
        "template": sep.replace("{", "{{").replace("}", "}}").join(pieces),
        "output_stream": stream,
        "summarize": -1 if summarize is None else int(summarize),
        "end": end,
    }
    return _create("PrintV2", [tensors], attrs, name=name)
