"""What a ``model_fn`` returns: ``EstimatorSpec``, checked as TensorFlow 1.15 checks it.

    def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features["x"], 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

``ModeKeys`` names the three graphs an Estimator builds: TRAIN, EVAL and PREDICT.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

from nbflow.framework import ops as ops_lib
from nbflow.ops import array_ops
from nbflow.ops.variables import Variable
from nbflow.train.monitored_session import Scaffold
from nbflow.train.session_run_hook import SessionRunHook

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    """The mode a model_fn is called in (``tf.estimator.ModeKeys``)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_EstimatorSpecFields = collections.namedtuple(
    "_EstimatorSpecFields",
    (
        "mode",
        "predictions",
        "loss",
        "train_op",
        "eval_metric_ops",
        "export_outputs",
        "training_chief_hooks",
        "training_hooks",
        "scaffold",
        "evaluation_hooks",
        "prediction_hooks",
    ),
)


class EstimatorSpec(_EstimatorSpecFields):
    """The ops and objects a model_fn returns for one mode; validated on construction.

    TRAIN needs ``loss`` and ``train_op``, EVAL needs ``loss``, PREDICT needs ``predictions``
    (a tensor or a dict of tensors); ``eval_metric_ops`` maps names to ``(value, update_op)``.
    """

    def __new__(
        cls,
        mode: str,
        predictions: Any = None,
        loss: Any = None,
        train_op: Any = None,
        eval_metric_ops: dict[str, Any] | None = None,
        export_outputs: Any = None,
        training_chief_hooks: Iterable[SessionRunHook] | None = None,
        training_hooks: Iterable[SessionRunHook] | None = None,
        scaffold: Scaffold | None = None,
        evaluation_hooks: Iterable[SessionRunHook] | None = None,
        prediction_hooks: Iterable[SessionRunHook] | None = None,
    ) -> EstimatorSpec:
        train_op = _validate_train_op(train_op, mode)
        loss = _validate_loss(loss, mode)
        predictions = _validate_predictions(predictions, mode)
        eval_metric_ops = _validate_eval_metric_ops(eval_metric_ops)
        scaffold = scaffold or Scaffold()
        if not isinstance(scaffold, Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold}")
        _validate_graph(train_op, loss, predictions, eval_metric_ops)
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
            training_chief_hooks=_validate_hooks(training_chief_hooks),
            training_hooks=_validate_hooks(training_hooks),
            scaffold=scaffold,
            evaluation_hooks=_validate_hooks(evaluation_hooks),
            prediction_hooks=_validate_hooks(prediction_hooks),
        )

    def _replace(self, **kwds: Any) -> EstimatorSpec:
        if "mode" in kwds and kwds["mode"] != self.mode:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(**{**self._asdict(), **kwds})


def _check_is_tensor(x: Any, name: str) -> Any:
    if isinstance(x, Variable):
        x = x.value()
    if not isinstance(x, ops_lib.Tensor):
        raise TypeError(f"{name} must be Tensor, given: {x}")
    return x


def _validate_train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if isinstance(train_op, Variable):
        train_op = train_op.op
    if not isinstance(train_op, (ops_lib.Operation, ops_lib.Tensor)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op}")
    return train_op


def _validate_loss(loss: Any, mode: str) -> Any:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _check_is_tensor(loss, "loss")
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if loss.shape.ndims != 0:
        loss = array_ops.reshape(loss, [])
    return loss


def _validate_predictions(predictions: Any, mode: str) -> Any:
    if mode == ModeKeys.PREDICT and predictions is None:
        raise ValueError("Missing predictions.")
    if predictions is None:
        return {}
    if isinstance(predictions, dict):
        return {k: _check_is_tensor(v, f"predictions[{k}]") for k, v in predictions.items()}
    return _check_is_tensor(predictions, "predictions")


def _validate_eval_metric_ops(eval_metric_ops: Any) -> dict[str, Any]:
    eval_metric_ops = eval_metric_ops or {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops}")
    for key, value in eval_metric_ops.items():
        if not isinstance(value, tuple) or len(value) != 2:
            raise TypeError(
                "Values of eval_metric_ops must be (metric_value, update_op) tuples, "
                f"given: {value} for key: {key}"
            )
    return dict(eval_metric_ops)


def _validate_hooks(hooks: Iterable[SessionRunHook] | None) -> tuple[SessionRunHook, ...]:
    hooks = tuple(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook}")
    return hooks


def _validate_graph(train_op: Any, loss: Any, predictions: Any, metric_ops: dict) -> None:
    """Everything must come from the default graph (the one the Estimator built)."""
    graph = ops_lib.get_default_graph()
    named = [("train_op", train_op), ("loss", loss)]
    values = predictions.values() if isinstance(predictions, dict) else [predictions]
    named += [("prediction values", v) for v in values]
    for value, update_op in metric_ops.values():
        named += [("eval_metric_ops", value), ("eval_metric_ops", update_op)]
    for what, x in named:
        if isinstance(x, (ops_lib.Tensor, ops_lib.Operation)) and x.graph is not graph:
            raise ValueError(
                f'{what} with "{x.name}" must be from the default graph. Possible causes: it '
                "was created outside the model_fn, or in a graph other than the one the "
                "Estimator passes the model_fn."
            )
