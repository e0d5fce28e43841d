"""The API door (``MemoryStore``): secrets and ``<private>`` spans never reach the files;
``forget`` removes an entry and every copy of its text, and logs only the id."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from privacy_samples import SECRETS

from maestro_memory.core import MemoryStore, NotFoundError, RejectedError


def files_text(root: Path) -> str:
    """Every file under the project's .maestro/, concatenated (the grep of the issue)."""
    out = []
    for path in sorted((root / ".maestro").rglob("*")):
        if path.is_file():
            out.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(out)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path, clock=lambda: "2026-12-03")


@pytest.mark.parametrize(("sentence", "value"), SECRETS, ids=[v[:12] for _, v in SECRETS])
def test_a_semantic_fact_with_a_secret_is_rejected_and_nothing_written(
    store: MemoryStore, sentence: str, value: str
) -> None:
    result = store.save_semantic(sentence, "project_context", 1.0)
    assert result.action == "rejected" and result.entry is None
    assert "contains a secret" in result.reason and value not in result.reason
    assert store.semantic_entries() == []
    assert value not in files_text(store.root)


def test_the_issue_prompt_stores_nothing_of_its_secrets(store: MemoryStore) -> None:
    prompt = (
        "Remember that the staging database password is hunter2 and the deploy key is "
        "AKIAZ7QX2M4N5P6R8T3V"
    )
    signals = store.detect_semantic_signals(prompt)
    assert [s.action for s in signals] == ["rejected"]
    assert "hunter2" not in signals[0].fact and "AKIA" not in signals[0].fact
    text = files_text(store.root)
    assert "hunter2" not in text and "AKIAZ7QX2M4N5P6R8T3V" not in text


def test_an_episodic_context_keeps_its_words_and_loses_the_secret(store: MemoryStore) -> None:
    entry = store.save_episodic(
        "Fixed the deploy; the token: 9f8e7d6c5b4a was rotated after AKIAZ7QX2M4N5P6R8T3V leaked",
        "sess-1",
    )
    assert "9f8e7d6c5b4a" not in entry.text and "AKIA" not in entry.text
    assert "[redacted: token]" in entry.text and "[redacted: aws key]" in entry.text
    text = files_text(store.root)
    assert "Fixed the deploy" in text
    assert "9f8e7d6c5b4a" not in text and "AKIAZ7QX2M4N5P6R8T3V" not in text


def test_private_spans_are_not_saved_anywhere(store: MemoryStore) -> None:
    result = store.save_semantic(
        "Always deploy from the release branch <private>on host db7.corp.internal</private>",
        "quality_rule",
        1.0,
    )
    assert result.action == "added"
    assert result.entry is not None
    assert result.entry.text == "Always deploy from the release branch"
    store.save_episodic("Met with <PRIVATE>Alice about her\nsalary</PRIVATE> the team", "s")
    signals = store.detect_semantic_signals("<private>Always use the vault at db7.corp</private>")
    assert signals == []
    text = files_text(store.root)
    for word in ("db7.corp", "Alice", "salary", "<private>", "PRIVATE"):
        assert word not in text


def test_an_entirely_private_text_produces_no_memory(store: MemoryStore) -> None:
    result = store.save_semantic("<private>Always use port 6543</private>", "project_context", 1)
    assert result.action == "rejected" and "private" in result.reason
    with pytest.raises(RejectedError, match="entirely <private>"):
        store.save_episodic("<private>the whole session\nwas about this", "s")
    assert store.semantic_entries() == [] and store.episodic_entries() == []
    assert "6543" not in files_text(store.root)


def test_a_hand_written_secret_is_not_copied_into_the_archive_or_the_log(
    store: MemoryStore,
) -> None:
    store.save_semantic("Always use pnpm", "quality_rule", 1.0)
    semantic = store.memory_dir / "semantic.md"
    # Typed in by hand before the screen existed, then contradicted by hand (0.00): maintenance
    # archives it (it was once at 0.90) and logs the archiving.
    semantic.write_text(
        semantic.read_text().replace(
            "## Quality Rules\n",
            "## Quality Rules\n"
            "- [2026-12-01] [0.00] the vault password is Gr33nTea! "
            "<!-- mm:id=s-abcdef12 o=0.9 -->\n",
        ),
        encoding="utf-8",
    )
    store.memory_maintenance()
    archive = (store.memory_dir / "archive.md").read_text()
    log = semantic.read_text()
    assert "Gr33nTea!" not in archive and "Gr33nTea!" not in log.split("## Maintenance Log")[1]
    assert "[redacted: password]" in archive


def test_forget_removes_the_entry_and_every_quotation_of_its_text(store: MemoryStore) -> None:
    first = store.save_semantic("Use the bastion host nebula-7 for ssh", "project_context", 0.9)
    assert first.entry is not None
    # Replaced: the old text goes to the archive and is quoted in the log and the note.
    second = store.save_semantic("Use the bastion host nebula-9 for ssh", "project_context", 0.9)
    assert second.action == "replaced" and second.entry is not None
    assert "nebula-7" in files_text(store.root)

    report = store.forget(first.entry.id)
    assert [e.id for e in report.forgotten] == [first.entry.id]
    report = store.forget(second.entry.id)
    text = files_text(store.root)
    assert "nebula-7" not in text and "nebula-9" not in text
    semantic_log = (store.memory_dir / "semantic.md").read_text().split("## Maintenance Log")[1]
    archive_log = (store.memory_dir / "archive.md").read_text().split("## Maintenance Log")[1]
    # The replaced rule lived only in the archive: its line goes to the archive's log.
    assert f"- [2026-12-03] Forgotten: {first.entry.id} (forgotten by request)" in archive_log
    assert f"Forgotten: {second.entry.id} (forgotten by request)" in semantic_log
    assert store.semantic_entries() == []


def test_forget_episodic_and_dry_run(store: MemoryStore) -> None:
    entry = store.save_episodic("Debugged the flaky payment webhook", "s1")
    before = files_text(store.root)
    report = store.forget([entry.id], dry_run=True)
    assert report.dry_run and [e.id for e in report.forgotten] == [entry.id]
    assert files_text(store.root) == before
    store.forget(entry.id)
    assert "payment webhook" not in files_text(store.root)
    assert store.episodic_entries() == []


def test_forget_an_unknown_id_is_an_error_and_changes_nothing(store: MemoryStore) -> None:
    kept = store.save_semantic("Always run the linter", "quality_rule", 1.0)
    assert kept.entry is not None
    before = files_text(store.root)
    with pytest.raises(NotFoundError, match="s-00000000"):
        store.forget([kept.entry.id, "s-00000000"])
    assert files_text(store.root) == before


def test_matching_finds_live_and_archived_entries(store: MemoryStore) -> None:
    store.save_semantic("Use the bastion host nebula-7 for ssh", "project_context", 0.9)
    store.save_semantic("Use the bastion host nebula-9 for ssh", "project_context", 0.9)
    found = store.matching("NEBULA")
    assert sorted(e.text for e in found) == [
        "Use the bastion host nebula-7 for ssh",
        "Use the bastion host nebula-9 for ssh",
    ]
