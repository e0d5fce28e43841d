"""The read view is rebuilt incrementally (issue 36): after a commit, the entries nothing
changed are the same values as before, and every changed one is read again."""

from __future__ import annotations

from maestro_memory.core.memory import Memory


def committed(memory: Memory) -> Memory:
    memory.mark_clean()  # what the commit does: the documents now equal the files
    return memory


def test_unchanged_entries_are_reused_and_changed_ones_read_again() -> None:
    memory = Memory.load({}, today="2026-01-01")
    for word in ("alpha", "bravo", "charlie", "delta", "echo"):
        memory.save_semantic(f"{word}q {word}k {word}z", "project_context", 0.9)
    first = {e.id: e for e in committed(memory).view().semantic}
    memory.save_semantic("foxtrotq foxtrotk foxtrotz", "project_context", 0.9)
    target = next(iter(first))
    memory.reinforce(target, confirmed=True)
    second = {e.id: e for e in committed(memory).view().semantic}
    assert len(second) == 6
    for entry_id, before in first.items():
        if entry_id == target:
            assert second[entry_id] is not before
            assert second[entry_id].confidence > before.confidence, second[entry_id]
        else:
            assert second[entry_id] is before  # reused: no new value for an unchanged block


def test_a_change_not_yet_committed_is_seen() -> None:
    memory = Memory.load({}, today="2026-01-01")
    memory.save_semantic("Always lint before pushing", "quality_rule", 0.8)
    (before,) = committed(memory).view().semantic
    memory.reinforce(before.id, confirmed=True)  # dirty: not yet rendered by a commit
    (during,) = memory.view().semantic
    assert during.confidence > before.confidence
    (after,) = committed(memory).view().semantic
    assert after.confidence == during.confidence
