"""The writer journals each request from the blocks it reached (``Memory.touched`` and
``journal.ScoreLedger``), in O(changes). That must say exactly what a diff of the whole memory
before and after the request says, for every kind of change the rules make: here every op runs
on a real parsed memory and both are compared, request by request, and the ledger must end equal
to the memory. (In-process on purpose: the two computations are pure; the daemon path that uses
the ledger is covered by test_daemon_ops and test_daemon_journal.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from maestro_memory.core.memory import Memory, Settings
from maestro_memory.daemon import journal as jr

SEMANTIC = """# Semantic Memory

## User Preferences
- [2026-11-01] [0.90] Use tabs for indentation in Go code <!-- mm:id=s-00000001 o=0.90 u=0 -->
- [2026-11-01] [0.15] Prefer long functions <!-- mm:id=s-00000002 o=0.60 u=3 -->

## Architecture Decisions
- [2026-11-01] [0.85] Billing uses Postgres via pgbouncer <!-- mm:id=s-00000003 o=0.85 u=0 -->

## Quality Rules
- [2026-11-01] [0.80] Run the linters before every commit <!-- mm:id=s-00000004 o=0.80 u=0 -->
- [2026-11-01] [0.70] Tests live next to the code they test <!-- mm:id=s-00000005 o=0.70 u=0 -->

## Project Context
- [2026-11-01] [0.60] Staging deploys happen on Tuesdays <!-- mm:id=s-00000006 o=0.60 u=0 -->

## Maintenance Log
"""

EPISODIC = """# Episodic Memory

## Entries

### [salience: 1.0] [confidence: 0.80] [2026-11-20] [sess-a] <!-- mm:id=e-00000001 o=0.8 -->
Worked on the billing webhooks.

### [salience: 0.12] [confidence: 0.30] [2026-11-02] [sess-b] <!-- mm:id=e-00000002 o=0.3 -->
Looked at the search index.

### [salience: 0.5] [confidence: 0.50] [2026-11-10] [sess-c] <!-- mm:id=e-00000003 o=0.5 -->
Fixed the upload retries.
"""


def _sorted(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(changes, key=lambda c: str(c["id"]))


def test_the_ledger_journals_what_a_whole_memory_diff_would() -> None:
    memory = Memory.load(
        {"semantic.md": SEMANTIC, "episodic.md": EPISODIC},
        today="2026-12-03",
        settings=Settings(episodic_cap=4),
    )
    ledger = jr.ScoreLedger(memory)
    state: dict[str, Any] = {}

    def note_id(m: Memory) -> None:
        state["note"] = m.save_session_note("Session: fixed the flaky upload test", "sess-n")[0].id

    tabs = "Use tabs for indentation in Go code"
    spaces = "Use spaces for indentation in Go code"
    lint = "Run the linters before every commit"
    prefs, rules = "user_preference", "quality_rule"
    steps: list[tuple[str, Callable[[Memory], object]]] = [
        ("initialize: decay of both files, the sweep prunes", lambda m: m.initialize("s1")),
        ("initialize again: nothing", lambda m: m.initialize("s1")),
        ("save_semantic: added", lambda m: m.save_semantic("Use ruff to format", rules, 0.9)),
        ("save_semantic: reinforced", lambda m: m.save_semantic(lint, rules, 0.9)),
        ("save_semantic: replaced", lambda m: m.save_semantic(spaces, prefs, 0.95)),
        ("save_semantic: tombstoned", lambda m: m.save_semantic(tabs, prefs, 0.5)),
        ("save_semantic: restated at 1.0", lambda m: m.save_semantic(tabs, prefs, 1.0)),
        ("save_episodic over the cap", lambda m: m.save_episodic("Read the deploy", "sess-d")),
        ("save_session_note: new", note_id),
        ("save_session_note: in place", lambda m: m.save_session_note("Session: done", "sess-n")),
        ("reinforce", lambda m: m.reinforce("s-00000005", confirmed=True)),
        (
            "reinforce_referenced",
            lambda m: m.reinforce_referenced(["s-00000003", state["note"]], "s2"),
        ),
        ("detect_semantic_signals", lambda m: m.detect_semantic_signals("Always squash merge PRs")),
        ("maintenance: decisions", lambda m: m.memory_maintenance({"s-00000002": "reinforce"})),
        ("maintenance: the proposals", lambda m: m.memory_maintenance()),
        ("forget", lambda m: m.forget(["s-00000006"])),
    ]
    changed_somewhere = 0
    for name, step in steps:
        before = jr.memory_values(memory)
        touched: list[Any] = []
        memory.touched = touched
        try:
            step(memory)
        finally:
            memory.touched = None
        expected = jr.diff_values(before, jr.memory_values(memory))
        assert _sorted(ledger.changes(touched)) == _sorted(expected), name
        changed_somewhere += bool(expected)
    assert ledger.values == jr.memory_values(memory)
    assert changed_somewhere >= 12  # the steps above do change things


def test_a_memory_nobody_collects_for_keeps_no_list() -> None:
    memory = Memory.load({"semantic.md": SEMANTIC}, today="2026-12-03")
    memory.save_semantic("Use ruff for formatting", "quality_rule", 0.9)
    assert memory.touched is None
