""" "Recent context" shows the newest sessions, however often older notes were referenced.

Found by the e2e suite with the real Claude Code CLI (tests/e2e/test_claude_lasting.py): with
the episodic section ranked by salience x confidence, the notes of the first days, found
relevant to each later prompt (+0.2 salience per session), kept the section for good; after 20
days of work it still showed days 1-3 and none of the last 17. Driven here through the public
API the way the hooks drive it: initialize, session-start build, the prompt's build (task = the
prompt, unseen only), the session's note at its end; one session a day, a movable clock.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from maestro_memory.core import MemoryStore
from maestro_memory.core.context import EPISODIC


class Clock:
    def __init__(self) -> None:
        self.day = dt.date(2027, 3, 1)

    def __call__(self) -> str:
        return self.day.isoformat()


def recent(block: str) -> list[str]:
    lines = block.splitlines()
    if EPISODIC not in lines:
        return []
    out = []
    for line in lines[lines.index(EPISODIC) + 1 :]:
        if not line.startswith("- "):
            break
        out.append(line)
    return out


def test_recent_context_is_the_newest_sessions_not_the_most_referenced(tmp_path: Path) -> None:
    clock = Clock()
    store = MemoryStore(tmp_path, clock=clock)
    store.initialize("setup")
    # Two sessions a day (one session a day leaves a referenced note at a fresh one's
    # salience, 0.8 x 1.0 + 0.2; two take it to the 2.0 ceiling).
    for n in range(1, 13):
        sid = f"session-{n}"
        store.initialize(sid)
        store.build_context_result(session_id=sid)  # session start: no task
        # Every prompt is about the same part of the code: earlier notes are relevant to it.
        prompt = f"Fix the login form validation again, part {n}"
        store.build_context_result(task=prompt, max_tokens=200, session_id=sid, unseen_only=True)
        store.save_session_note(f"Task: {prompt}", sid)
        if n % 2 == 0:
            clock.day += dt.timedelta(days=1)

    store.initialize("next")
    lines = recent(store.build_context_result(session_id="next").context)

    # The five newest sessions, newest first (the same day: the more salient first).
    parts = [line.rsplit("part ", 1)[1] for line in lines]
    assert sorted(parts[:2]) == ["11", "12"] and sorted(parts[2:4]) == ["10", "9"], lines
    assert parts[4] in ("7", "8"), lines
    # Referenced notes still live longer (salience above a fresh note's decay), they just do
    # not push the newest out of "Recent context".
    by_part = {e.text.rsplit("part ", 1)[1]: e for e in store.episodic_entries()}
    assert by_part["5"].salience is not None and by_part["5"].salience > 0.8**4


def test_same_day_notes_rank_by_salience_then_file_order(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path, clock=lambda: "2027-03-01")
    store.initialize("setup")
    for n in range(1, 8):
        store.save_session_note(f"Task: step {n}", f"s-{n}")
    lines = recent(store.build_context_result(session_id="next").context)
    # Same date, same salience: newest on top of the file first.
    assert [line.rsplit("step ", 1)[1] for line in lines] == ["7", "6", "5", "4", "3"]
