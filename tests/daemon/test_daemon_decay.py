"""Through a real daemon: parallel agents age memory once a day, and what they are shown stays.

The daemon reads the real clock, so a run that crosses midnight may see one more day's decay;
each test reads the date before and after and allows exactly that.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from maestrod_testkit import DaemonHandle, wait_for

from maestro_memory.core import MemoryStore

# One agent: session start as the Claude Code hook does it (initialize, then a context build
# for its session), over a raw DEALER socket; both replies printed as JSON lines.
AGENT = textwrap.dedent("""
    import json, os, sys, zmq
    endpoint, project, session = sys.argv[1:4]
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    sys.stdin.read()  # the start signal: every agent is connected by now
    for n, (op, args) in enumerate([
        ("initialize", {"session_id": session}),
        ("build_context", {"session_id": session}),
    ]):
        body = {"v": 1, "id": f"{session}-{n}", "op": op, "project": project, "args": args,
                "pid": os.getpid()}
        sock.send(json.dumps(body).encode())
        if not sock.poll(60000):
            sys.exit(f"timeout {body['id']}")
        print(sock.recv().decode(), flush=True)
""")


def start_agents(daemon: DaemonHandle, project: Path, sessions: list[str]) -> list[dict[str, Any]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", AGENT, daemon.endpoint, str(project), sid],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for sid in sessions
    ]
    for p in procs:
        assert p.stdin is not None
        p.stdin.close()  # go
    replies = []
    for p in procs:
        assert p.stdout is not None
        out = p.stdout.read()
        assert p.wait(timeout=120) == 0, out
        replies += [json.loads(line) for line in out.splitlines()]
    return replies


def test_eight_parallel_agents_age_the_day_once_and_keep_what_they_see(
    daemon: DaemonHandle, project: Path
) -> None:
    store = MemoryStore(project)
    store.detect_semantic_signals("From now on, always use pnpm instead of npm.")
    store.save_semantic("Staging is refreshed on Sundays", "project_context", 0.5)
    store.save_episodic("Worked on the parser", "s0", 0.9)
    daemon.register(project)
    before = dt.date.today()
    replies = start_agents(daemon, project, [f"agent-{n}" for n in range(8)])
    days = 1 if dt.date.today() == before else 2
    assert all(r["ok"] for r in replies), replies
    applied = [r["result"]["applied"] for r in replies if "applied" in r.get("result", {})]
    assert len(applied) == 8 and sum(applied) == days
    contexts = [r["result"]["context"] for r in replies if "context" in r.get("result", {})]
    assert len(contexts) == 8 and all("pnpm" in c for c in contexts)

    def settled() -> dict[str, float] | None:
        values = {e.text: e.confidence for e in MemoryStore(project).semantic_entries()}
        return values if values["Always use pnpm instead of npm"] == 1.0 else None

    # The rule was shown, so it was referenced: back at its original 1.00 once the writer has
    # applied the queued reinforcement. The inference nobody's task matched aged one step a day.
    values = wait_for(settled, timeout=30, message="the injected rule reinforced")
    assert values["Staging is refreshed on Sundays"] == round(0.5 - 0.05 * days, 2)
    [epi] = MemoryStore(project).episodic_entries()
    assert epi.salience == round(0.8**days, 3)
    state = json.loads((project / ".maestro" / "memory" / ".state.json").read_text())
    assert len(state["sessions"]) == 8 and state["decayed_on"] >= before.isoformat()
