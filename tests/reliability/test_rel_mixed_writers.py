"""Mixed writers, all at once on one project: 8 daemon clients, 2 direct-mode processes
(``Client(direct=True)``: the lock protocol without a daemon) and a person who appends and
edits lines of semantic.md with plain file writes and no lock (see rel_person.py).

What can honestly be guaranteed. The tools serialise on the project lock, so among them no
update is ever lost. A person takes no lock, so nothing can make every interleaving safe; what
the tool guarantees is that it never loses a person's edit that lands *first* (on disk when a
commit checks the files, just before its renames: the commit is then re-applied to it) or
*last* (after the renames: it lands on the new file). Only an edit landing inside a commit's
check-to-rename stretch (a few system calls) can be overwritten; symmetrically the person's
editor can overwrite a tool's write only if that write lands between the editor's last look
and its rename. The test records those stretches (rel_trace.py, a test stand-in, in the daemon
and the direct-mode processes; ``time.monotonic_ns`` is one clock for the machine) and asserts:

* every person append and edit that overlapped no tool commit stretch is intact, exactly once;
* every acknowledged tool write is present exactly once (missing only if a person's edit
  overlapped a tool commit stretch);
* nothing is present twice, the files parse, no temp file is left, and the daemon's cache
  ends up equal to the files.

Before the commit check existed, a commit renamed over whatever a person wrote during the
whole transaction (two fsyncs): this load lost about a quarter of the person's appends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import rel_trace
from maestrod_testkit import DaemonFactory
from reliability_kit import (
    HERE,
    LONG,
    WorkerPool,
    disk_entry_view,
    disk_state,
    entry_view,
    faulty_prefix,
    memory_dir,
    wait_for,
)

APPENDS = 600 if LONG else 120
EDIT_EVERY = 6
PACE = 0.02
LAYOUT = (
    "# Semantic Memory\n\n## User Preferences\n\n## Architecture Decisions\n\n"
    "## Quality Rules\n\n## Maintenance Log\n\n## Project Context\n"
)


def line(i: int) -> str:
    return f"person p{i}a p{i}b p{i}c"


def edited(i: int) -> str:
    return f"person p{i}a edited p{i}x p{i}c"


def test_daemon_direct_and_a_person_at_once(daemon_factory: DaemonFactory, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    md = memory_dir(project)
    md.mkdir(parents=True)
    semantic = md / "semantic.md"
    semantic.write_text(LAYOUT)
    trace = tmp_path / "windows.txt"
    daemon = daemon_factory(env={rel_trace.ENV: str(trace)}, argv_prefix=faulty_prefix())
    daemon.register(project)

    pool = WorkerPool(tmp_path / "stop", env={rel_trace.ENV: str(trace)})
    for w in range(8):  # every writer writes until the person is done
        pool.start("daemon", project, w, timeout=30)
    for w in range(8, 10):
        pool.start("direct", project, w)
    person = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "rel_person.py"),
            str(semantic),
            str(APPENDS),
            str(EDIT_EVERY),
            str(PACE),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = person.communicate(timeout=600)
    # The load is a precondition, not a timing: on a loaded machine the person may be done
    # before the writers got going, so they go on until 200 writes are acknowledged.
    wait_for(lambda: pool.ack_count() >= 200, timeout=600, message="200 acknowledged tool writes")
    pool.stop(240)
    assert person.returncode == 0
    events: list[dict[str, Any]] = [json.loads(x) for x in out.splitlines()]
    assert events[-1] == {"kind": "done"}

    windows = rel_trace.read(trace)
    assert windows and {k for _, _, k in windows} == {"checked"}, "a commit ran unchecked"

    def overlaps(e: dict[str, Any]) -> bool:
        return any(start <= e["t1"] and e["t0"] <= end for start, end, _ in windows)

    appends = {e["i"]: e for e in events if e["kind"] == "append"}
    edits = {e["k"]: e for e in events if e["kind"] == "edit"}
    assert len(appends) == APPENDS and not [e for e in edits.values() if e.get("gave_up")]
    state = disk_state(project)
    assert state.problems == {} and state.leftovers == []
    counts = state.text_counts()
    assert max(counts.values()) == 1, [t for t, n in counts.items() if n > 1][:5]

    exempt, checked = [], 0
    for i, append in appends.items():
        change = edits.get(i)
        done = change is not None and "t0" in change
        racy = overlaps(append) or (done and overlaps(change))  # type: ignore[arg-type]
        expected, other = (edited(i), line(i)) if done else (line(i), edited(i))
        if racy:
            exempt.append(i)
            continue
        checked += 1
        assert counts[expected] == 1 and counts[other] == 0, (
            f"the person's {'edit' if done else 'append'} #{i} was lost or damaged "
            f"(no tool commit overlapped it): {expected!r} x{counts[expected]}"
        )
    assert len(exempt) <= APPENDS // 4, f"{len(exempt)} person writes overlapped a commit"

    acked = pool.acked()
    missing = [a for a in acked if counts[a["fact"]] != 1]
    edit_races = sum(1 for e in edits.values() if "t0" in e and overlaps(e))
    assert not missing or edit_races, f"acknowledged tool writes lost: {missing[:3]}"
    assert len(acked) >= 200, f"only {len(acked)} tool writes acked: too little load"
    assert {a["via"] for a in acked} == {"daemon", "direct"}
    wait_for(
        lambda: (
            entry_view(daemon.result("entries", project)["entries"]) == disk_entry_view(project)
        ),
        timeout=20,
        message="the cache to equal the files",
    )
    assert checked >= APPENDS * 3 // 4
