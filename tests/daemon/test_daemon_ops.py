"""Every op of protocol v1 against a real maestrod, over its socket."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.core import MemoryStore


@pytest.fixture
def proj(daemon: DaemonHandle, project: Path) -> Path:
    daemon.register(project)
    return project


def error_code(reply: dict[str, Any]) -> str:
    assert not reply["ok"], reply
    code: str = reply["error"]["code"]
    assert reply["error"]["message"]
    return code


def test_hello_and_ping(daemon: DaemonHandle) -> None:
    hello = daemon.result("hello", versions=[1])
    assert hello["versions"] == [1]
    assert hello["pid"] == daemon.proc.pid
    assert isinstance(hello["version"], str) and hello["version"]
    assert daemon.result("ping")["pong"] is True


def test_register_projects_unregister(daemon: DaemonHandle, project: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    result = daemon.register(link)
    assert result == {
        "path": str(project),
        "added": True,
        "memory_dir": str(project / ".maestro" / "memory"),
    }
    assert daemon.register(project)["added"] is False  # realpath: the same project
    listed = daemon.result("projects")["projects"]
    assert listed == [
        {
            "path": str(project),
            "memory_dir": str(project / ".maestro/memory"),
            "memory_dir_exists": False,
            "exists": True,
            # no memory yet: maintenance skips it and nothing re-creates it (statefiles.missing)
            "missing": f"the memory folder {project / '.maestro/memory'} is missing",
        }
    ]
    assert daemon.result("unregister", path=str(project)) == {"path": str(project), "removed": True}
    assert daemon.result("projects")["projects"] == []
    assert error_code(daemon.request("unregister", path=str(project))) == "not_registered"


def test_register_refuses_what_is_not_a_directory(daemon: DaemonHandle, tmp_path: Path) -> None:
    assert error_code(daemon.request("register", path=str(tmp_path / "missing"))) == "bad_request"
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert error_code(daemon.request("register", path=str(afile))) == "conflict"
    assert error_code(daemon.request("register")) == "bad_request"
    assert error_code(daemon.request("register", path=7)) == "bad_request"


def test_memory_ops_round_trip(daemon: DaemonHandle, proj: Path) -> None:
    init = daemon.result("initialize", proj, session_id="s1")
    assert init["applied"] is True
    assert sorted(init["created"]) == ["archive.md", "episodic.md", "semantic.md"]

    saved = daemon.result(
        "save_semantic",
        proj,
        fact="Always run the tests before committing",
        category="quality_rule",
        confidence=1.0,
    )
    assert saved["action"] == "added"
    fact_id = saved["entry"]["id"]
    episode = daemon.result(
        "save_episodic",
        proj,
        context="Worked on the auth middleware",
        session_id="s1",
        confidence=0.9,
    )["entry"]
    assert episode["salience"] == 1.0 and episode["confidence"] == 0.9

    signals = daemon.result(
        "detect_signals",
        proj,
        user_message="I prefer tabs over spaces in this repo",
        assistant_response="ok",
    )["signals"]
    assert signals and signals[0]["action"] == "added"

    built = daemon.result(
        "build_context", proj, task="auth middleware", max_tokens=400, session_id="s1"
    )
    assert "Always run the tests before committing" in built["context"]
    assert fact_id in built["included"] and episode["id"] in built["included"]
    assert built["tokens"] > 0

    entries = daemon.result("entries", proj)
    assert {e["id"] for e in entries["entries"]} >= {fact_id, episode["id"]}
    assert entries["problems"] == {}
    semantic = daemon.result("entries", proj, sector="semantic")["entries"]
    assert all(e["sector"] == "semantic" for e in semantic)
    assert daemon.result("entries", proj, sector="archive")["entries"] == []

    reinforced = daemon.result("reinforce", proj, entry_id=episode["id"], confirmed=True)
    assert reinforced["entry"]["id"] == episode["id"]

    dry = daemon.result("maintenance", proj, dry_run=True)
    assert dry["dry_run"] is True and dry["applied"] == []
    real = daemon.result("maintenance", proj)
    assert real["dry_run"] is False

    # What the daemon answered is what is on disk: the direct path reads the same.
    on_disk = {e.id for e in MemoryStore(proj).semantic_entries()}
    assert fact_id in on_disk

    records = daemon.result("log", proj, limit=100)["records"]
    ops = [r["op"] for r in records]
    assert ops[:4] == ["initialize", "save_semantic", "save_episodic", "detect_signals"]
    added = records[1]
    assert added["entries"] == [fact_id]
    assert added["changes"] == [
        {"id": fact_id, "before": None, "after": {"confidence": 1.0, "salience": None}}
    ]
    assert added["pid"] == os.getpid()
    assert records[2]["session_id"] == "s1"
    assert daemon.result("log", proj, limit=1)["records"] == records[-1:]


def test_reinforcement_after_build_context_is_journalled(daemon: DaemonHandle, proj: Path) -> None:
    daemon.result(
        "save_semantic",
        proj,
        fact="Rate limiting applies per client address",
        category="architecture_decision",
        confidence=0.6,
    )
    built = daemon.result("build_context", proj, task="rate limiting", session_id="s9")
    assert built["relevant"], built

    def reinforced() -> bool:
        records = daemon.result("log", proj)["records"]
        return any(r["op"] == "reinforce_referenced" and r["session_id"] == "s9" for r in records)

    wait_for(reinforced, message="the queued reference reinforcement")


def test_op_argument_errors(daemon: DaemonHandle, proj: Path) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("save_semantic", {"fact": "x y z"}, "bad_request"),  # category missing
        ("save_semantic", {"fact": "Use pnpm", "category": "nonsense"}, "bad_request"),
        (
            "save_semantic",
            {"fact": "Use pnpm", "category": "project_context", "confidence": 3},
            "bad_request",
        ),
        ("save_semantic", {"fact": 5, "category": "project_context"}, "bad_request"),
        ("save_semantic", {"fact": "a", "category": "project_context", "extra": 1}, "bad_request"),
        ("save_episodic", {"context": "x"}, "bad_request"),
        ("build_context", {"max_tokens": "many"}, "bad_request"),
        ("entries", {"sector": "nope"}, "bad_request"),
        ("reinforce", {"entry_id": "s-00000000"}, "not_found"),
        ("maintenance", {"decisions": {"s-00000000": "remove"}}, "not_found"),
        ("maintenance", {"decisions": ["x"]}, "bad_request"),
        ("log", {"limit": 0}, "bad_request"),
        ("initialize", {"session_id": "bad]id"}, "bad_request"),
    ]
    for op, args, code in cases:
        assert error_code(daemon.send(op, proj, args)) == code, (op, args)
    assert daemon.result("ping")["pong"]


def test_rejected_maintenance_decision(daemon: DaemonHandle, proj: Path) -> None:
    saved = daemon.result(
        "save_semantic",
        proj,
        fact="Main branch is develop",
        category="project_context",
        confidence=0.9,
    )
    reply = daemon.request("maintenance", proj, decisions={saved["entry"]["id"]: "remove"})
    assert error_code(reply) == "rejected"


def test_status(daemon: DaemonHandle, proj: Path) -> None:
    daemon.result(
        "save_semantic",
        proj,
        fact="CI runs on GitHub Actions",
        category="project_context",
        confidence=0.9,
    )
    daemon.result("build_context", proj)
    status = daemon.status()
    assert status["process"]["pid"] == daemon.proc.pid
    for key in ("uptime_s", "rss_bytes", "cpu_percent", "threads", "open_files"):
        assert isinstance(status["process"][key], int | float), key
    assert status["process"]["rss_bytes"] > 0 and status["process"]["threads"] >= 3
    assert status["version"] and status["versions"] == [1]
    requests = status["requests"]
    assert requests["served"] >= 3
    assert requests["ops"]["save_semantic"]["count"] == 1
    assert (
        requests["ops"]["save_semantic"]["p99_ms"] >= requests["ops"]["save_semantic"]["p50_ms"] > 0
    )
    assert status["write_queue_depth"] == 0
    info = status["projects"][str(proj)]
    assert info["entries"]["semantic"] == 1
    assert info["memory_dir_exists"] is True
    assert info["watcher"] == "inotify"
    assert info["problems"] == {} and info["read_error"] is None
    assert info["maintenance"]["next"] == status["maintenance"]["next_run"]
    assert status["maintenance"]["cron"] == "30 23 * * *"


def test_reinforce_on_setting_from_config(daemon_factory: DaemonFactory, project: Path) -> None:
    daemon = daemon_factory(config='[core]\nreinforce_on = "relevant"\n')
    daemon.register(project)
    daemon.result(
        "save_semantic",
        project,
        fact="Staging deploys happen on Fridays",
        category="project_context",
        confidence=0.9,
    )
    built = daemon.result("build_context", project, task="zzz", session_id="s1")
    # "relevant": an entry injected only because it ranks high is not referenced.
    assert built["included"] and built["relevant"] == []


def test_reinforce_on_default_is_injected(daemon: DaemonHandle, proj: Path) -> None:
    saved = daemon.result(
        "save_semantic",
        proj,
        fact="Staging deploys happen on Fridays",
        category="project_context",
        confidence=0.9,
    )
    built = daemon.result("build_context", proj, task="zzz", session_id="s1")
    # Every injected entry counts as referenced, relevant to the task or not.
    assert built["relevant"] == [saved["entry"]["id"]]


def test_shutdown_op(daemon: DaemonHandle) -> None:
    assert daemon.result("shutdown")["stopping"] is True
    assert daemon.proc.wait(10) == 0
    assert not daemon.paths.socket_path.exists()
