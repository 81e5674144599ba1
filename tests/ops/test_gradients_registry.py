"""Every differentiable op's gradient agrees with central finite differences in float64."""

import numpy as np
import pytest

from nbflow.framework.op_def import OpDef, all_samples
from tests.gradient_check import check_op_gradient

_CASES = [
    case
    for case in all_samples()
    if case.opdef.differentiable
    and type(case.opdef).gradient is not OpDef.gradient
    and np.dtype(case.input_dtype).kind == "f"
]


@pytest.mark.parametrize("case", _CASES, ids=str)
def test_gradient_matches_finite_differences(case):
    check_op_gradient(case)
