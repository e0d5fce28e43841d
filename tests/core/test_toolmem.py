"""The import rule of core/toolmem.py over a real Memory: weighed, screened by the one screen,
one entry per source, never served back to the tool it came from; and the bounded lock the
session-start hook's import takes."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from maestro_memory.core import MemoryStore
from maestro_memory.core.fsio import LockBusy, open_folder, project_lock
from maestro_memory.core.memory import Memory
from maestro_memory.core.toolmem import bullet_notes, claude_note


def fact_file(fact: str, kind: str = "project") -> str:
    return f"---\nname: n\ndescription: d\nmetadata:\n  type: {kind}\n---\n\n{fact}\n"


def memory() -> Memory:
    return Memory.load({}, today="2026-03-01")


def test_a_credential_anywhere_in_the_file_blocks_it_whole() -> None:
    text = fact_file("The deploy uses the staging bucket.") + (
        "\n**Why:** the token is ghp_0123456789abcdefghijABCDEFGHIJ012345\n"
    )
    note = claude_note("reference_deploy.md", text, "1:1")
    assert "github token" in note.blocked and note.blocked.endswith("not imported")
    m = memory()
    report = m.import_notes([note], ["claude"])
    assert report.imported == [] and report.blocked[0]["src"] == "claude:reference_deploy.md"
    assert m.semantic_entries() == []


def test_private_spans_never_reach_the_entry() -> None:
    note = claude_note("p.md", fact_file("Use port 8080 <private>on my home box</private>."), "1")
    assert note.text == "Use port 8080 ." and not note.blocked
    (only,) = bullet_notes("gemini", "MEMORY.md", "- <private>all of it</private>\n", "1")
    assert only.blocked.startswith("no text to import")


def test_our_own_injected_block_copied_into_a_memory_is_not_imported() -> None:
    block = "[Project Memory]\n- Use pnpm\n[End Project Memory]\n"
    note = claude_note("x.md", fact_file(block + "Deploys go through the release branch."), "1")
    assert note.text == "Deploys go through the release branch."
    gemini = bullet_notes("gemini", "MEMORY.md", block + "- Tests run in CI only\n", "1")
    assert [n.text for n in gemini] == ["Tests run in CI only"]


def test_one_entry_per_source_with_its_origin_and_weight() -> None:
    m = memory()
    note = claude_note("feedback_tabs.md", fact_file("Indent with tabs.", "feedback"), "1:1")
    first = m.import_notes([note], ["claude"])
    (entry,) = m.semantic_entries()
    assert entry.origin == "claude:feedback_tabs.md" and entry.source is None  # not stated
    assert entry.confidence == 0.7 and entry.category == "quality_rule"
    assert first.imported[0]["entry_id"] == entry.id
    again = m.import_notes([note], ["claude"])
    assert again.unchanged == 1 and len(m.semantic_entries()) == 1


def test_context_for_a_tool_leaves_out_its_own_through_the_one_exclude_set() -> None:
    m = memory()
    notes = [
        claude_note("a.md", fact_file("Staging resets every Monday."), "1"),
        *bullet_notes("gemini", "MEMORY.md", "- Staging runs Postgres 16\n", "1"),
    ]
    m.import_notes(notes, ["claude", "gemini"])
    task = "what happens to staging"
    everyone = m.build_context(task=task).context
    for_claude = m.build_context(task=task, for_tool="claude").context
    for_gemini = m.build_context(task=task, for_tool="gemini").context
    assert "Monday" in everyone and "Postgres" in everyone
    assert "Monday" not in for_claude and "Postgres" in for_claude
    assert "Monday" in for_gemini and "Postgres" not in for_gemini
    # with unseen_only too: one exclude set, both reasons
    shown = m.build_context(task=task, session_id="s1", unseen_only=True, for_tool="claude")
    assert "Monday" not in shown.context and "Postgres" in shown.context
    with pytest.raises(ValueError, match="for_tool must be one of"):
        m.build_context(for_tool="vim")


def test_the_lock_wait_is_bounded_by_a_deadline(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.initialize("setup")
    fd = os.open(store.memory_dir / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        with (
            pytest.raises(LockBusy, match="held by another writer"),
            open_folder(store.memory_dir) as folder,
            project_lock(folder, deadline=started + 0.2),
        ):
            pass
        assert time.monotonic() >= started + 0.2  # it did wait, up to the deadline
        bounded = MemoryStore(tmp_path, lock_deadline=time.monotonic())
        with pytest.raises(LockBusy):
            bounded.save_semantic("Never reached", "quality_rule")
    finally:
        os.close(fd)
    assert MemoryStore(tmp_path).semantic_entries() == []  # nothing was written
    with (
        open_folder(store.memory_dir) as folder,
        project_lock(folder, deadline=time.monotonic()),  # free: taken at once
    ):
        pass


def test_the_index_points_to_files_in_the_lines_claude_code_loads() -> None:
    from maestro_memory.core.toolmem import CLAUDE_INDEX_LOADED, index_targets

    lines = ["# Memory", "- [Tabs](feedback_tabs.md) — tabs", "* [x](./project_x.md)"]
    lines += ["- plain line, no link", "- [web](https://example.com/a.html)"]
    lines += [f"- filler {n}" for n in range(CLAUDE_INDEX_LOADED)]
    lines.append("- [Late](feedback_late.md) — past what Claude Code loads")
    assert index_targets("\n".join(lines)) == ["feedback_tabs.md", "project_x.md"]


def test_only_what_the_index_points_to_is_left_out_for_claude() -> None:
    m = memory()
    notes = [
        claude_note("a.md", fact_file("Staging resets every Monday."), "1"),
        claude_note("b.md", fact_file("Deploys freeze on Fridays."), "1"),
    ]
    m.import_notes(notes, ["claude"], {"claude": {"sig": "9:1", "files": ["a.md"]}})
    block = m.build_context(task="staging resets and deploys freeze", for_tool="claude").context
    assert "Monday" not in block and "Fridays" in block
    again = m.import_notes(notes, ["claude"], {"claude": {"sig": "", "files": []}})
    assert again.unchanged == 2
    block = m.build_context(task="staging resets and deploys freeze", for_tool="claude").context
    assert "Monday" in block and "Fridays" in block


def test_a_fact_we_injected_that_a_tool_saves_again_does_not_reinforce_itself() -> None:
    m = memory()
    ours = m.save_semantic("Staging resets every Monday.", "project_context", 0.8).entry
    assert ours is not None
    shown = m.build_context(session_id="s1")  # injected into a session
    m.reinforce_referenced(shown.relevant, "s1")
    before = {e.id: (e.confidence, e.origin) for e in m.semantic_entries()}
    notes = [  # the tool's model kept what we gave it, in two files, and another tool too
        claude_note("project_staging.md", fact_file("Staging resets every Monday."), "1"),
        claude_note("project_staging2.md", fact_file("Staging resets every Monday."), "1"),
        *bullet_notes("gemini", "MEMORY.md", "- Staging resets every Monday.\n", "1"),
    ]
    report = m.import_notes(notes, ["claude", "gemini"])
    assert [r["action"] for r in report.imported] == ["echoed"] * 3
    assert {e.id: (e.confidence, e.origin) for e in m.semantic_entries()} == before
    assert m.import_notes(notes, ["claude", "gemini"]).unchanged == 3
    # The tool deletes its copies: nothing of ours is flagged.
    assert m.import_notes([], ["claude", "gemini"]).flagged == []
    assert [e.state for e in m.semantic_entries()] == ["active"]

    # A fact never injected that two files hold: an independent restatement still counts.
    fresh = [
        claude_note("a.md", fact_file("Deploys freeze on Fridays."), "1"),
        claude_note("b.md", fact_file("Deploys freeze on Fridays."), "1"),
    ]
    m.import_notes(fresh, ["claude"])
    (friday,) = [e for e in m.semantic_entries() if "Fridays" in e.text]
    assert friday.confidence == 0.8  # 0.70, restated once by the second file
