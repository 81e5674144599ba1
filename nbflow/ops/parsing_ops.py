"""Parsing ops: ``decode_csv`` turns CSV records (strings) into typed columns."""

from __future__ import annotations

import csv
from typing import Any, Literal

import numpy as np

from nbflow import errors
from nbflow.framework import dtypes
from nbflow.framework import ops as ops_lib
from nbflow.framework.op_def import KernelContext, OpDef, TensorSpec


class DecodeCSV(OpDef):
    """One output per column; an empty field takes its default (a required column has none)."""

    inputs = ("records", "record_defaults*")
    attrs = {"field_delim": ",", "use_quote_delim": True, "na_value": "", "select_cols": []}
    differentiable = False

    def infer(self, records: TensorSpec, record_defaults: list, **attrs: Any) -> list:
        return [TensorSpec(records.shape, d.dtype) for d in record_defaults]

    def compute(
        self,
        ctx: KernelContext,
        records: Any,
        record_defaults: Any,
        field_delim: str,
        use_quote_delim: bool,
        na_value: str,
        select_cols: list,
    ) -> list:
        records = np.asarray(records, dtype=object)
        flat = [r.decode() if isinstance(r, bytes) else str(r) for r in records.reshape(-1)]
        quoting: Literal[0, 3] = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
        columns: list[list] = [[] for _ in record_defaults]
        for line in flat:
            fields = next(csv.reader([line], delimiter=field_delim, quoting=quoting), [])
            if select_cols:
                fields = [fields[c] if c < len(fields) else "" for c in select_cols]
            if len(fields) != len(record_defaults):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Expect {len(record_defaults)} fields but have {len(fields)} in record "
                    f"{line!r}",
                )
            for k, (field, default) in enumerate(zip(fields, record_defaults)):
                default = np.asarray(default)
                if field == "" or field == na_value:
                    if default.size == 0:
                        raise errors.InvalidArgumentError(
                            None, None, f"Field {k} is required but missing in record {line!r}"
                        )
                    columns[k].append(default.reshape(-1)[0])
                else:
                    columns[k].append(_parse(field, default.dtype, k, line))
        out = []
        for column, default in zip(columns, record_defaults):
            kind = np.asarray(default).dtype
            is_string = kind.kind == "O"
            array = np.empty(len(column), dtype=object) if is_string else np.array(column, kind)
            if is_string:
                array[:] = [v if isinstance(v, bytes) else str(v).encode() for v in column]
            out.append(array.reshape(records.shape))
        return out


def _parse(field: str, dtype: np.dtype, k: int, line: str) -> Any:
    try:
        if dtype.kind == "O":
            return field.encode()
        if dtype.kind in "iu":
            return int(field)
        return float(field)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Field {k} in record {line!r} is not a valid {dtype}: {field!r}"
        ) from None


def decode_csv(
    records: Any,
    record_defaults: list,
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: list | None = None,
) -> list:
    """Columns of the CSV ``records``, typed like ``record_defaults`` (``[[0], [""], []]``...).

    >>> import nbflow as tf
    >>> a, b = tf.decode_csv(tf.constant(["1,x", "2,"]), [[0], ["none"]])
    >>> tf.Session().run(a).tolist()
    [1, 2]
    """
    defaults = []
    for d in record_defaults:
        if isinstance(d, ops_lib.Tensor):
            defaults.append(d)
        elif isinstance(d, (list, tuple)) and len(d) == 0:
            defaults.append(ops_lib.convert_to_tensor(np.zeros([0], np.float32)))
        else:
            value = d[0] if isinstance(d, (list, tuple)) else d
            dtype = dtypes.string if isinstance(value, (str, bytes)) else None
            defaults.append(ops_lib.convert_to_tensor([value], dtype=dtype))
    op = ops_lib.get_default_graph().create_op(
        "DecodeCSV",
        [records, defaults],
        {
            "field_delim": field_delim,
            "use_quote_delim": use_quote_delim,
            "na_value": na_value,
            "select_cols": list(select_cols or []),
        },
        name=name or "DecodeCSV",
    )
    return list(op.outputs)
