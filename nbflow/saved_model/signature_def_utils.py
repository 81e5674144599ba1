"""Signatures: the named inputs and outputs a served model exposes (JSON dicts).

sig = predict_signature_def(inputs={"x": x}, outputs={"y": y})
# {"inputs": {"x": {"name": "x:0", "dtype": "float32", "tensor_shape": [-1, 3]}}, ...}
"""

from __future__ import annotations

from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.saved_model import signature_constants


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


def is_valid_signature(signature_def: dict[str, Any]) -> bool:
    return bool(signature_def.get("inputs")) and bool(signature_def.get("outputs"))
