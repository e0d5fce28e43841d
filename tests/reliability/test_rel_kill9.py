"""kill -9 under load: 16 writer processes, the daemon SIGKILLed at random moments, restarted on
the same MAESTRO_HOME, again and again (10 cycles; 50 with MAESTRO_RELIABILITY_LONG=1).

After every kill, before the restart, the files on disk are checked as a new process would see
them: each file parses without a problem, and every write whose ack a client received (in this
cycle or any earlier one) is present exactly once. A write whose reply never came may or may
not be there; no fact is ever present twice. "Random moment" is random in *progress*: the kill
comes after a random number of new acks (0-80), so no clock decides it.
"""

from __future__ import annotations

import random
from pathlib import Path

from maestrod_testkit import DaemonFactory
from reliability_kit import LONG, WorkerPool, disk_entry_view, disk_state, entry_view, wait_for

WRITERS = 16
CYCLES = 50 if LONG else 10


def assert_acked_once(project: Path, acked: list[dict[str, object]], when: str) -> int:
    state = disk_state(project)
    assert state.problems == {}, f"{when}: files do not parse cleanly: {state.problems}"
    counts = state.text_counts()
    twice = [t for t, n in counts.items() if n > 1]
    assert not twice, f"{when}: facts present more than once: {twice[:5]}"
    missing = [a for a in acked if counts[str(a["fact"])] != 1]
    assert not missing, f"{when}: {len(missing)} acknowledged write(s) lost: {missing[:3]}"
    ids = {e.id for e in state.memory.semantic_entries()}
    assert all(a["id"] in ids for a in acked), f"{when}: an acked entry changed its id"
    return len(counts)


def test_sigkill_under_load_never_loses_an_ack(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    rng = random.Random(0x6B696C6C)
    project = tmp_path / "proj"
    project.mkdir()
    daemon = daemon_factory()
    daemon.register(project)
    pool = WorkerPool(tmp_path / "stop")
    for w in range(WRITERS):
        pool.start("daemon", project, w, timeout=1.0)
    try:
        present = 0
        for cycle in range(CYCLES):
            base = pool.ack_count()
            target = rng.randint(0, 80)
            wait_for(
                lambda b=base, t=target: pool.ack_count() >= b + t,  # type: ignore[misc]
                timeout=60,
                message=f"{target} acks in cycle {cycle}",
            )
            daemon.kill()
            present = assert_acked_once(project, pool.acked(), f"after kill {cycle + 1}")
            daemon = daemon_factory()  # the same MAESTRO_HOME: stale socket, lock, pid file
        wait_for(
            lambda: pool.ack_count() >= present + 16,
            timeout=60,
            message="writes after the last restart",
        )
    finally:
        pool.stop()
    acked = pool.acked()
    assert len(acked) >= CYCLES * 10, f"too little load to prove anything: {len(acked)} acks"
    assert {a["via"] for a in acked} == {"daemon"}
    assert all(a["action"] == "added" for a in acked)
    assert_acked_once(project, acked, "at the end")
    # The restarted daemon's cache is the files, and nothing is left half done.
    assert entry_view(daemon.result("entries", project)["entries"]) == disk_entry_view(project)
    assert daemon.stop() == 0
    assert disk_state(project).leftovers == []
    assert pool.errors(), "no write was ever interrupted: the kills hit nothing"
