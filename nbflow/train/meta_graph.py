"""A graph, its variables, collections and signatures as TensorFlow's ``MetaGraphDef`` proto.

TensorFlow's loader (``tf.compat.v1.saved_model.loader.load``, ``import_meta_graph``) imports
the ``graph_def``, rebuilds variables from the ``VariableDef`` protos of the ``variables``
collection and restores them by running the ``SaverDef``'s restore op with the checkpoint prefix
fed to its filename tensor. nbflow's own Saver ops (``CheckpointTempPrefix``, a SaveV2 without
``shape_and_slices``) are not TensorFlow's, so this module leaves them out and writes, under a
free ``save`` scope, the saver subgraph TensorFlow's ``Saver`` would build:

    save/Const                 the filename tensor (a string constant the loader feeds)
    save/SaveV2                prefix, tensor_names, shape_and_slices, the variables
    save/control_dependency    the prefix once SaveV2 ran (SaverDef.save_tensor_name)
    save/RestoreV2             prefix, tensor_names, shape_and_slices -> one output per variable
    save/Assign_k, save/restore_all

Those read and write the same V2 checkpoint nbflow writes. nbflow reads the result back with
``import_meta_graph``, which drops that subgraph again and builds its own Saver.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.framework import protos
from nbflow.framework.graph_export import tensorflow_graph_def
from nbflow.framework.ops import GraphKeys, Operation, Tensor
from nbflow.ops import variables


def _string_const(node: Any, values: Sequence[str] | str) -> None:
    node.op = "Const"
    node.attr["dtype"].type = protos.DATA_TYPES["string"]
    node.attr["value"].tensor.CopyFrom(protos.make_tensor_proto(values, "string"))


def _type_list(node: Any, attr: str, dtype_enums: list[int]) -> None:
    node.attr[attr].list.type.extend(dtype_enums)


def _add_saver(graph_def: Any, saved: dict[str, Any], saver_def: dict[str, Any] | None) -> Any:
    """Append TensorFlow's saver subgraph for ``saved`` (checkpoint name -> Variable)."""
    taken = {n.name.split("/")[0] for n in graph_def.node}
    scope, k = "save", 0
    while scope in taken:
        k += 1
        scope = f"save_{k}"
    names = list(saved)
    types = [protos.DATA_TYPES[saved[n].dtype.base_dtype.name] for n in names]

    def node(name: str, op: str = "", inputs: Sequence[str] = ()) -> Any:
        out = graph_def.node.add(name=f"{scope}/{name}", op=op)
        out.input.extend(inputs)
        return out

    _string_const(node("Const"), "model")
    for kind in ("SaveV2", "RestoreV2"):
        _string_const(node(f"{kind}/tensor_names"), names)
        _string_const(node(f"{kind}/shape_and_slices"), [""] * len(names))
    prefix = [f"{scope}/Const"]
    save = node(
        "SaveV2",
        "SaveV2",
        prefix
        + [f"{scope}/SaveV2/tensor_names", f"{scope}/SaveV2/shape_and_slices"]
        + [saved[n].op.name for n in names],
    )
    _type_list(save, "dtypes", types)
    done = node("control_dependency", "Identity", prefix + [f"^{scope}/SaveV2"])
    done.attr["T"].type = protos.DATA_TYPES["string"]
    restore = node(
        "RestoreV2",
        "RestoreV2",
        prefix + [f"{scope}/RestoreV2/tensor_names", f"{scope}/RestoreV2/shape_and_slices"],
    )
    _type_list(restore, "dtypes", types)
    assigns = []
    for k, (name, dtype) in enumerate(zip(names, types)):
        suffix = f"_{k}" if k else ""
        assign = node(f"Assign{suffix}", "Assign", [saved[name].op.name, f"{scope}/RestoreV2:{k}"])
        assign.attr["T"].type = dtype
        assign.attr["validate_shape"].b = True
        assign.attr["use_locking"].b = True
        assigns.append(f"^{assign.name}")
    node("restore_all", "NoOp", assigns)
    return protos.SaverDef(
        filename_tensor_name=f"{scope}/Const:0",
        save_tensor_name=f"{scope}/control_dependency:0",
        restore_op_name=f"{scope}/restore_all",
        max_to_keep=int((saver_def or {}).get("max_to_keep") or 5),
        keep_checkpoint_every_n_hours=float(
            (saver_def or {}).get("keep_checkpoint_every_n_hours") or 10000.0
        ),
        version=2,
    )


