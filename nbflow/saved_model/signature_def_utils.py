"""Signatures: the named inputs and outputs a served model exposes (JSON dicts).

sig = predict_signature_def(inputs={"x": x}, outputs={"y": y})
# {"inputs": {"x": {"name": "x:0", "dtype": "float32", "tensor_shape": [-1, 3]}}, ...}
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.saved_model import signature_constants
from nbflow.train import meta_graph


def build_tensor_info(tensor: Any) -> dict[str, Any]:
    """A TensorInfo: the tensor's name, dtype and shape (unknown dimensions -1)."""
    tensor = ops_lib.convert_to_tensor(tensor)
    shape = tensor.shape
    dims = None if shape.ndims is None else [-1 if d is None else d for d in shape.as_list()]
    return {"name": tensor.name, "dtype": tensor.dtype.base_dtype.name, "tensor_shape": dims}


def get_tensor_from_tensor_info(
    tensor_info: Any, graph: ops_lib.Graph | None = None, import_scope: str | None = None
) -> ops_lib.Tensor:
    """The tensor a TensorInfo (TensorFlow's proto or nbflow's dict) names."""
    graph = graph or ops_lib.get_default_graph()
    prefix = f"{import_scope}/" if import_scope else ""
    name = tensor_info["name"] if isinstance(tensor_info, dict) else tensor_info.name
    return graph.get_tensor_by_name(prefix + name)


def build_signature_def(
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    method_name: str | None = None,
) -> dict[str, Any]:
    return {
        "inputs": dict(inputs or {}),
        "outputs": dict(outputs or {}),
        "method_name": method_name or "",
    }


def predict_signature_def(inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """A Predict signature from dicts of tensors."""
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def(
        {k: build_tensor_info(t) for k, t in inputs.items()},
        {k: build_tensor_info(t) for k, t in outputs.items()},
        signature_constants.PREDICT_METHOD_NAME,
    )


def _checked_info(tensor: Any, dtype: dtypes.DType, message: str) -> dict[str, Any]:
    """The TensorInfo of ``tensor``, which must be of ``dtype`` (ValueError ``message`` if not)."""
    if tensor is None:
        raise ValueError(message)
    tensor = ops_lib.convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != dtype:
        raise ValueError(f"{message} Got {tensor.name} of dtype {tensor.dtype.name}.")
    return build_tensor_info(tensor)


def classification_signature_def(examples: Any, classes: Any, scores: Any) -> dict[str, Any]:
    """A Classify signature: serialized ``tf.Example`` strings in; classes and/or scores out."""
    inputs = {
        signature_constants.CLASSIFY_INPUTS: _checked_info(
            examples, dtypes.string, "Classification examples must be a string Tensor."
        )
    }
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        outputs[signature_constants.CLASSIFY_OUTPUT_CLASSES] = _checked_info(
            classes, dtypes.string, "Classification classes must be a string Tensor."
        )
    if scores is not None:
        outputs[signature_constants.CLASSIFY_OUTPUT_SCORES] = _checked_info(
            scores, dtypes.float32, "Classification scores must be a float Tensor."
        )
    return build_signature_def(inputs, outputs, signature_constants.CLASSIFY_METHOD_NAME)


def regression_signature_def(examples: Any, predictions: Any) -> dict[str, Any]:
    """A Regress signature: serialized ``tf.Example`` strings in, float predictions out."""
    inputs = {
        signature_constants.REGRESS_INPUTS: _checked_info(
            examples, dtypes.string, "Regression examples must be a string Tensor."
        )
    }
    outputs = {
        signature_constants.REGRESS_OUTPUTS: _checked_info(
            predictions, dtypes.float32, "Regression predictions must be a float Tensor."
        )
    }
    return build_signature_def(inputs, outputs, signature_constants.REGRESS_METHOD_NAME)


def has_inputs_and_outputs(signature_def: Any) -> bool:
    """Whether a signature (dict or proto) names at least one input and one output."""
    proto = meta_graph.signature_def_proto(signature_def)
    return bool(proto.inputs) and bool(proto.outputs)


def is_valid_signature(signature_def: Any) -> bool:
    """TensorFlow Serving's check: a Predict, Classify or Regress signature of the right form.

    Predict needs some inputs and outputs; Classify one string ``inputs`` and string ``classes``
    and/or float ``scores``; Regress one string ``inputs`` and one float ``outputs``. Any other
    method name is not valid.
    """
    if signature_def is None:
        return False
    proto = meta_graph.signature_def_proto(signature_def)
    string, float32 = protos.DATA_TYPES["string"], protos.DATA_TYPES["float32"]
    inputs, outputs = dict(proto.inputs), dict(proto.outputs)
    if proto.method_name == signature_constants.PREDICT_METHOD_NAME:
        return bool(inputs) and bool(outputs)
    if proto.method_name == signature_constants.REGRESS_METHOD_NAME:
        return (
            set(inputs) == {signature_constants.REGRESS_INPUTS}
            and inputs[signature_constants.REGRESS_INPUTS].dtype == string
            and set(outputs) == {signature_constants.REGRESS_OUTPUTS}
            and outputs[signature_constants.REGRESS_OUTPUTS].dtype == float32
        )
    if proto.method_name == signature_constants.CLASSIFY_METHOD_NAME:
        classes = signature_constants.CLASSIFY_OUTPUT_CLASSES
        scores = signature_constants.CLASSIFY_OUTPUT_SCORES
        return (
            set(inputs) == {signature_constants.CLASSIFY_INPUTS}
            and inputs[signature_constants.CLASSIFY_INPUTS].dtype == string
            and bool(outputs)
            and set(outputs) <= {classes, scores}
            and (classes not in outputs or outputs[classes].dtype == string)
            and (scores not in outputs or outputs[scores].dtype == float32)
        )
    return False
