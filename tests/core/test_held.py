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


OLD_WORDS = "Make your changes — add tests, docs, and examples as appropriate."
NEW_WORDS = "Make the change: code, tests, docs, examples."
UNRELATED = "Staging resets every Monday."


def gemini(*bullets: str, sig: str) -> list:  # type: ignore[type-arg]
    return bullet_notes("gemini", "MEMORY.md", "".join(f"- {b}\n" for b in bullets), sig)


def test_a_bullet_the_file_rewrites_replaces_its_old_wording() -> None:
    # In one slot by meaning (0.91) but not certainly one rule: two saves would only link them
    # (both served). The file itself took the old wording out for the new one: replaced.
    linked = memory()
    linked.save_semantic(OLD_WORDS, "project_context", 0.7)
    assert linked.save_semantic(NEW_WORDS, "project_context", 0.7).may_replace is not None

    m = memory()
    m.import_notes(gemini(OLD_WORDS, UNRELATED, sig="1"), ["gemini"])
    report = m.import_notes(gemini(NEW_WORDS, sig="2"), ["gemini"])
    assert [r["action"] for r in report.imported] == ["replaced"]
    assert texts(m) == sorted([NEW_WORDS, UNRELATED])
    # The bullet only deleted, with nothing rewriting it, is flagged, kept: never removed.
    assert [e.text for e in m.semantic_entries() if e.state == "flagged"] == [UNRELATED]
    assert OLD_WORDS in m.docs["archive"].render()
    assert f'Replaced: "{OLD_WORDS}" (by "{NEW_WORDS}": rewritten by its source' in (
        m.docs["semantic"].render()
    )


def test_a_rule_the_person_stated_is_not_the_files_to_rewrite() -> None:
    old = (
        "Install Chromium into the default user-level Playwright cache with "
        "`pnpm run playwright:install`."
    )
    new = "Install Playwright Chromium for agent browser review: `pnpm run playwright:install`"
    m = memory()
    m.import_notes(gemini(old, sig="1"), ["gemini"])
    said = m.detect_semantic_signals(f"Always {old[0].lower()}{old[1:]}")
    assert [s.action for s in said] == ["reinforced"]  # the person's rule now
    unsaid = memory()  # the file's own entry alone: its rewrite replaces it
    unsaid.import_notes(gemini(old, sig="1"), ["gemini"])
    assert [
        r["action"] for r in unsaid.import_notes(gemini(new, sig="2"), ["gemini"]).imported
    ] == ["replaced"]
    report = m.import_notes(gemini(new, sig="2"), ["gemini"])
    assert [r["action"] for r in report.imported] == ["added"]  # linked for review
    (kept,) = [e for e in m.semantic_entries() if e.id == said[0].entry_id]
    assert kept.superseded_by is not None and len(m.semantic_entries()) == 2


def test_a_bullet_restated_in_new_words_takes_them() -> None:
    old, new = "**CodeBuddy**: `codebuddy` CLI", "**CodeBuddy CLI**: `codebuddy` CLI"
    m = memory()
    m.import_notes(gemini(old, sig="1"), ["gemini"])
    report = m.import_notes(gemini(new, sig="2"), ["gemini"])
    assert [r["action"] for r in report.imported] == ["reinforced"]  # the same rule
    assert texts(m) == [new]  # in the words the file uses now, not its old ones
    assert f'Reworded: "{old}" (restated as "{new}")' in m.docs["semantic"].render()
