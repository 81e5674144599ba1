"""Op declarations, one module per family; importing this package registers them all."""

from nbflow.ops import array_ops, control_flow_ops, math_ops, state_ops  # noqa: F401
