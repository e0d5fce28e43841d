"""``Memory`` is state; the rules are modules that use only its public surface (issue 26).

Read from the source: the rule modules never reach into a private attribute of the state they
are given, ``core/state.py`` depends on no rule module, and no module of core hides an import
cycle behind ``TYPE_CHECKING`` (``toolmem.py`` used to call ``Memory``'s private methods so)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from maestro_memory.core.memory import Memory
from maestro_memory.core.state import MemoryState

CORE = Path(__file__).resolve().parents[2] / "core"
RULE_MODULES = ("decay", "saving", "forgetting", "maintenance", "importing", "view")


def tree(name: str) -> ast.Module:
    return ast.parse((CORE / f"{name}.py").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", RULE_MODULES)
def test_a_rule_module_uses_only_public_calls_on_the_state(name: str) -> None:
    private = [
        (node.lineno, node.attr)
        for node in ast.walk(tree(name))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "memory"
        and node.attr.startswith("_")
    ]
    assert private == [], f"core/{name}.py reaches into the state: {private}"
    # and each takes the state as a parameter: it is a rule over it
    params = [
        a.annotation.id
        for node in ast.walk(tree(name))
        if isinstance(node, ast.FunctionDef)
        for a in node.args.args
        if isinstance(a.annotation, ast.Name)
    ]
    assert "MemoryState" in params


def test_the_state_depends_on_no_rule_module() -> None:
    imported = {
        alias.name if node.module is None else node.module
        for node in ast.walk(tree("state"))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert not imported & set(RULE_MODULES), imported & set(RULE_MODULES)


def test_no_import_cycle_hidden_behind_type_checking_in_core() -> None:
    hidden = [
        path.name
        for path in sorted(CORE.glob("*.py"))
        if path.name != "__init__.py"  # its names for type checkers: it loads them lazily
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert hidden == []


def test_memory_adds_operations_only_no_state() -> None:
    """Every method ``Memory`` adds is one delegating call; its data is ``MemoryState``'s."""
    cls = next(
        node
        for node in tree("memory").body
        if isinstance(node, ast.ClassDef) and node.name == "Memory"
    )
    for method in cls.body:
        if isinstance(method, ast.Expr):  # the docstring
            continue
        assert isinstance(method, ast.FunctionDef), ast.dump(method)
        assert len(method.body) == 1 and isinstance(method.body[0], ast.Return), method.name
    assert Memory.__mro__[1] is MemoryState
    assert not set(vars(Memory)) & set(vars(MemoryState)) - {"__doc__", "__module__"}
