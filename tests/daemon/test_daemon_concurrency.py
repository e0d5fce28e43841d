"""Many client processes at once: every write kept, files whole, sessions decayed once."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from maestrod_testkit import DaemonHandle

from maestro_memory.core import MemoryStore
from maestro_memory.core.markdown import parse

# One client process: a raw DEALER socket, requests one at a time, results as JSON lines.
WORKER = textwrap.dedent("""
    import json, os, sys, zmq
    endpoint, project, worker, count, mode = sys.argv[1:6]
    worker, count = int(worker), int(count)
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    sys.stdin.read()  # the start signal: every worker is connected by now

    def word(n):
        out = ""
        for _ in range(4):
            n, r = divmod(n, 26)
            out += "bcdfghjklmnpqrstvwxyz"[r % 21] + "aeiou"[r % 5]
        return out

    for i in range(count):
        if mode == "save":
            n = (worker * count + i) * 7
            fact = " ".join(word(n * 5 + k + 1000) for k in range(5))
            args = {"fact": fact, "category": ["user_preference", "architecture_decision",
                    "quality_rule", "project_context"][i % 4], "confidence": 0.9}
            op = "save_semantic"
        else:
            args, op = {"session_id": "s"}, "initialize"
        body = {"v": 1, "id": f"{worker}-{i}", "op": op, "project": project, "args": args,
                "pid": os.getpid()}
        sock.send(json.dumps(body).encode())
        if not sock.poll(60000):
            print(json.dumps({"timeout": body["id"]}), flush=True)
            sys.exit(1)
        reply = json.loads(sock.recv())
        assert reply["id"] == body["id"], reply
        print(json.dumps(reply), flush=True)
""")


def run_workers(
    daemon: DaemonHandle, project: Path, workers: int, count: int, mode: str
) -> list[dict[str, object]]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, daemon.endpoint, str(project), str(w), str(count), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        for w in range(workers)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()  # go
        proc.stdin = None
    replies: list[dict[str, object]] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=240)
        assert proc.returncode == 0, out[-2000:]
        replies += [json.loads(line) for line in out.decode().splitlines()]
    return replies


def test_sixteen_clients_fifty_saves_each(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    replies = run_workers(daemon, project, 16, 50, "save")
    assert len(replies) == 800
    failed = [r for r in replies if not r["ok"]]
    assert not failed, failed[:3]
    actions = {r["result"]["action"] for r in replies}  # type: ignore[index]
    assert actions == {"added"}
    ids = {r["result"]["entry"]["id"] for r in replies}  # type: ignore[index]
    assert len(ids) == 800

    # Durable and whole: a fresh parse of the files holds all 800, without problems.
    memory_dir = project / ".maestro" / "memory"
    doc = parse("semantic", (memory_dir / "semantic.md").read_text())
    assert doc.problems == []
    assert {b.id for b in doc.entries()} == ids
    assert {e.id for e in MemoryStore(project).semantic_entries()} == ids
    assert not [p for p in memory_dir.iterdir() if ".tmp-" in p.name]

    # The cache agrees, the journal has one record per save, and writes were grouped.
    entries = daemon.result("entries", project, sector="semantic")["entries"]
    assert {e["id"] for e in entries} == ids
    records = daemon.result("log", project, limit=1000)["records"]
    assert sorted(r["entries"][0] for r in records if r["op"] == "save_semantic") == sorted(ids)
    status = daemon.status()
    assert status["requests"]["ops"]["save_semantic"]["count"] == 800
    assert status["projects"][str(project)]["entries"]["semantic"] == 800
    assert status["projects"][str(project)]["external_edits"] == 0  # our writes are ours
    writer = status["writer"]
    assert writer["requests"] == 800 and writer["failed_commits"] == 0
    assert writer["transactions"] < 800  # group commit: several requests per transaction


def test_eight_concurrent_initialize_decay_once(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result(
        "save_semantic",
        project,
        fact="Deploys go through staging first",
        category="project_context",
        confidence=0.9,
    )
    episode = daemon.result(
        "save_episodic",
        project,
        context="Refactored the router",
        session_id="earlier",
        confidence=1.0,
    )["entry"]
    replies = run_workers(daemon, project, 8, 1, "init")
    assert all(r["ok"] for r in replies), replies
    applied = [r for r in replies if r["result"]["applied"]]  # type: ignore[index]
    assert len(applied) == 1

    [fact] = MemoryStore(project).semantic_entries()
    assert abs(fact.confidence - 0.85) < 1e-9  # -0.05 once
    [ep] = MemoryStore(project).episodic_entries()
    assert ep.id == episode["id"]
    assert abs((ep.salience or 0) - 0.8) < 1e-9 and abs(ep.confidence - 0.8) < 1e-9
    cached = {e["id"]: e for e in daemon.result("entries", project)["entries"]}
    assert abs(cached[ep.id]["salience"] - 0.8) < 1e-9
