"""Sizes a newcomer can read, checked from the source (issue 26): no module of the package
folders over 800 lines, no class over 300. A rule that needs more is split by concern (as
``core/memory.py`` into state and rule modules, ``core/signals.py`` into detector and patterns)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "common", "daemon", "client", "ui")
MODULE_LIMIT = 800  # lines
CLASS_LIMIT = 300  # lines, decorators excluded, docstring and methods included


def modules() -> list[Path]:
    return sorted(p for folder in PACKAGES for p in (REPO / folder).rglob("*.py"))


def class_sizes() -> dict[str, int]:
    out: dict[str, int] = {}
    for path in modules():
        rel = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                out[f"{rel}:{node.name}"] = node.end_lineno - node.lineno + 1
    return out


def test_the_scan_sees_every_package() -> None:
    found = {p.relative_to(REPO).parts[0] for p in modules()}
    assert found == set(PACKAGES)
    assert "core/memory.py:Memory" in class_sizes()


def test_no_module_over_800_lines() -> None:
    sizes = {
        p.relative_to(REPO).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
        for p in modules()
    }
    over = {name: n for name, n in sizes.items() if n > MODULE_LIMIT}
    assert not over, f"modules over {MODULE_LIMIT} lines: {over}"


def test_no_class_over_300_lines() -> None:
    over = {name: n for name, n in class_sizes().items() if n > CLASS_LIMIT}
    assert not over, f"classes over {CLASS_LIMIT} lines: {over}"
