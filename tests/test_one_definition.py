"""Each small fact of the memory model is written once (issue 26), checked from the source of
the package folders: the category list and the memory file names (``common/layout.py``), every
word list and the code-span pattern (``core/lexicon.py``), the context budget
(``common/limits.py``) and the tools' event names (``common/hookio.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from maestro_memory.common import hookio, layout, limits
from maestro_memory.core import lexicon
from maestro_memory.core.model import CATEGORIES, CATEGORY_HEADINGS

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "common", "daemon", "client", "ui")

# Repeats still waiting to be removed; the test insists each is still there, so removing one
# removes it from here too.
PENDING: dict[str, set[str]] = {
    "category list": set(),
    "memory file names": set(),
}


# Not the list but facts keyed by or ordered over it: the signal detector's keyword group per
# category (CATEGORY_WORDS), the category each pattern kind implies (KIND_DEFAULT) and which
# category wins a tie (TIE_ORDER: a priority, not the file order).
KEYED_BY_CATEGORY = {"core/signal_patterns.py": 3}


def trees() -> dict[str, ast.Module]:
    return {
        p.relative_to(REPO).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
        for folder in PACKAGES
        for p in sorted((REPO / folder).rglob("*.py"))
    }


def string_groups(tree: ast.Module) -> list[tuple[int, set[str]]]:
    """The string constants of every collection literal (tuple, list, set, dict keys and values, a
    subscript such as ``Literal[...]``), with its line."""
    out = []
    for node in ast.walk(tree):
        elts: list[ast.expr | None] = []
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            elts = list(node.elts)
        elif isinstance(node, ast.Dict):
            elts = [*node.keys, *node.values]
        groups = {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        if groups:
            out.append((node.lineno, groups))
    return out


def places(fact: set[str]) -> dict[str, list[int]]:
    """Where a collection literal holds every string of ``fact``."""
    found: dict[str, list[int]] = {}
    for rel, tree in trees().items():
        lines = [line for line, group in string_groups(tree) if fact <= group]
        if lines:
            found[rel] = lines
    return found


def check_once(name: str, found: dict[str, list[int]], home: str) -> None:
    assert home in found, f"the {name} is no longer defined in {home}"
    assert len(found[home]) == 1, f"the {name} is written twice in {home}: lines {found[home]}"
    keyed = KEYED_BY_CATEGORY if name == "category list" else {}
    for rel, count in keyed.items():
        assert len(found.pop(rel, [])) == count, f"{rel}: expected {count} tables keyed by {name}"
    others = set(found) - {home}
    assert others <= PENDING.get(name, set()), (
        f"the {name} is written again in: {sorted(others - PENDING.get(name, set()))}; "
        f"import it from {home}"
    )
    stale = PENDING.get(name, set()) - others
    assert not stale, f"no longer repeated there, remove from PENDING[{name!r}]: {sorted(stale)}"


def test_the_category_list_is_defined_once() -> None:
    assert tuple(CATEGORY_HEADINGS) == CATEGORIES
    assert CATEGORY_HEADINGS is layout.CATEGORY_HEADINGS
    check_once("category list", places(set(CATEGORIES)), "common/layout.py")
    check_once("category headings", places(set(CATEGORY_HEADINGS.values())), "common/layout.py")


def test_the_memory_file_names_are_defined_once() -> None:
    names = {*layout.MEMORY_FILES.values()}
    check_once("memory file names", places(names), "common/layout.py")
    # No module of the packages types a file name out as a string of its own.
    spelled: dict[str, list[int]] = {}
    for rel, tree in trees().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in {*names, layout.STATE_FILE}:
                spelled.setdefault(rel, []).append(node.lineno)
    allowed = {"common/layout.py", *PENDING["memory file names"]}
    assert set(spelled) <= allowed, {k: v for k, v in spelled.items() if k not in allowed}


def word_list_literals(tree: ast.Module) -> list[tuple[int, list[str]]]:
    """``frozenset("a b c".split())`` and ``frozenset({"a", "b"})``: a word list, written out."""
    out = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("frozenset", "set")
            and node.args
        ):
            continue
        arg = node.args[0]
        if (
            isinstance(arg, ast.Call)
            and isinstance(arg.func, ast.Attribute)
            and arg.func.attr == "split"
            and isinstance(arg.func.value, ast.Constant)
            and isinstance(arg.func.value.value, str)
        ):
            out.append((node.lineno, arg.func.value.value.split()))
        elif isinstance(arg, ast.Set | ast.List | ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in arg.elts
        ):
            out.append((node.lineno, [e.value for e in arg.elts if isinstance(e, ast.Constant)]))
    return out


LEXICON_LISTS = sorted(
    name for name in lexicon.__all__ if isinstance(getattr(lexicon, name), frozenset | tuple | dict)
)


def test_every_word_list_of_core_lives_in_the_lexicon() -> None:
    elsewhere = {
        rel: [line for line, _ in word_list_literals(tree)]
        for rel, tree in trees().items()
        if rel.startswith("core/") and rel != "core/lexicon.py" and word_list_literals(tree)
    }
    assert not elsewhere, f"word lists outside core/lexicon.py: {elsewhere}"
    assert len(word_list_literals(trees()["core/lexicon.py"])) >= len(LEXICON_LISTS) - 2


@pytest.mark.parametrize("name", LEXICON_LISTS)
def test_each_lexicon_list_is_assigned_once(name: str) -> None:
    """No module assigns the list again (under its name or its old private name)."""
    assigned = []
    for rel, tree in trees().items():
        for node in ast.walk(tree):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if isinstance(target, ast.Name) and target.id.lstrip("_") == name:
                    assigned.append(rel)
    assert assigned == ["core/lexicon.py"], assigned


def test_no_two_lexicon_lists_hold_the_same_words() -> None:
    seen: dict[frozenset[str], str] = {}
    for name in LEXICON_LISTS:
        words = frozenset(getattr(lexicon, name))
        assert words not in seen, f"{name} and {seen[words]} hold the same words"
        seen[words] = name
    # The determiners are the stop words' own (composed, not retyped).
    assert lexicon.DETERMINERS <= lexicon.STOP_WORDS


def constants(value: object) -> dict[str, list[int]]:
    """Where the packages write ``value`` as a literal."""
    found: dict[str, list[int]] = {}
    for rel, tree in trees().items():
        for node in ast.walk(tree):
            same = isinstance(node, ast.Constant) and type(node.value) is type(value)
            if same and node.value == value:
                found.setdefault(rel, []).append(node.lineno)
    return found


def test_the_code_span_pattern_is_written_once() -> None:
    assert constants(lexicon.CODE_SPAN.pattern) == {"core/lexicon.py": [lexicon_line()]}


def lexicon_line() -> int:
    source = (REPO / "core" / "lexicon.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(source, 1) if line.startswith("CODE_SPAN = "))


def test_the_context_budget_is_written_once() -> None:
    found = constants(limits.CONTEXT_MAX_TOKENS)
    assert "common/limits.py" in found
    # Other 500s that are not the budget: the import's file cap, the socket's linger (ms) and
    # the viewer's HTTP status.
    others = {"common/toolsources.py", "daemon/server.py", "ui/app.py"}
    assert set(found) - {"common/limits.py"} <= others, found


def test_the_tools_event_names_are_written_once() -> None:
    names = {n for table in hookio.TOOL_EVENT_NAMES.values() for n in table.values()}
    found = {rel: lines for name in names for rel, lines in constants(name).items()}
    # Codex's settings also key its own snake_case table (its config file's words) by them.
    assert set(found) <= {"common/hookio.py", "client/integrations/codex_settings.py"}, found
