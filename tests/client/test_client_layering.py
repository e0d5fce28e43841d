"""The layers, read from the source: the client never imports the daemon, and the shared layer
(``common``) imports neither of them. Scans every import statement, deferred ones included."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def imported_packages(folder: Path) -> dict[str, set[str]]:
    """``{file: {absolute maestro_memory package it imports}}`` for every .py under folder."""
    out: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(REPO)
        package = ["maestro_memory", *rel.parts[:-1]]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                    if node.module is None:
                        found.update(f"{module}.{alias.name}" for alias in node.names)
                    else:
                        found.add(module)
                elif node.module:
                    found.add(node.module)
        out[str(rel)] = {m for m in found if m.startswith("maestro_memory.")}
    return out


def offenders(folder: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    bad: dict[str, list[str]] = {}
    for file, modules in imported_packages(REPO / folder).items():
        hits = sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden))
        if hits:
            bad[file] = hits
    return bad


def test_the_scanner_sees_relative_and_deferred_imports() -> None:
    # daemon/writer.py imports the shared layer relatively: the scanner must resolve that.
    assert (
        "maestro_memory.common.protocol" in imported_packages(REPO / "daemon")["daemon/writer.py"]
    )


def test_the_client_imports_nothing_from_the_daemon() -> None:
    assert offenders("client", ("maestro_memory.daemon",)) == {}


def test_the_shared_layer_imports_neither_client_nor_daemon() -> None:
    assert offenders("common", ("maestro_memory.daemon", "maestro_memory.client")) == {}
