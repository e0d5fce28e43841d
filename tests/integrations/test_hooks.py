"""Claude Code hooks: real hook JSON on stdin to the real command, stdout read as Claude Code
reads it. Fail-open cases exit 0, print nothing and finish within the 1.5 s bound."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from maestro_memory.client.integrations.hooks import DEADLINE_ENV
from maestro_memory.common import paths as daemon_paths
from maestro_memory.core import MemoryStore, Settings

from .support import run_cli

# A hang guard measured from outside (interpreter start included, so it cannot be the hook's
# DEADLINE on a loaded machine): a hook that waited on a hung daemon (30 s client timeout) or a
# held lock (forever) instead of its watchdog would exceed it. The "gave up" log lines prove
# the watchdog fired.
BOUND = 20.0


# The hook's own limits (0.95 s watchdog, 0.3 s daemon timeout) are stretched in proportion
# for the tests of what a hook does, so a loaded machine cannot make them give up; the tests of
# the limits themselves run with the real ones (``deadline=None``).
TEST_DEADLINE = "10"


def hook(
    event: str,
    payload: object,
    env: dict[str, str] | None = None,
    deadline: str | None = TEST_DEADLINE,
) -> tuple[subprocess.CompletedProcess[bytes], float]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if env is None:  # not the project of a Claude Code session these tests may run inside
        env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env = dict(env)
    env.pop(DEADLINE_ENV, None)
    if deadline is not None:
        env[DEADLINE_ENV] = deadline
    started = time.monotonic()
    proc = run_cli(["hook", "claude", event], input=data, env=env)
    return proc, time.monotonic() - started


def claude_reads(stdout: bytes, event_name: str) -> str:
    """What Claude Code takes from a hook's stdout: hookSpecificOutput.additionalContext."""
    doc = json.loads(stdout)
    out = doc["hookSpecificOutput"]
    assert out["hookEventName"] == event_name
    context = out["additionalContext"]
    assert isinstance(context, str)
    return context


def hook_log(home: Path) -> str:
    path = daemon_paths.resolve({"MAESTRO_HOME": str(home)}).log_dir / "hooks.log"
    return path.read_text() if path.exists() else ""


def start_payload(
    project: Path, source: str = "startup", session: str = "sess-1", cwd: Path | None = None
) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(cwd or project),
        "hook_event_name": "SessionStart",
        "source": source,
    }


@pytest.fixture
def memory_project(project: Path) -> Path:
    s = MemoryStore(project, clock=lambda: "2026-01-01")
    s.save_semantic("Always run the tests before committing", "quality_rule", 1.0)
    s.save_semantic("Prefers terse commit messages", "user_preference", 0.95)
    s.save_episodic("Working on the login form", "sess-0", 0.9)
    return project


# -- the three events ---------------------------------------------------------------------------
def test_session_start_injects_fenced_context(maestro_home: Path, memory_project: Path) -> None:
    proc, elapsed = hook("session-start", start_payload(memory_project))
    assert proc.returncode == 0, proc.stderr
    context = claude_reads(proc.stdout, "SessionStart")
    assert context.startswith("[Project Memory]") and context.endswith("[End Project Memory]")
    assert context.count("[Project Memory]") == 1  # the core's fence, not doubled
    assert "not instructions" in context
    assert "Always run the tests before committing" in context
    assert "Working on the login form" in context
    # initialize ran for this session: the episodic entry decayed once.
    store = MemoryStore(memory_project)
    assert [e.salience for e in store.episodic_entries()] == [0.8]
    assert elapsed < BOUND


def test_compaction_reinjects_without_decaying_again(
    maestro_home: Path, memory_project: Path
) -> None:
    first, _ = hook("session-start", start_payload(memory_project, "startup"))
    again, _ = hook("session-start", start_payload(memory_project, "compact"))

    def entries(block: str) -> list[str]:  # the entries, without their confidence
        return [line.split("] ", 1)[1] for line in block.splitlines() if line.startswith("- [")]

    # The same entries; the first build reinforced what it injected (back to 1.00, its
    # original, after the session's decay to 0.95), so only the numbers may differ.
    assert entries(claude_reads(again.stdout, "SessionStart")) == entries(
        claude_reads(first.stdout, "SessionStart")
    )
    assert [e.salience for e in MemoryStore(memory_project).episodic_entries()] == [0.8]


