"""``maestro_memory.core``'s public names: the lazy table (``_HOMES``), the names the type
checker sees (the ``TYPE_CHECKING`` imports) and ``__all__`` list the same names, and each
resolves to the object of its home module. Three lists kept by hand drift apart otherwise."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import maestro_memory.core as core


def _type_checking_names() -> set[str]:
    tree = ast.parse(Path(core.__file__).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom)
                names.update(alias.asname or alias.name for alias in stmt.names)
    return names


def test_the_three_lists_name_the_same_things() -> None:
    homes = set(core._HOMES)
    assert _type_checking_names() == homes
    assert set(core.__all__) == homes
    assert len(core.__all__) == len(homes)  # none listed twice


def test_each_name_resolves_to_its_home() -> None:
    for name, home in core._HOMES.items():
        module = importlib.import_module(f"maestro_memory.core.{home}")
        assert getattr(core, name) is getattr(module, name)
