"""Scope: a request reaches only a registered project, and one project's memory never shows
in another's answers.

* an unregistered project, a path that escapes a registered one through ``..`` or a symlink,
  a subdirectory, the memory dir itself, and a registered project's neighbours (``/x/proj``
  vs ``/x/proj2``, ``/x/proj-evil``) get ``not_registered`` for every scoped op, and nothing
  is written there;
* entries of project A (distinctive tokens, written through the daemon, in direct mode and by
  hand) never appear in project B's context, entries (any sector), log or status, and B's
  reads and writes leave A's files byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonHandle, wait_for

from maestro_memory.core import MemoryStore

SCOPED: list[tuple[str, dict[str, Any]]] = [
    ("build_context", {"task": "anything", "max_tokens": 1000}),
    ("entries", {}),
    ("entries", {"sector": "archive"}),
    ("log", {}),
    ("initialize", {"session_id": "intruder"}),
    (
        "save_semantic",
        {"fact": "Planted rule zzplant", "category": "quality_rule", "confidence": 1.0},
    ),
    ("save_episodic", {"context": "Planted episode zzplant", "session_id": "intruder"}),
    ("detect_signals", {"user_message": "Always plant zzplant everywhere."}),
    ("reinforce", {"entry_id": "s-00000000"}),
    ("maintenance", {"dry_run": False}),
    ("unregister", {}),
]


def memory_bytes(root: Path) -> dict[str, bytes]:
    d = root / ".maestro" / "memory"
    return (
        {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != ".lock"}
        if d.is_dir()
        else {}
    )


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    x = tmp_path / "x"
    proj = x / "proj"
    for d in (proj / "sub", x / "proj2", x / "proj-evil", x / "outside"):
        d.mkdir(parents=True)
    (proj / "escape").symlink_to(x / "outside")
    (x / "alias").symlink_to(proj)  # a symlink *to* the project is the project
    return {"x": x, "proj": proj}


def test_everything_but_the_registered_project_is_refused(
    daemon: DaemonHandle, layout: dict[str, Path]
) -> None:
    x, proj = layout["x"], layout["proj"]
    daemon.register(proj)
    daemon.result(
        "save_semantic", proj, fact="Owner rule zzowner", category="quality_rule", confidence=1.0
    )
    before = memory_bytes(proj)
    refused = [
        x / "proj2",
        x / "proj-evil",
        f"{proj}2",
        f"{proj}-evil",
        f"{proj}/../proj2",
        f"{proj}/sub/../../proj-evil",
        f"{proj}/sub",
        f"{proj}/escape",
        f"{proj}/escape/..",
        f"{proj}/.maestro",
        f"{proj}/.maestro/memory",
        x,
        x / "outside",
        "/",
        f"{proj}/..",
        "relative/proj",
    ]
    for path in refused:
        for op, args in SCOPED:
            reply = daemon.send(op, path, args)
            assert reply["ok"] is False, (path, op, reply)
            assert reply["error"]["code"] == "not_registered", (path, op, reply)
    # Paths that resolve to the project itself are the project (realpath), nothing else is.
    for alias in (x / "alias", f"{proj}/sub/..", f"{proj}/./", f"{x}/proj2/../proj"):
        assert daemon.send("entries", alias)["ok"], alias
    for path in (x / "proj2", x / "proj-evil", x / "outside", proj / "sub"):
        assert not (Path(path) / ".maestro").exists(), f"something was written in {path}"
    assert memory_bytes(proj) == before
    texts = {e["text"] for e in daemon.result("entries", proj)["entries"]}
    assert texts == {"Owner rule zzowner"}
    assert [p["path"] for p in daemon.result("projects")["projects"]] == [str(proj)]
    assert set(daemon.status()["projects"]) == {str(proj)}


A_TOKENS = ("zzalpha", "zzapple", "zzastro", "zzarchive", "zzhand", "zzdirect")


def test_project_a_never_shows_in_project_b(daemon: DaemonHandle, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    daemon.register(a)
    daemon.register(b)
    # A: through the daemon, replaced (so archived), in direct mode, and typed by hand.
    daemon.result(
        "save_semantic",
        a,
        fact="Use zzalpha tokens with 15min expiry",
        category="architecture_decision",
        confidence=1.0,
    )
    daemon.result(
        "save_semantic",
        a,
        fact="Use zzalpha tokens with 30min expiry zzarchive",
        category="architecture_decision",
        confidence=1.0,
    )
    daemon.result("save_episodic", a, context="Worked on zzapple parsing", session_id="sa")
    daemon.result("detect_signals", a, user_message="Always run zzastro before deploying.")
    MemoryStore(a).save_semantic("Prefer zzdirect builds", "user_preference", 0.9)
    path = a / ".maestro" / "memory" / "semantic.md"
    path.write_text(
        path.read_text().replace(
            "## Quality Rules\n", "## Quality Rules\n- Never skip zzhand review\n", 1
        )
    )
    wait_for(
        lambda: (
            {"zzhand", "zzdirect"}
            <= {w for e in daemon.result("entries", a)["entries"] for w in e["text"].split()}
        ),
        message="A's external edits in A's cache",
    )
    # B: its own memory, with a read that names A's words and reinforces for a session.
    daemon.result(
        "save_semantic", b, fact="Use zzbeta queues", category="project_context", confidence=0.9
    )
    a_files = memory_bytes(a)
    query = " ".join(A_TOKENS)

    answers: list[Any] = []
    for session in (None, "sb"):
        args: dict[str, Any] = {"task": query, "query": query, "max_tokens": 100_000}
        if session:
            args["session_id"] = session
        answers.append(daemon.result("build_context", b, **args))
    for sector in (None, "semantic", "episodic", "archive"):
        answers.append(daemon.result("entries", b, **({"sector": sector} if sector else {})))
    answers.append(daemon.result("log", b, limit=1000))
    answers.append(daemon.result("maintenance", b, dry_run=True))
    answers.append(daemon.status()["projects"][str(b)])
    text = json.dumps(answers)
    leaked = [t for t in A_TOKENS if t in text]
    assert not leaked, f"project A's entries appear in project B's answers: {leaked}"
    assert "zzbeta" in json.dumps(answers[0])  # B's own memory is there
    # A's side: its own tokens are in its own answers, B's are not.
    a_text = json.dumps(
        [
            daemon.result("entries", a),
            daemon.result("log", a, limit=1000),
            daemon.result("build_context", a, query="zzbeta", max_tokens=100_000),
        ]
    )
    assert "zzbeta" not in a_text and "zzalpha" in a_text
    # B's reads and writes did not touch A's files, nor B's files mention A.
    daemon.result(
        "save_semantic", b, fact="Another zzbeta rule", category="quality_rule", confidence=0.9
    )
    assert memory_bytes(a) == a_files
    b_bytes = b"".join(memory_bytes(b).values())
    assert not [t for t in A_TOKENS if t.encode() in b_bytes]
    status = daemon.status()["projects"]
    assert status[str(b)]["entries"]["semantic"] == 2
    assert status[str(a)]["entries"]["archived"] == 1
    # The journals are per project: A's file names none of B's entries and vice versa.
    journal = {
        root: (
            daemon.paths.journal_dir
            / (hashlib.sha256(str(root).encode()).hexdigest()[:20] + ".jsonl")
        ).read_text()
        for root in (a, b)
    }
    assert len(list(daemon.paths.journal_dir.glob("*.jsonl"))) == 2
    b_ids = {e["id"] for e in daemon.result("entries", b)["entries"]}
    a_ids = {e["id"] for e in daemon.result("entries", a)["entries"]}
    assert all(i in journal[a] for i in a_ids)  # A's history, external edits included
    assert not any(i in journal[a] for i in b_ids)
    assert not any(i in journal[b] for i in a_ids)
    assert not [t for t in A_TOKENS if t in journal[b]]
    assert os.path.isdir(a) and os.path.isdir(b)