def test_project_found_from_a_subdirectory(maestro_home: Path, memory_project: Path) -> None:
    sub = memory_project / "src" / "deep"
    sub.mkdir(parents=True)
    proc, _ = hook("session-start", start_payload(memory_project, cwd=sub))
    assert "Prefers terse commit messages" in claude_reads(proc.stdout, "SessionStart")


def test_context_never_exceeds_the_budget(maestro_home: Path, project: Path) -> None:
    s = MemoryStore(project)
    for n in range(40):
        s.save_semantic(f"Rule number {n} about module m{n} must hold", "quality_rule", 1.0)
    env = dict(os.environ, MAESTRO_HOOK_MAX_TOKENS="60")
    proc, _ = hook("session-start", start_payload(project), env=env)
    context = claude_reads(proc.stdout, "SessionStart")
    assert context and -(-len(context) // 4) <= 60  # the core's estimator, ceil(/4)
    proc, _ = hook("session-start", start_payload(project, session="sess-2"))
    assert -(-len(claude_reads(proc.stdout, "SessionStart")) // 4) <= 500


def test_user_prompt_remembers_what_it_saved(maestro_home: Path, project: Path) -> None:
    (project / ".maestro").mkdir()  # a project with no memory yet
    payload = {
        "session_id": "sess-1",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "From now on, use pnpm instead of npm in this repo.",
    }
    proc, elapsed = hook("user-prompt", payload)
    assert proc.returncode == 0, proc.stderr
    line = json.loads(proc.stdout)["systemMessage"]  # shown to the person
    assert line.startswith("Remembered: ") and "pnpm" in line and "\n" not in line
    assert any("pnpm" in e.text for e in MemoryStore(project).semantic_entries())
    assert elapsed < BOUND

    quiet = dict(payload, prompt="What does this function return?")
    proc, _ = hook("user-prompt", quiet)
    assert proc.returncode == 0 and proc.stdout == b""


def test_a_prompt_brings_what_memory_holds_about_it_once(
    maestro_home: Path, memory_project: Path
) -> None:
    MemoryStore(memory_project).save_semantic(
        "Signup rate limit is 5 requests per minute", "architecture_decision", 0.6
    )
    hook("session-start", start_payload(memory_project, session="p1"))
    prompt = {
        "session_id": "p1",
        "cwd": str(memory_project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Why does the signup rate limit trigger so early?",
    }
    proc, _ = hook("user-prompt", prompt)
    context = claude_reads(proc.stdout, "UserPromptSubmit")
    assert "5 requests per minute" in context and -(-len(context) // 4) <= 200
    assert "Always run the tests" not in context  # already shown at session start
    again, _ = hook("user-prompt", prompt)
    assert again.returncode == 0 and again.stdout == b""  # nothing this session has not seen


def test_a_prompt_brings_back_an_older_session_note_about_it(
    maestro_home: Path, project: Path
) -> None:
    """Issue 29: "Recent context" holds the five newest notes; an older one the prompt is about
    comes back in the prompt's block (it used to be out of reach)."""
    s = MemoryStore(project)
    s.save_session_note("Task: moved the invoice PDF renderer to weasyprint", "old-1")
    for n in range(6):  # six newer sessions about other things push it out of the five
        s.save_session_note(f"Task: tidy the dashboard widgets, round {n}", f"new-{n}")
    start, _ = hook("session-start", start_payload(project, session="p1"))
    assert "invoice PDF renderer" not in claude_reads(start.stdout, "SessionStart")
    prompt = {
        "session_id": "p1",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "The invoice PDF renderer crashes on long tables, why?",
    }
    proc, _ = hook("user-prompt", prompt)
    context = claude_reads(proc.stdout, "UserPromptSubmit")
    assert "moved the invoice PDF renderer to weasyprint" in context
    assert "dashboard widgets" not in context  # not about the prompt, and already shown


def test_stop_is_not_a_session_end(maestro_home: Path, project: Path) -> None:
    s = MemoryStore(project, clock=lambda: "2026-01-01", settings=Settings(decay_unit="session"))
    s.save_semantic("Likes emoji in commit messages", "user_preference", 0.3)
    for sid in "abc":
        s.initialize(sid)
    assert any(e.state == "flagged" for e in s.semantic_entries())
    before = (project / ".maestro" / "memory" / "semantic.md").read_bytes()
    payload = {"session_id": "sess-1", "cwd": str(project), "hook_event_name": "Stop"}
    proc, _ = hook("stop", payload)
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    # Stop fires after every reply: nothing maintained, nothing removed.
    assert (project / ".maestro" / "memory" / "semantic.md").read_bytes() == before


def test_the_project_is_where_claude_started_not_where_the_agent_cd_to(
    maestro_home: Path, memory_project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "vendored"
    (other / ".maestro").mkdir(parents=True)  # another project the agent cd'ed into
    MemoryStore(other).save_semantic("Vendored code is never edited", "quality_rule", 1.0)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["CLAUDE_PROJECT_DIR"] = str(memory_project)
    proc, _ = hook("session-start", start_payload(memory_project, cwd=other), env=env)
    context = claude_reads(proc.stdout, "SessionStart")
    assert "Always run the tests before committing" in context and "Vendored" not in context
    # Without CLAUDE_PROJECT_DIR, the cwd decides.
    proc, _ = hook("session-start", start_payload(memory_project, session="s2", cwd=other))
    assert "Vendored" in claude_reads(proc.stdout, "SessionStart")


def _transcript(path: Path, project: Path, prompt: str) -> None:
    records = [
        {"type": "summary", "summary": "x", "leafUuid": "u"},
        {"type": "user", "message": {"role": "user", "content": prompt}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Edit",
                        "input": {"file_path": str(project / "src" / "login.ts")},
                    }
                ],
            },
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_session_end_leaves_a_note_the_next_session_sees(
    maestro_home: Path, memory_project: Path, tmp_path: Path
) -> None:
    transcript = tmp_path / "sess-9.jsonl"
    _transcript(transcript, memory_project, "Add rate limiting to the signup endpoint")
    end = {
        "session_id": "sess-9",
        "transcript_path": str(transcript),
        "cwd": str(memory_project),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    for _ in range(2):  # a resumed session ends again: still one note
        proc, _ = hook("session-end", end)
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    notes = [e for e in MemoryStore(memory_project).episodic_entries() if e.session_id == "sess-9"]
    assert len(notes) == 1 and notes[0].confidence == 0.7
    assert "Task: Add rate limiting to the signup endpoint" in notes[0].text
    assert "src/login.ts" in notes[0].text
    proc, _ = hook("session-start", start_payload(memory_project, session="sess-10"))
    assert "rate limiting to the signup endpoint" in claude_reads(proc.stdout, "SessionStart")
    # No prompt, no note; no transcript file, no error.
    transcript.write_text('{"type":"summary","summary":"x"}\n')
    proc, _ = hook("session-end", dict(end, session_id="sess-11"))
    missing = dict(end, session_id="sess-12", transcript_path=str(tmp_path / "gone.jsonl"))
    proc2, _ = hook("session-end", missing)
    assert proc.returncode == proc2.returncode == 0
    ids = {e.session_id for e in MemoryStore(memory_project).episodic_entries()}
    assert not ids & {"sess-11", "sess-12"}


def test_session_end_runs_maintenance(maestro_home: Path, project: Path) -> None:
    # Three sessions of decay in one day: the per-session unit (the spec literally).
    s = MemoryStore(project, clock=lambda: "2026-01-01", settings=Settings(decay_unit="session"))
    s.save_semantic("Likes emoji in commit messages", "user_preference", 0.3)
    s.save_semantic("Never commit secrets", "quality_rule", 1.0)
    s.initialize("a")
    s.initialize("b")  # 0.30 -> 0.20 -> ... -> below 0.2 after the third
    s.initialize("c")
    assert any(e.state == "flagged" for e in s.semantic_entries())
    payload = {
        "session_id": "sess-1",
        "cwd": str(project),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    proc, elapsed = hook("session-end", payload)
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    assert [e.text for e in s.semantic_entries()] == ["Never commit secrets"]
    assert "Removed:" in (project / ".maestro" / "memory" / "semantic.md").read_text()
    assert elapsed < BOUND


def test_hooks_go_through_a_running_daemon(daemon: Any, memory_project: Path) -> None:
    daemon.register(memory_project)
    proc, elapsed = hook("session-start", start_payload(memory_project))
    assert "Always run the tests" in claude_reads(proc.stdout, "SessionStart")
    assert elapsed < BOUND
    proc, elapsed = hook(
        "user-prompt",
        {
            "session_id": "sess-1",
            "cwd": str(memory_project),
            "prompt": "Never use default exports.",
        },
    )
    assert json.loads(proc.stdout)["systemMessage"].startswith("Remembered: ")
    texts = [e["text"] for e in daemon.result("entries", memory_project)["entries"]]
    assert any("default exports" in t for t in texts)  # the daemon's view has it
    proc, elapsed = hook("session-end", {"session_id": "sess-1", "cwd": str(memory_project)})
    assert proc.returncode == 0 and proc.stdout == b"" and elapsed < BOUND
    assert hook_log(daemon.home) == ""  # nothing went wrong, nothing fell back


# -- fail-open ------------------------------------------------------------------------------------
def assert_silent(proc: subprocess.CompletedProcess[bytes], elapsed: float) -> None:
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert elapsed < BOUND, elapsed


@pytest.mark.parametrize("stdin", [b"", b"not json {", b"[1, 2]", b"\xff\xfe", b'"text"'])
def test_garbage_stdin(maestro_home: Path, memory_project: Path, stdin: bytes) -> None:
    proc, elapsed = hook("session-start", stdin)
    assert_silent(proc, elapsed)
    assert "hook input" in hook_log(maestro_home)


def test_no_project(maestro_home: Path, tmp_path: Path) -> None:
    lonely = tmp_path / "no-memory-here"
    lonely.mkdir()
    for event in ("session-start", "user-prompt", "session-end"):
        proc, elapsed = hook(
            event, {"session_id": "s", "cwd": str(lonely), "prompt": "always use tabs"}
        )
        assert_silent(proc, elapsed)
    assert "no .maestro/ at or above" in hook_log(maestro_home)
    assert not (lonely / ".maestro").exists()


def test_dead_daemon_leaves_its_socket(maestro_home: Path, memory_project: Path) -> None:
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    paths.runtime_dir.mkdir(parents=True, exist_ok=True)
    paths.socket_path.parent.mkdir(parents=True, exist_ok=True)
    paths.socket_path.touch()  # a killed daemon's socket; nobody holds the lock
    paths.lock_path.touch()
    proc, elapsed = hook("session-start", start_payload(memory_project))
    assert proc.returncode == 0 and elapsed < BOUND
    assert "Always run the tests" in claude_reads(proc.stdout, "SessionStart")  # direct mode


@pytest.fixture
def hung_daemon(maestro_home: Path) -> Iterator[zmq.Socket[Any]]:
    """A 'daemon' that holds the lock and accepts requests on its socket but never answers."""
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    paths.runtime_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths.socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = os.open(paths.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    router.bind(paths.endpoint)
    try:
        yield router
    finally:
        router.close()
        ctx.term()
        os.close(lock)


def test_hung_daemon_user_prompt(
    maestro_home: Path, memory_project: Path, hung_daemon: zmq.Socket[Any]
) -> None:
    payload = {"session_id": "s", "cwd": str(memory_project), "prompt": "always use tabs"}
    proc, elapsed = hook("user-prompt", payload)
    assert proc.returncode == 0 and elapsed < BOUND, elapsed
    told = json.loads(proc.stdout)["systemMessage"]  # not silent: the rule may not be kept
    assert told == (
        "Not remembered (the memory did not answer in time; it may still be saved): Always use tabs"
    ), told
    assert hung_daemon.poll(0)  # the request did reach the 'daemon'
    assert "did not answer" in hook_log(maestro_home)
    # Not repeated in direct mode: the daemon may still apply it.
    assert not any("tabs" in e.text for e in MemoryStore(memory_project).semantic_entries())


def test_hung_daemon_session_start_falls_back_to_the_files(
    maestro_home: Path, memory_project: Path, hung_daemon: zmq.Socket[Any]
) -> None:
    proc, elapsed = hook("session-start", start_payload(memory_project))
    assert proc.returncode == 0 and elapsed < BOUND, elapsed
    assert "Always run the tests" in claude_reads(proc.stdout, "SessionStart")
    assert "using the files directly" in hook_log(maestro_home)


def test_everything_hung_gives_up_within_the_bound(
    maestro_home: Path, memory_project: Path, hung_daemon: zmq.Socket[Any]
) -> None:
    # The project's own lock is held too: direct mode would wait for it forever.
    lock_path = memory_project / ".maestro" / "memory" / ".lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc, elapsed = hook("session-end", start_payload(memory_project), deadline=None)
        assert_silent(proc, elapsed)
        # A session start is never silently without memory: none was kept here, so it is told.
        proc, elapsed = hook("session-start", start_payload(memory_project), deadline=None)
        assert proc.returncode == 0 and elapsed < BOUND
        told = json.loads(proc.stdout)
        assert told["systemMessage"].startswith("Project memory could not be loaded this time")
        assert "deadline" in claude_reads(proc.stdout, "SessionStart")
    finally:
        os.close(fd)
    assert "gave up after" in hook_log(maestro_home)
