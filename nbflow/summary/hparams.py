"""A run's hyperparameters in its event log, as TensorBoard's HParams plugin writes them.

``hparams_pb`` makes the summary that ``tensorboard.plugins.hparams.api.hparams_pb`` makes: a
``Summary.Value`` tagged ``_hparams_/session_start_info`` whose metadata names the plugin
``hparams`` and carries an ``HParamsPluginData`` with the values (numbers, strings, booleans),
on an empty float tensor. TensorBoard's HParams dashboard lists a run that has one, and the
Board's runs table reads the same value back (``read_session_start_info``).

    writer.add_summary(hparams_pb({"lr": 0.01, "optimizer": "adam"}))
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import numpy as np

from nbflow.framework import protos

PLUGIN_NAME = "hparams"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"

HParamValue = bool | int | float | str


def hparam_value(value: Any) -> HParamValue:
    """A value the HParams plugin can hold: bools, numbers and strings as they are (NumPy
    scalars as Python ones), anything else as its ``repr``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def hparams_pb(
    hparams: dict[str, Any], trial_id: str | None = None, start_time_secs: float | None = None
) -> Any:
    """The ``Summary`` recording one run's hyperparameters (TensorBoard's ``hparams_pb``).

    >>> s = hparams_pb({"lr": 0.01, "optimizer": "adam"}, trial_id="run1")
    >>> read_session_start_info(s.value[0])
    {'lr': 0.01, 'optimizer': 'adam'}
    """
    values = {str(k): hparam_value(v) for k, v in hparams.items()}
    if trial_id is None:  # TensorBoard's default group: a hash of the values
        trial_id = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()
    data = protos.HParamsPluginData(version=0)
    info = data.session_start_info
    info.group_name = trial_id
    info.start_time_secs = time.time() if start_time_secs is None else start_time_secs
    for name in sorted(values):
        v = values[name]
        if isinstance(v, bool):
            info.hparams[name].bool_value = v
        elif isinstance(v, (int, float)):
            info.hparams[name].number_value = v
        else:
            info.hparams[name].string_value = v
    metadata = protos.SummaryMetadata()
    metadata.plugin_data.plugin_name = PLUGIN_NAME
    metadata.plugin_data.content = data.SerializeToString()
    tensor = protos.make_tensor_proto(np.zeros(0, np.float32))
    return protos.Summary(
        value=[protos.Summary.Value(tag=SESSION_START_INFO_TAG, metadata=metadata, tensor=tensor)]
    )


def is_hparams_value(value: Any) -> bool:
    return value.metadata.plugin_data.plugin_name == PLUGIN_NAME


def read_session_start_info(value: Any) -> dict[str, HParamValue] | None:
    """The hyperparameters of a ``Summary.Value`` written by the HParams plugin; None when it
    carries something else (the experiment's configuration, a session's end)."""
    data = protos.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    if data.WhichOneof("data") != "session_start_info":
        return None
    out: dict[str, HParamValue] = {}
    for name in sorted(data.session_start_info.hparams):
        v = data.session_start_info.hparams[name]
        kind = v.WhichOneof("kind")
        if kind is not None:
            out[name] = getattr(v, kind)
    return out
