"""Every operation of the public API, against the spec's numbers and the issue's readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from maestro_memory.core import MemoryStore, NotFoundError, RejectedError, Settings

DAY = "2026-12-02"
SESSION = Settings(decay_unit="session", reinforce_on="relevant")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    # The spec's per-session numbers, read literally (decay_unit "session"), with a fixed clock;
    # the default unit, one decay per day, is tested in test_decay_unit.py.
    return MemoryStore(tmp_path, clock=lambda: DAY, settings=SESSION)


def mem_file(store: MemoryStore, name: str) -> str:
    return (store.memory_dir / name).read_text()


def test_initialize_creates_files_and_returns_a_session_id(store: MemoryStore) -> None:
    report = store.initialize()
    assert len(report.session_id) >= 16 and report.applied
    assert set(report.created) >= {"semantic.md", "episodic.md"}
    for name in ("semantic.md", "episodic.md", "archive.md"):
        assert (store.memory_dir / name).exists()
    assert "## User Preferences" in mem_file(store, "semantic.md")
    again = store.initialize(report.session_id)
    assert not again.applied and again.created == []


def test_episodic_decay_table_prune_at_eleven_sessions(store: MemoryStore) -> None:
    store.initialize("s0")
    entry = store.save_episodic("Working on auth", "s0", confidence=0.9)
    seen = []
    for n in range(1, 12):
        store.initialize(f"s{n}")
        entries = store.episodic_entries()
        seen.append(entries[0].salience if entries else None)
        if n == 10:
            assert entries[0].state == "flagged"  # confidence 0.9*0.8^10 < 0.2
    assert seen[:5] == [0.8, 0.64, 0.512, 0.41, 0.328]
    assert seen[9] == 0.107
    assert seen[10] is None, "pruned after the 11th session"
    log = mem_file(store, "episodic.md")
    assert "Working on auth" in log.split("## Maintenance Log")[1]
    # Originally 0.9 -> once-high: archived rather than vanishing.
    assert entry.id in mem_file(store, "archive.md")


def test_same_session_decays_once_however_often_it_is_initialized(store: MemoryStore) -> None:
    store.save_semantic("Main branch is develop", "project_context", 1.0)
    store.initialize("a")
    store.initialize("a")
    store.initialize("a")
    [e] = store.semantic_entries()
    assert e.confidence == 0.95 and e.unreinforced_sessions == 1
    store.initialize("b")
    [e] = store.semantic_entries()
    assert e.confidence == 0.9


def test_reinforced_entries_skip_the_next_semantic_decay(store: MemoryStore) -> None:
    saved = store.save_semantic("CI runs on GitHub Actions", "project_context", 0.9)
    assert saved.entry is not None
    store.initialize("a")  # 0.85
    store.reinforce(saved.entry.id)  # referenced: min(0.95, original 0.9) = 0.9
    assert store.semantic_entries()[0].confidence == 0.9
    store.initialize("b")  # reinforced since the last decay: no decay
    assert store.semantic_entries()[0].confidence == 0.9
    store.initialize("c")
    assert store.semantic_entries()[0].confidence == 0.85


def test_confirmed_reinforcement_can_exceed_the_original(store: MemoryStore) -> None:
    saved = store.save_semantic("Likes terse commit messages", "user_preference", 0.7)
    assert saved.entry is not None
    assert store.reinforce(saved.entry.id).confidence == 0.7  # capped at original
    assert store.reinforce(saved.entry.id, confirmed=True).confidence == 0.8
    assert store.reinforce(saved.entry.id, confirmed=True).confidence == 0.9


def test_episodic_reinforcement_boosts_salience_up_to_two(store: MemoryStore) -> None:
    e = store.save_episodic("Fixed the rate limiter", "s", confidence=0.7)
    for _ in range(7):
        e = store.reinforce(e.id)
    assert e.salience == 2.0 and e.confidence == 0.7


def test_reinforce_unknown_id_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFoundError):
        store.reinforce("s-00000000")


@pytest.mark.parametrize(
    ("fact", "category", "confidence", "message"),
    [
        ("x", "nonsense", 0.5, "unknown category"),
        ("x", "quality_rule", 1.5, "between 0.0 and 1.0"),
        ("x", "quality_rule", -0.1, "between 0.0 and 1.0"),
        ("x", "quality_rule", float("nan"), "between 0.0 and 1.0"),
        ("x", "quality_rule", "0.9", "must be a number"),
        ("x", "quality_rule", True, "must be a number"),
        ("   ", "quality_rule", 0.5, "must not be empty"),
        (42, "quality_rule", 0.5, "must be a string"),
        ("a <!-- b --> c", "quality_rule", 0.5, "HTML comment"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    store: MemoryStore, fact: object, category: str, confidence: object, message: str
) -> None:
    store.save_semantic("Always run tests before committing", "quality_rule", 1.0)
    before = mem_file(store, "semantic.md")
    with pytest.raises(ValueError, match=message):
        store.save_semantic(fact, category, confidence)  # type: ignore[arg-type]
    assert mem_file(store, "semantic.md") == before


def test_zero_is_a_value_never_unset(store: MemoryStore) -> None:
    zero = store.save_semantic("Legacy API is the source of truth", "project_context", 0.0)
    assert zero.entry is not None and zero.entry.confidence == 0.0
    assert zero.entry.state == "contradicted"
    store.save_semantic("Main branch is develop", "project_context", 1.0)
    assert store.build_context(max_tokens=0) == ""
    ctx = store.build_context(query="legacy api source truth")
    assert "Legacy API" not in ctx and "develop" in ctx
    report = store.memory_maintenance()
    assert [p.entry.id for p in report.applied] == [zero.entry.id]
    assert all(e.id != zero.entry.id for e in store.semantic_entries())
    assert 'Removed: "Legacy API is the source of truth"' in mem_file(store, "semantic.md")
    no_cap = MemoryStore(
        store.root, settings=Settings(decay_unit="session", episodic_cap=0), clock=lambda: DAY
    )
    no_cap.save_episodic("kept nowhere", "s")
    assert no_cap.episodic_entries() == []  # a cap of 0 keeps zero entries, it is not "unset"


def test_replacement_archives_the_old_entry_and_tombstones_it(store: MemoryStore) -> None:
    old = store.save_semantic("JWT with 15min expiry", "architecture_decision", 1.0)
    new = store.save_semantic("JWT with 30min expiry", "architecture_decision", 0.9)
    assert new.action == "replaced" and new.replaced is not None and old.entry is not None
    assert new.replaced.id == old.entry.id
    sem = mem_file(store, "semantic.md")
    assert "15min" not in sem.split("## Maintenance Log")[0]
    assert 'Replaced: "JWT with 15min expiry"' in sem
    archive = mem_file(store, "archive.md")
    assert "JWT with 15min expiry" in archive and "replaced by" in archive
    before = sem
    rejected = store.save_semantic("JWT with 15min expiry", "architecture_decision", 0.8)
    assert rejected.action == "rejected" and rejected.entry is None
    assert mem_file(store, "semantic.md") == before
    assert "15min" not in store.build_context(query="jwt expiry")
    override = store.save_semantic("JWT with 15min expiry", "architecture_decision", 1.0)
    assert override.action == "replaced"
    assert [e.text for e in store.semantic_entries()] == ["JWT with 15min expiry"]


def test_restating_a_rule_reinforces_without_a_second_line(store: MemoryStore) -> None:
    store.save_semantic(
        "Rate limiting: 10 req/min on public endpoints", "architecture_decision", 0.7
    )
    again = store.save_semantic(
        "Rate limiting: 10 req/min on public endpoints", "architecture_decision", 0.9
    )
    assert again.action == "reinforced" and again.entry is not None
    assert again.entry.confidence == 0.9
    assert len(store.semantic_entries()) == 1


def test_episodic_cap_keeps_twenty_and_logs_each_eviction(store: MemoryStore) -> None:
    for i in range(23):
        store.save_episodic(f"checkpoint number {i}", "s", confidence=0.5)
    entries = store.episodic_entries()
    assert len(entries) == 20
    assert entries[0].text == "checkpoint number 22"  # newest on top
    texts = {e.text for e in entries}
    assert {"checkpoint number 0", "checkpoint number 1", "checkpoint number 2"}.isdisjoint(texts)
    log = mem_file(store, "episodic.md").split("## Maintenance Log")[1]
    assert log.count("Removed:") == 3 and "episodic cap" in log


def test_maintenance_flags_removes_low_signal_and_archives_once_high(store: MemoryStore) -> None:
    store.save_semantic("Low signal inference about caching", "architecture_decision", 0.3)
    store.save_semantic("Once important rule about logging", "quality_rule", 0.95)
    for n in range(16):
        store.initialize(f"s{n}")
    low, high = store.semantic_entries()
    assert low.state == "flagged" and high.state == "flagged"
    assert high.unreinforced_sessions == 16
    before = {n: mem_file(store, n) for n in ("semantic.md", "archive.md")}
    dry = store.memory_maintenance(dry_run=True)
    assert {p.entry.id: p.action for p in dry.proposals} == {low.id: "remove", high.id: "archive"}
    assert dry.applied == [] and {n: mem_file(store, n) for n in before} == before
    report = store.memory_maintenance()
    assert report.counts == {"remove": 1, "archive": 1, "reinforce": 0}
    assert store.semantic_entries() == []
    sem = mem_file(store, "semantic.md")
    assert 'Removed: "Low signal inference about caching"' in sem
    assert "unreinforced for 16 sessions" in sem
    assert 'Archived: "Once important rule about logging"' in sem
    assert "Once important rule about logging" in mem_file(store, "archive.md")


def test_maintenance_decisions_reinforce_restores_half(store: MemoryStore) -> None:
    saved = store.save_semantic("Flaky rule", "quality_rule", 0.25)
    other = store.save_semantic("Another flaky rule about widgets", "quality_rule", 0.25)
    assert saved.entry is not None and other.entry is not None
    store.initialize("a")
    store.initialize("b")
    with pytest.raises(ValueError, match="must be one of"):
        store.memory_maintenance({saved.entry.id: "burn"})
    with pytest.raises(NotFoundError):
        store.memory_maintenance({"s-deadbeef": "remove"})
    report = store.memory_maintenance({saved.entry.id: "reinforce"})
    assert [p.action for p in report.applied] == ["reinforce"]
    by_id = {e.id: e for e in store.semantic_entries()}
    assert by_id[saved.entry.id].confidence == 0.5
    assert by_id[other.entry.id].state == "flagged"  # not decided: left alone
    with pytest.raises(RejectedError, match="not flagged"):
        store.memory_maintenance({saved.entry.id: "remove"})
    assert 'Reinforced: "Flaky rule" (user confirmed, confidence 0.15 → 0.50)' in mem_file(
        store, "semantic.md"
    )


def test_detect_semantic_signals_saves_each_signal(store: MemoryStore) -> None:
    signals = store.detect_semantic_signals("Always use pnpm. Never push directly to main.")
    assert [s.action for s in signals] == ["added", "added"]
    assert all(s.confidence == 1.0 for s in signals)
    texts = [e.text.lower() for e in store.semantic_entries()]
    assert any("pnpm" in t for t in texts) and any("push" in t for t in texts)
    assert store.detect_semantic_signals("Thanks, that works!") == []
    with pytest.raises(ValueError):
        store.detect_semantic_signals(None)  # type: ignore[arg-type]


def test_a_committed_memory_can_be_mutated_and_committed_again(store: MemoryStore) -> None:
    # The daemon's writer keeps its parsed Memory between transactions.
    with store.transaction() as memory:
        memory.save_semantic("Deploys go through staging", "project_context", 0.9)
        memory.save_episodic("First checkpoint", "s1")
        store.commit(memory)
        memory.save_semantic("Hotfixes skip the release train", "project_context", 0.9)
        old = memory.save_semantic("JWT with 15min expiry", "architecture_decision", 1.0)
        store.commit(memory)
        memory.save_semantic("JWT with 30min expiry", "architecture_decision", 1.0)
        memory.save_episodic("Second checkpoint", "s1")
    assert old.entry is not None
    texts = sorted(e.text for e in store.semantic_entries())
    assert texts == [
        "Deploys go through staging",
        "Hotfixes skip the release train",
        "JWT with 30min expiry",
    ]
    assert [e.text for e in store.episodic_entries()] == ["Second checkpoint", "First checkpoint"]
    assert old.entry.id in (store.memory_dir / "archive.md").read_text()
