"""What a source still holds stands side by side (``save_semantic``'s ``held``): rules said in
one message, or kept in one tool file, never replace nor link each other. Before, a person who
said "Use camelCase for variables/functions. Use PascalCase for types/classes." kept only the
second (a "changed value"), and the history replay lost 105 rules of final files that way.
Real Memory, the real prompt door and import rule, the shipped meaning model."""

from __future__ import annotations

import pytest

from maestro_memory.core.memory import Memory
from maestro_memory.core.toolmem import bullet_notes

SIBLINGS = ("Use camelCase for variables/functions", "Use PascalCase for types/classes")
TIERS = ("The default tier must have `priority: 0`", "The default tier must have `conditions: []`")


pytestmark = pytest.mark.usefixtures("meaning_layer")  # as the daemon saves


def memory() -> Memory:
    return Memory.load({}, today="2026-03-01")


def texts(m: Memory) -> list[str]:
    return sorted(e.text for e in m.semantic_entries())


def test_two_rules_in_one_message_are_both_kept() -> None:
    m = memory()
    said = m.detect_semantic_signals(f"{SIBLINGS[0]}. {SIBLINGS[1]}.")
    assert [s.action for s in said] == ["added", "added"]
    assert texts(m) == sorted(SIBLINGS)
    assert all(e.superseded_by is None and e.may_replace is None for e in m.semantic_entries())


def test_a_later_message_still_replaces() -> None:
    m = memory()
    m.detect_semantic_signals("Always use pnpm.")
    (said,) = m.detect_semantic_signals("Use yarn, not pnpm.")
    assert said.action == "replaced"
    assert texts(m) == [said.fact]


def test_the_same_saves_one_at_a_time_replace_and_held_keeps_both() -> None:
    alone = memory()
    alone.save_semantic(TIERS[0], "project_context", 0.9)
    assert alone.save_semantic(TIERS[1], "project_context", 0.9).action == "replaced"
    together = memory()
    first = together.save_semantic(TIERS[0], "project_context", 0.9).entry
    assert first is not None
    second = together.save_semantic(TIERS[1], "project_context", 0.9, held={first.id})
    assert second.action == "added" and second.may_replace is None
    assert texts(together) == sorted(TIERS)


def test_held_does_not_stop_a_restatement() -> None:
    m = memory()
    first = m.save_semantic("Always use pnpm", "project_context", 0.9).entry
    assert first is not None
    again = m.save_semantic("Always use pnpm.", "project_context", 0.9, held={first.id})
    assert again.action == "reinforced" and len(m.semantic_entries()) == 1


def test_one_tool_file_keeps_both_and_an_edit_of_it_still_replaces() -> None:
    m = memory()
    listed = "".join(f"- {t}\n" for t in TIERS)
    m.import_notes(bullet_notes("gemini", "GEMINI.md", listed, "1"), ["gemini"])
    assert texts(m) == sorted(TIERS)
    # Kept in the file across imports: a new line beside them replaces neither.
    grown = listed + "- The default tier must have `weight: 1`\n"
    m.import_notes(bullet_notes("gemini", "GEMINI.md", grown, "2"), ["gemini"])
    assert len(m.semantic_entries()) == 3
    assert all(e.superseded_by is None for e in m.semantic_entries())
    # The file changes a line: the old one is no longer held, so its rewrite replaces it.
    edited = grown.replace("`priority: 0`", "`priority: 1`")
    m.import_notes(bullet_notes("gemini", "GEMINI.md", edited, "3"), ["gemini"])
    assert "The default tier must have `priority: 1`" in texts(m)
    assert TIERS[0] not in texts(m) and len(m.semantic_entries()) == 3
