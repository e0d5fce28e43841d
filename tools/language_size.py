"""The size of the language code (issue 34, point 5): the modules that judge rules and
signals by their words, counted the same way every time.

    python tools/language_size.py [--json]

For each module: lines, regular-expression sites (``re.compile(`` plus direct ``re.<fn>(``
calls) and listed words (the words inside string literals of its word lists: every
whitespace-separated word of a string literal of two words or more, plus one-word literals
inside a set, tuple, list or dict display). The share is against all of ``core/``.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = (
    "core/contradiction.py",
    "core/related.py",
    "core/merge.py",
    "core/rule_reading.py",
    "core/lexicon.py",
    "core/anchors.py",
    "core/frame.py",
    "core/durable.py",
    "core/signals.py",
    "core/signal_patterns.py",
    "core/signal_context.py",
    "core/signal_languages.py",
)
_RE_SITE = re.compile(r"\bre\.(?:compile|search|match|fullmatch|sub|subn|split|findall|finditer)\(")


def _listed_words(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [*(k for k in node.keys if k is not None), *node.values]
        else:
            continue
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                count += len(item.value.split())
    for node in ast.walk(tree):  # "a b c".split() word lists
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            count += len(node.func.value.value.split())
    return count


def measure(path: Path) -> dict[str, int]:
    text = path.read_text(encoding="utf-8")
    return {
        "lines": len(text.splitlines()),
        "regex_sites": len(_RE_SITE.findall(text)),
        "listed_words": _listed_words(ast.parse(text)),
    }


def main(argv: list[str]) -> int:
    rows = {name: measure(ROOT / name) for name in LANGUAGE if (ROOT / name).is_file()}
    total = {k: sum(r[k] for r in rows.values()) for k in ("lines", "regex_sites", "listed_words")}
    core_lines = sum(len(p.read_text().splitlines()) for p in (ROOT / "core").rglob("*.py"))
    if "--json" in argv:
        print(json.dumps({"modules": rows, "total": total, "core_lines": core_lines}, indent=1))
        return 0
    for name, r in rows.items():
        print(
            f"{name:28} {r['lines']:5} lines {r['regex_sites']:4} regex {r['listed_words']:5} words"
        )
    print(
        f"{'total':28} {total['lines']:5} lines {total['regex_sites']:4} regex "
        f"{total['listed_words']:5} words ({total['lines'] / core_lines:.0%} of core/'s "
        f"{core_lines} lines)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