def _variable_def(v: Any) -> bytes:
    return protos.VariableDef(**v.to_proto()).SerializeToString()


def _collection(values: list[Any], kept: set[str]) -> Any | None:
    """A CollectionDef of ``values``, or None for kinds TensorFlow cannot hold (as TF skips)."""
    if not values:
        return None
    if all(isinstance(v, variables.Variable) for v in values):
        return protos.CollectionDef(
            bytes_list=protos.CollectionDef.BytesList(value=[_variable_def(v) for v in values])
        )
    if all(isinstance(v, (Tensor, Operation)) for v in values):
        names = [v.name for v in values if v.name.split(":")[0] in kept]
        return protos.CollectionDef(node_list=protos.CollectionDef.NodeList(value=names))
    if all(isinstance(v, (bytes, str)) for v in values):
        data = [v if isinstance(v, bytes) else v.encode() for v in values]
        return protos.CollectionDef(bytes_list=protos.CollectionDef.BytesList(value=data))
    if all(isinstance(v, numbers.Integral) for v in values):
        ints = [int(v) for v in values]
        return protos.CollectionDef(int64_list=protos.CollectionDef.Int64List(value=ints))
    if all(isinstance(v, numbers.Real) for v in values):
        floats = [float(v) for v in values]
        return protos.CollectionDef(float_list=protos.CollectionDef.FloatList(value=floats))
    return None


def signature_def_proto(signature: Any) -> Any:
    """TensorFlow's ``SignatureDef`` for nbflow's dict signature (``build_signature_def``)."""
    if isinstance(signature, protos.SignatureDef):
        return signature
    proto = protos.SignatureDef(method_name=signature.get("method_name", ""))
    for kind in ("inputs", "outputs"):
        for key, info in signature.get(kind, {}).items():
            out = getattr(proto, kind)[key]
            out.name = info["name"]
            out.dtype = protos.DATA_TYPES[info["dtype"]]
            shape = info.get("tensor_shape")
            out.tensor_shape.CopyFrom(
                protos.TensorShapeProto(unknown_rank=True)
                if shape is None
                else protos.shape_proto([None if d is None or d < 0 else d for d in shape])
            )
    return proto


def tensorflow_meta_graph_def(
    graph: ops_lib.Graph,
    var_list: dict[str, Any] | None = None,
    saver_def: dict[str, Any] | None = None,
    tags: Sequence[str] = (),
    signature_def_map: dict[str, Any] | None = None,
    clear_devices: bool = False,
    collection_list: Sequence[str] | None = None,
    graph_def: Any = None,
) -> Any:
    """The ``MetaGraphDef`` TensorFlow's loader reads for ``graph``; the saver restores
    ``var_list`` (checkpoint name -> Variable; default: the global variables by op name)."""
    drop = set()
    for saver in graph.get_collection(GraphKeys.SAVERS):
        sd = getattr(saver, "saver_def", None)
        if sd:
            drop.add(sd["restore_op_name"].rsplit("/", 1)[0] + "/")
    if saver_def:
        drop.add(saver_def["restore_op_name"].rsplit("/", 1)[0] + "/")
    full = tensorflow_graph_def(graph if graph_def is None else graph_def)
    out = protos.GraphDef(versions=full.versions)
    for n in full.node:
        if not any(n.name.startswith(scope) for scope in drop):
            out.node.add().CopyFrom(n)
            if clear_devices:
                out.node[-1].device = ""
    kept = {n.name for n in out.node}
    saved = var_list if var_list is not None else {}
    if var_list is None:
        with graph.as_default():
            saved = {v.op.name: v for v in variables.global_variables()}
    meta = protos.MetaGraphDef(graph_def=out)
    meta.meta_info_def.tags.extend(tags)
    # the TensorFlow API the graph follows (TensorFlow's loader parses it as a version number);
    # the git version says who wrote it
    meta.meta_info_def.tensorflow_version = "1.15.0"
    meta.meta_info_def.tensorflow_git_version = "nbflow"
    if saved:
        meta.saver_def.CopyFrom(_add_saver(meta.graph_def, saved, saver_def))
    keys = collection_list if collection_list is not None else graph.get_all_collection_keys()
    for key in keys:
        if key == GraphKeys.SAVERS:
            continue
        entry = _collection(graph.get_collection(key), kept)
        if entry is not None:
            meta.collection_def[key].CopyFrom(entry)
    for key, signature in (signature_def_map or {}).items():
        meta.signature_def[key].CopyFrom(signature_def_proto(signature))
    return meta
