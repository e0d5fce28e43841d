"""A restatement that says all of the old rule and more keeps the newer wording
(``contradiction.widens``): before, "Run the unit tests before committing" reinforced "Run the
tests before committing" and the older, vaguer line stayed the one served; in the history
replay, files that grew a rule's line kept serving the line they no longer held. Real Memory,
the real rules, the shipped meaning model."""

from __future__ import annotations

import pytest

from maestro_memory.core.contradiction import widens
from maestro_memory.core.memory import Memory

OLD = "Run the tests before committing"
NEW = "Run the unit tests before committing"


pytestmark = pytest.mark.usefixtures("meaning_layer")  # as the daemon saves


def test_widens_holds_every_old_word_and_adds_one_that_is_not_a_negation() -> None:
    assert widens(OLD, NEW)
    assert widens("Used by: Gemini, Qwen", "used by: Gemini, Qwen, Tabnine")
    assert not widens(OLD, OLD)  # nothing added
    assert not widens(OLD, "Run the tests")  # words dropped
    assert not widens(OLD, "Run the tests before committing, never")  # a negation added
    assert not widens(OLD, "Don\u2019t run the tests before committing")  # curly apostrophe too
    assert not widens("", NEW)


def test_a_wider_restatement_rewords_the_entry_and_logs_it() -> None:
    m = Memory.load({}, today="2026-03-01")
    first = m.save_semantic(OLD, "project_context", 0.9).entry
    assert first is not None
    again = m.save_semantic(NEW, "project_context", 0.9)
    assert again.action == "reinforced"
    assert again.entry is not None and again.entry.id == first.id
    assert [e.text for e in m.semantic_entries()] == [NEW]
    log = m.docs["semantic"].render()
    assert f'Reworded: "{OLD}" (restated as "{NEW}")' in log


def test_a_narrower_restatement_keeps_the_wording_it_had() -> None:
    m = Memory.load({}, today="2026-03-01")
    m.save_semantic(NEW, "project_context", 0.9)
    assert m.save_semantic(OLD, "project_context", 0.9).action == "reinforced"
    assert [e.text for e in m.semantic_entries()] == [NEW]


def test_an_entry_its_source_still_holds_keeps_its_wording() -> None:
    # A file that keeps both lines: the older one is still what it says.
    m = Memory.load({}, today="2026-03-01")
    first = m.save_semantic(OLD, "project_context", 0.9).entry
    assert first is not None
    again = m.save_semantic(NEW, "project_context", 0.9, held={first.id})
    assert again.action == "reinforced"
    assert [e.text for e in m.semantic_entries()] == [OLD]


PNPM = "pnpm everywhere except `.opencode-plugin/`, which uses Bun. Never npm, never yarn."
PNPM_MORE = (
    "pnpm everywhere except `.opencode-plugin/` (Bun) and `strands-mem0/` (Python: pip / hatch)."
    " Never npm, never yarn."
)


def test_a_restatement_with_a_value_the_entry_lacks_is_linked_not_merged() -> None:
    # A real edit (mem0's AGENTS.md): read as the same rule, reinforcing would drop
    # `strands-mem0/`. Linked: both kept, the newer served, the older waits in review.
    m = Memory.load({}, today="2026-03-01")
    first = m.save_semantic(PNPM, "project_context", 0.9).entry
    assert first is not None
    again = m.save_semantic(PNPM_MORE, "project_context", 0.9)
    assert again.action == "added" and again.may_replace == first.id
    assert "other values" in again.reason
    assert sorted(e.text for e in m.semantic_entries()) == sorted([PNPM, PNPM_MORE])


def test_beside_a_rule_its_source_keeps_it_stands_on_its_own() -> None:
    m = Memory.load({}, today="2026-03-01")
    first = m.save_semantic(PNPM, "project_context", 0.9).entry
    assert first is not None
    again = m.save_semantic(PNPM_MORE, "project_context", 0.9, held={first.id})
    assert again.action == "added" and again.may_replace is None
    assert len(m.semantic_entries()) == 2


def test_a_line_a_person_typed_keeps_their_words() -> None:
    # A line typed into semantic.md (no metadata: by=hand) is the person's; an agent's wider
    # restatement reinforces it and leaves its wording alone.
    empty = Memory.load({}, today="2026-03-01").docs["semantic"].render()
    typed = empty.replace("## Project Context\n", f"## Project Context\n- {OLD}\n", 1)
    assert typed != empty
    m = Memory.load({"semantic.md": typed}, today="2026-03-01")
    [entry] = m.semantic_entries()
    assert entry.source == "hand"
    again = m.save_semantic(NEW, "project_context", 0.9)
    assert again.action == "reinforced" and again.entry is not None
    assert again.entry.id == entry.id
    assert [e.text for e in m.semantic_entries()] == [OLD]
    assert "Reworded" not in m.docs["semantic"].render()


def test_the_persons_stated_rule_is_reworded_only_by_as_strong_a_restatement() -> None:
    m = Memory.load({}, today="2026-03-01")
    [said] = m.detect_semantic_signals(f"Always {OLD.lower()}")  # 1.0, by=user
    assert said.entry_id is not None
    [entry] = m.semantic_entries()
    assert entry.source == "user" and entry.confidence == 1.0
    weaker = m.save_semantic(f"Always {NEW.lower()}", entry.category or "", 0.5)
    assert weaker.action == "reinforced"
    assert [e.text for e in m.semantic_entries()] == [entry.text]  # not reworded at 0.5
    stronger = m.save_semantic(f"Always {NEW.lower()}", entry.category or "", 1.0)
    assert stronger.action == "reinforced"
    assert [e.text for e in m.semantic_entries()] == [f"Always {NEW.lower()}"]
