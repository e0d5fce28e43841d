"""``decay_unit``: memory ages by days of use (default), or by session ids (the spec literally).

A day on which the project had a session ages memory once, however many agents and session ids
it brings, one after another or at the same moment; a day without sessions ages nothing.
"""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore, Settings


class Clock:
    """A movable calendar: the store reads ``today`` through it (core functions take the day
    as a value; only the edge reads a clock)."""

    def __init__(self, day: str = "2026-12-01") -> None:
        self.day = day

    def __call__(self) -> str:
        return self.day


def confidences(store: MemoryStore) -> list[float]:
    return [e.confidence for e in store.semantic_entries()]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> MemoryStore:
    s = MemoryStore(tmp_path, clock=clock)
    s.save_semantic("Main branch is develop", "project_context", 1.0)
    s.save_episodic("Worked on the parser", "s0", confidence=1.0)
    return s


def test_default_settings() -> None:
    assert (Settings().decay_unit, Settings().reinforce_on) == ("day", "injected")
    with pytest.raises(ValueError, match="decay_unit"):
        Settings(decay_unit="week")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reinforce_on"):
        Settings(reinforce_on="all")  # type: ignore[arg-type]


def test_many_sessions_in_a_day_decay_once(store: MemoryStore, clock: Clock) -> None:
    reports = [store.initialize(f"agent-{n}") for n in range(12)]
    assert [r.applied for r in reports] == [True] + [False] * 11
    assert confidences(store) == [0.95]
    [epi] = store.episodic_entries()
    assert (epi.salience, epi.confidence) == (0.8, 0.8)
    clock.day = "2026-12-02"
    assert store.initialize("agent-99").applied
    assert store.initialize("agent-100").applied is False
    assert confidences(store) == [0.9]


def test_days_without_a_session_do_not_age(store: MemoryStore, clock: Clock) -> None:
    store.initialize("mon")
    clock.day = "2026-12-15"  # two weeks away: one more day of use, one more decay
    store.initialize("back")
    assert confidences(store) == [0.9]


def test_a_clock_set_back_does_not_decay_again(store: MemoryStore, clock: Clock) -> None:
    clock.day = "2026-12-05"
    store.initialize("a")
    clock.day = "2026-12-04"
    assert not store.initialize("b").applied
    clock.day = "2026-12-05"
    assert not store.initialize("c").applied
    assert confidences(store) == [0.95]


def test_the_ledger_lives_in_the_sidecar(store: MemoryStore, clock: Clock) -> None:
    store.initialize("a")
    state = json.loads((store.memory_dir / ".state.json").read_text())
    assert state["decayed_on"] == "2026-12-01" and set(state["sessions"]) == {"a"}
    # The sidecar is what makes it once per day: a second store (another process) agrees.
    other = MemoryStore(store.root, clock=clock)
    assert not other.initialize("b").applied
    assert confidences(other) == [0.95]


def test_a_ledger_of_session_ids_counts_as_decayed_on_its_days(
    tmp_path: Path, clock: Clock
) -> None:
    session_unit = MemoryStore(tmp_path, clock=clock, settings=Settings(decay_unit="session"))
    session_unit.save_semantic("Main branch is develop", "project_context", 1.0)
    session_unit.initialize("a")
    session_unit.initialize("b")
    assert confidences(session_unit) == [0.9]
    # Switching to days the same day: today has had its decay already.
    day_unit = MemoryStore(tmp_path, clock=clock)
    assert not day_unit.initialize("c").applied
    assert confidences(day_unit) == [0.9]
    # And back: a session id already in the ledger never decays again.
    assert not session_unit.initialize("c").applied
    assert session_unit.initialize("d").applied
    assert confidences(session_unit) == [0.85]


def test_session_unit_keeps_the_spec_literal_behaviour(tmp_path: Path, clock: Clock) -> None:
    s = MemoryStore(tmp_path, clock=clock, settings=Settings(decay_unit="session"))
    s.save_semantic("Main branch is develop", "project_context", 1.0)
    for sid in ("a", "b", "c", "a"):
        s.initialize(sid)
    assert confidences(s) == [0.85]


def test_reinforcement_stays_once_per_entry_per_session(store: MemoryStore, clock: Clock) -> None:
    store.save_semantic("Payments use Stripe", "architecture_decision", 0.5)
    store.initialize("a")  # 0.45, below its original 0.5
    clock.day = "2026-12-02"
    store.initialize("b")  # 0.40
    store.build_context(task="stripe payments", session_id="b")  # +0.1, capped at 0.5
    store.build_context(task="stripe payments", session_id="b")
    by_text = {e.text: e.confidence for e in store.semantic_entries()}
    assert by_text["Payments use Stripe"] == 0.5
    [entry] = [e for e in store.semantic_entries() if e.text == "Payments use Stripe"]
    assert entry.last_referenced == "2026-12-02"


def _init_worker(root: str, day: str, sid: str, start: Any) -> None:
    start.wait(30)
    MemoryStore(root, clock=lambda: day).initialize(sid)


def test_eight_processes_with_eight_session_ids_age_the_day_once(
    store: MemoryStore, clock: Clock
) -> None:
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_init_worker, args=(str(store.root), clock.day, f"agent-{n}", start))
        for n in range(8)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert confidences(store) == [0.95]
    [epi] = store.episodic_entries()
    assert (epi.salience, epi.confidence) == (0.8, 0.8)
    state = json.loads((store.memory_dir / ".state.json").read_text())
    assert len(state["sessions"]) == 8  # every agent's session is in the ledger
