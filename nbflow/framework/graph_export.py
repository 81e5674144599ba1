"""A graph as the ``GraphDef`` TensorFlow itself would write, so TensorFlow can import it.

nbflow's ops carry the attrs their kernels need; TensorFlow's ops also carry type attrs (``T``,
``Tidx``, ``SrcT``...) that its importer requires, and it refuses attrs its op does not declare.
``tensorflow_graph_def`` therefore, for every node:

- adds the type attrs TensorFlow's op declares, read from the dtypes of the op's inputs or
  outputs (``TYPE_ATTRS``; ``T`` from the first input unless the table says otherwise);
- leaves out nbflow attrs that still hold their default value (TensorFlow's op either has the
  same default or lacks the attr: ``Softmax``'s ``axis=-1``); an attr with another value is kept,
  so nbflow re-imports the file unchanged.

    proto = tensorflow_graph_def(sess.graph)          # or a frozen GraphDef
    open("frozen.pb", "wb").write(proto.SerializeToString())

Op types are the same in both; an nbflow op TensorFlow lacks stays as it is (TensorFlow will name
it when importing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbflow.framework import protos
from nbflow.framework.graph_def import as_graph_def_dict, import_graph_def
from nbflow.framework.op_def import get_op_def
from nbflow.framework.ops import Graph, Operation

_T: dict[str, int | str] = {"T": 0}
# TensorFlow op type -> {type attr: where its dtype comes from (input index, or "out")}.
TYPE_ATTRS: dict[str, dict[str, int | str]] = {
    **{
        op: _T
        for op in (
            "Identity Add AddV2 Sub Mul RealDiv Div FloorDiv Maximum Minimum Pow SquaredDifference "
            "Relu Relu6 Elu Selu Softplus LeakyRelu Sigmoid Tanh Softmax LogSoftmax Exp Log Sqrt "
            "Rsqrt Square Neg Abs Floor Ceil Round Sign MatMul BatchMatMulV2 BiasAdd Conv2D "
            "DepthwiseConv2dNative MaxPool AvgPool Squeeze Assign AddN Pack Unpack ZerosLike "
            "OnesLike StopGradient Greater GreaterEqual Less LessEqual Equal NotEqual L2Loss "
            "Snapshot Merge Switch Enter Exit NextIteration"
        ).split()
    },
    "Reshape": {"T": 0, "Tshape": 1},
    "ExpandDims": {"T": 0, "Tdim": 1},
    "Transpose": {"T": 0, "Tperm": 1},
    "Tile": {"T": 0, "Tmultiples": 1},
    "Pad": {"T": 0, "Tpaddings": 1},
    "ConcatV2": {"T": 0, "Tidx": -1},
    "Mean": {"T": 0, "Tidx": 1},
    "Sum": {"T": 0, "Tidx": 1},
    "Max": {"T": 0, "Tidx": 1},
    "Min": {"T": 0, "Tidx": 1},
    "Prod": {"T": 0, "Tidx": 1},
    "ArgMax": {"T": 0, "Tidx": 1, "output_type": "out"},
    "ArgMin": {"T": 0, "Tidx": 1, "output_type": "out"},
    "StridedSlice": {"T": 0, "Index": 1},
    "Slice": {"T": 0, "Index": 1},
    "GatherV2": {"Tparams": 0, "Tindices": 1, "Taxis": 2},
    "Cast": {"SrcT": 0, "DstT": "out"},
    "Shape": {"T": 0, "out_type": "out"},
    "Fill": {"T": 1, "index_type": 0},
    "Select": {"T": 1},
    "SelectV2": {"T": 1},
    "Range": {"Tidx": "out"},
}


def _dtype_of(op: Operation, source: int | str) -> Any:
    if source == "out":
        return op.outputs[0].dtype
    inputs = list(op.inputs)
    if not inputs or not isinstance(source, int) or source >= len(inputs):
        return None
    return inputs[source].dtype


def _is_default(value: Any, default: Any) -> bool:
    try:
        equal = value == default
        return bool(np.all(equal)) if not isinstance(equal, bool) else equal
    except (TypeError, ValueError):
        return False


def tensorflow_graph_def(graph_or_graph_def: Any) -> Any:
    """TensorFlow's ``GraphDef`` proto of a Graph, a GraphDef proto or nbflow's dict GraphDef."""
    graph = graph_or_graph_def
    if not isinstance(graph, Graph):
        graph = Graph()
        with graph.as_default():
            import_graph_def(as_graph_def_dict(graph_or_graph_def), name="")
    proto = protos.graph_def_to_proto(graph.as_graph_def())
    ops = {op.name: op for op in graph.get_operations()}
    for node in proto.node:
        op = ops[node.name]
        declared = get_op_def(op.type).attrs
        for key in list(node.attr):
            if key in declared and _is_default(op.attrs.get(key), declared[key]):
                del node.attr[key]
        for attr, source in TYPE_ATTRS.get(op.type, {}).items():
            dtype = _dtype_of(op, source)
            if attr not in node.attr and dtype is not None:
                node.attr[attr].type = protos.DATA_TYPES[dtype.base_dtype.name]
    return proto
