"""Nothing outside ``nbflow/ops`` tests op type strings: it reads the traits the ops declare.

STYLE.md's rule ("One op, one place"): code that treats some ops specially asks the op's
``OpDef`` (``holds_constant``, ``control_kind``, ``is_variable``, ``type_attrs``...), so a new
op declares its traits in its own class and no module elsewhere lists op types. This test parses
every module outside ``nbflow/ops`` and fails on a comparison of an op type with a string, or a
table keyed by op types that is looked up with an op's type.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import nbflow  # noqa: F401 - registers every op
from nbflow.framework.op_def import registered_ops

PACKAGE = pathlib.Path(nbflow.__file__).parent
OP_TYPES = frozenset(registered_ops())


def _strings(node: ast.AST, tables: dict[str, set[str]]) -> set[str]:
    """The string literals ``node`` spells out: a constant, a tuple/list/set/frozenset of them,
    a dict's keys, or a module-level name bound to one of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(set(), *(_strings(e, tables) for e in node.elts))
    if isinstance(node, ast.Dict):
        return set().union(set(), *(_strings(k, tables) for k in node.keys if k is not None))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id in ("frozenset", "set", "tuple", "dict"):
            return _strings(node.args[0], tables)
    if isinstance(node, ast.Name):
        return tables.get(node.id, set())
    return set()


def _is_op_type(node: ast.AST) -> bool:
    """``op.type``, ``node_def.op``, ``node["op"]`` or a variable named ``op_type``."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("type", "op")
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "op"
    return isinstance(node, ast.Name) and node.id == "op_type"


def op_type_tests(source: str) -> list[tuple[int, str]]:
    """(line, code) of each place ``source`` tests an op type against strings."""
    tree = ast.parse(source)
    tables: dict[str, set[str]] = {}
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = _strings(statement.value, {}) & OP_TYPES
            for target in targets:
                if isinstance(target, ast.Name) and names:
                    tables[target.id] = names
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            literal = set().union(*(_strings(s, tables) for s in sides))
            if literal & OP_TYPES or (literal and any(_is_op_type(s) for s in sides)):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            table = node.func.value
            if node.func.attr == "get" and isinstance(table, ast.Name) and table.id in tables:
                if node.args and _is_op_type(node.args[0]):
                    found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            if node.value.id in tables and _is_op_type(node.slice):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_check_finds_op_type_tests():
    assert op_type_tests('if op.type == "Const": pass')
    assert op_type_tests('if n["op"] in ("Merge", "RefMerge"): pass')
    assert op_type_tests('if node_def.op != "SomeTensorFlowOp": pass')
    assert op_type_tests('ATTRS = {"MatMul": 1, "Conv2D": 2}\nx = ATTRS.get(op.type)')
    assert op_type_tests('VARIABLES = ("VariableV2",)\nif kind in VARIABLES: pass')
    assert not op_type_tests('if op.op_def.holds_constant and dtype.name == "float32": pass')


def _modules_outside_ops() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "ops")


@pytest.mark.parametrize("path", _modules_outside_ops(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_outside_ops_tests_op_type_strings(path: pathlib.Path):
    found = op_type_tests(path.read_text())
    assert not found, (
        f"{path.relative_to(PACKAGE.parent)} tests op type strings; declare a trait on the op's "
        "OpDef instead (framework/op_def.py) and read it here:\n"
        + "\n".join(f"  line {line}: {code}" for line, code in found)
    )
