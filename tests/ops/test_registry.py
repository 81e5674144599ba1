"""Registry-wide checks: every op sample's inferred shape and dtype agree with its kernel."""

import threading

import numpy as np
import pytest

import nbflow  # noqa: F401 - registers every op
from nbflow.framework.op_def import TensorSpec, all_samples, cpu_context, kernel_attrs


def _spec(value):
    if isinstance(value, list):
        return [_spec(v) for v in value]
    return TensorSpec.of_value(value)


def _run_kernel(opdef, args, attrs):
    """The kernel's result; an async kernel's comes through ``done`` (waited for, with a bound)."""
    if not opdef.is_async:
        return opdef.compute(cpu_context(), *args, **attrs)
    finished, outcome = threading.Event(), []

    def done(result=None, error=None):
        outcome.append((result, error))
        finished.set()

    opdef.compute(cpu_context(), *args, done=done, **attrs)
    assert finished.wait(30), f"{opdef.type} never called done"
    result, error = outcome[0]
    if error is not None:
        raise error
    return result


@pytest.mark.parametrize("case", all_samples(), ids=str)
def test_shape_function_agrees_with_kernel(case):
    args = case.make_inputs(np.random.default_rng(0))
    attrs = kernel_attrs(case.attrs)
    inferred = case.opdef.infer(*map(_spec, args), **attrs)
    if case.opdef.list_inputs:
        attrs["N"] = len(args[min(case.opdef.list_inputs)])
    kernel_args = [tuple(a) if isinstance(a, list) else a for a in args]
    actual = _run_kernel(case.opdef, kernel_args, case.attrs)
    inferred = [inferred] if isinstance(inferred, TensorSpec) else list(inferred)
    actual = [actual] if case.opdef.num_outputs == 1 and len(inferred) == 1 else list(actual)
    assert len(inferred) == len(actual), case
    for spec, value in zip(inferred, actual):
        assert spec.is_compatible_with(TensorSpec.of_value(value)), (case, spec, np.shape(value))


def test_every_op_declares_a_gradient_or_is_marked_not_differentiable():
    from nbflow.framework.op_def import OpDef, registered_ops

    missing = [
        name
        for name, opdef in registered_ops().items()
        if opdef.differentiable and type(opdef).gradient is OpDef.gradient
    ]
    assert not missing, f"ops with neither a gradient nor differentiable=False: {missing}"


def test_an_op_type_declared_by_a_second_class_is_refused():
    from nbflow.framework.op_def import OpDef

    with pytest.raises(TypeError, match="'MatMul' is declared twice"):

        class MatMul(OpDef):  # noqa: F811 - the clash under test
            inputs = ("a", "b")
