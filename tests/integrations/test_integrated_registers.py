"""An integrated project is the daemon's by itself (issue 36): ``integrate`` registers it with a
running daemon (starting none), and a session start in a project that holds
``.maestro/memory`` registers it with a running daemon that does not own it. Real CLI, real
hooks, a real daemon over its socket."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore

from .support import run_cli
from .test_hooks import claude_reads, hook, hook_log, start_payload


def registered(daemon: Any) -> list[str]:
    return [p["path"] for p in daemon.result("projects")["projects"]]


def cli_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["MAESTRO_HOME"] = str(home)
    env["HOME"] = str(home / "userhome")
    return env


@pytest.fixture
def memory_project(project: Path) -> Path:
    MemoryStore(project, clock=lambda: "2026-01-01").save_semantic(
        "Always run the tests before committing", "quality_rule", 1.0
    )
    return project


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_integrate_registers_the_project_with_a_running_daemon(
    daemon: Any, memory_project: Path, agent: str
) -> None:
    env = cli_env(daemon.home)
    proc = run_cli(["--json", "-C", str(memory_project), "integrate", agent], env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["result"]["registered"] is True
    assert str(memory_project) in registered(daemon)
    again = run_cli(["-C", str(memory_project), "integrate", agent], env=env)
    assert again.returncode == 0, again.stderr
    assert b"already registered" in again.stdout
    assert registered(daemon) == [str(memory_project)]


def test_integrate_without_a_daemon_starts_none_and_says_so(
    maestro_home: Path, memory_project: Path
) -> None:
    from maestro_memory.common import paths

    proc = run_cli(["-C", str(memory_project), "integrate", "claude"], env=cli_env(maestro_home))
    assert proc.returncode == 0, proc.stderr
    assert b"maestrod is not running (nothing started)" in proc.stdout
    p = paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    assert not p.socket_path.exists() and not p.pid_path.exists()


def test_dry_run_registers_nothing(daemon: Any, memory_project: Path) -> None:
    env = cli_env(daemon.home)
    proc = run_cli(["-C", str(memory_project), "integrate", "claude", "--dry-run"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert registered(daemon) == []


def test_a_session_start_registers_a_memory_project_with_the_running_daemon(
    daemon: Any, memory_project: Path
) -> None:
    assert registered(daemon) == []
    proc, _ = hook("session-start", start_payload(memory_project))
    assert "Always run the tests" in claude_reads(proc.stdout, "SessionStart")
    assert registered(daemon) == [str(memory_project)]
    assert "registering" in hook_log(daemon.home)
    # The session was served by the daemon: its session id is in the daemon's journal.
    log = daemon.result("log", memory_project)
    assert any(
        r.get("op") == "initialize" and r.get("session_id") == "sess-1" for r in log["records"]
    ), log


def test_a_bare_maestro_dir_is_not_registered_by_a_session_start(
    daemon: Any, project: Path
) -> None:
    (project / ".maestro").mkdir()
    proc, _ = hook("session-start", start_payload(project))
    assert proc.returncode == 0
    assert registered(daemon) == []


def test_a_linked_memory_dir_is_not_registered(
    daemon: Any, memory_project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.rename(memory_project / ".maestro", elsewhere / ".maestro")
    os.symlink(elsewhere / ".maestro", memory_project / ".maestro")
    hook("session-start", start_payload(memory_project))
    assert registered(daemon) == []
