"""Issue 28: a session's end is handed to the daemon, and a session start that cannot get its
context still gets memory (the last block served for the project) or is told it did not.

A real daemon over its socket, real transcripts, the hook run as a subprocess."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from maestrod_testkit import wait_for

from maestro_memory.client.integrations import hooks
from maestro_memory.client.integrations.hooks import DEADLINE_ENV
from maestro_memory.core import MemoryStore, Settings

from .test_hooks import BOUND, _transcript, claude_reads, hook, hook_log, start_payload


@contextmanager
def project_lock(project: Path) -> Iterator[None]:
    """Hold the project's memory lock: no transaction, the daemon's or a hook's, can commit."""
    fd = os.open(project / ".maestro" / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _decayed(project: Path) -> MemoryStore:
    """A project with one entry decayed below the flag line: maintenance removes it."""
    s = MemoryStore(project, clock=lambda: "2026-01-01", settings=Settings(decay_unit="session"))
    s.save_semantic("Likes emoji in commit messages", "user_preference", 0.3)
    s.save_semantic("Never commit secrets", "quality_rule", 1.0)
    for session in ("a", "b", "c"):
        s.initialize(session)
    assert any(e.state == "flagged" for e in s.semantic_entries())
    return s


def _end(project: Path, transcript: Path, session: str = "sess-9") -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }


def _episodic(project: Path) -> str:
    path = project / ".maestro" / "memory" / "episodic.md"
    return path.read_text() if path.exists() else ""


def test_session_end_is_acknowledged_then_done_by_the_daemon(
    daemon: Any, project: Path, tmp_path: Path
) -> None:
    store = _decayed(project)
    daemon.register(project)
    transcript = tmp_path / "sess-9.jsonl"
    _transcript(transcript, project, "Add rate limiting to the signup endpoint")
    with project_lock(project):
        # Nothing can be committed while the test holds the lock: a hook that waited for the
        # note or the maintenance would time out on the daemon and then give up on the lock
        # (both logged). It returns, having logged nothing: the daemon acknowledged it.
        proc, _ = hook("session-end", _end(project, transcript))
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
        assert hook_log(daemon.home) == ""
        # The protocol's view of the same: the acknowledgement comes before the work.
        ack = daemon.result("end_session", project, session_id="sess-8")
        assert ack == {"queued": True, "session_id": "sess-8"}
        assert "rate limiting" not in _episodic(project)
    # The lock released, the daemon's writer does the note and the maintenance.
    wait_for(
        lambda: "rate limiting to the signup endpoint" in _episodic(project), 30, message="note"
    )
    semantic = project / ".maestro" / "memory" / "semantic.md"
    wait_for(lambda: "Removed:" in semantic.read_text(), 30, message="maintenance")
    assert [e.text for e in store.semantic_entries()] == ["Never commit secrets"]
    notes = [e for e in store.episodic_entries() if e.session_id == "sess-9"]
    assert len(notes) == 1 and "src/login.ts" in notes[0].text
    assert hook_log(daemon.home) == ""


def test_end_session_failures_reach_the_daemon_log(
    daemon: Any, project: Path, tmp_path: Path
) -> None:
    MemoryStore(project).save_semantic("Never commit secrets", "quality_rule", 1.0)
    daemon.register(project)
    gone = tmp_path / "gone.jsonl"
    assert daemon.result("end_session", project, session_id="s1", transcript_path=str(gone))
    wait_for(lambda: "cannot read the transcript" in daemon.log_text(), 30, message="log line")
    refused = daemon.request("end_session", project, transcript_path="relative.jsonl")
    assert refused["error"]["code"] == "bad_request"  # checked before it is acknowledged


def test_session_end_without_the_daemon_writes_the_note(
    maestro_home: Path, project: Path, tmp_path: Path
) -> None:
    store = _decayed(project)
    transcript = tmp_path / "sess-9.jsonl"
    _transcript(transcript, project, "Add rate limiting to the signup endpoint")
    proc, _ = hook("session-end", _end(project, transcript))  # no daemon: the direct path
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    assert "rate limiting to the signup endpoint" in _episodic(project)
    assert [e.text for e in store.semantic_entries()] == ["Never commit secrets"]


def _kept(project: Path) -> Path:
    return hooks._last_block_path(project)


def test_a_hung_daemon_serves_the_last_block_or_tells(daemon: Any, project: Path) -> None:
    MemoryStore(project).save_semantic("Always run the tests first", "quality_rule", 1.0)
    daemon.register(project)
    proc, _ = hook("session-start", start_payload(project))
    assert "Always run the tests first" in claude_reads(proc.stdout, "SessionStart")
    kept = _kept(project)
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert json.loads(kept.read_text())["project"] == str(project)
    # The lock first: the daemon may still be committing the first session's writes, and
    # stopped while it holds the lock it would block this test for good.
    with project_lock(project):  # and the direct path cannot initialize either
        daemon.signal(signal.SIGSTOP)  # accepts on its socket, never answers
        try:
            proc, elapsed = hook("session-start", start_payload(project, session="s2"), None)
            assert proc.returncode == 0 and elapsed < BOUND
            context = claude_reads(proc.stdout, "SessionStart")
            first, _, block = context.partition("\n")
            assert "may be out of date" in first and "deadline" in first
            assert "Always run the tests first" in block
            assert len(context) <= 4 * hooks.hook_budget()  # within the token budget
            kept.unlink()  # none kept: the session is told
            proc, elapsed = hook("session-start", start_payload(project, session="s3"), None)
            assert proc.returncode == 0 and elapsed < BOUND
            told = json.loads(proc.stdout)
            assert told["systemMessage"] == claude_reads(proc.stdout, "SessionStart")
            assert "could not be loaded this time" in told["systemMessage"]
        finally:
            daemon.signal(signal.SIGCONT)
    log = hook_log(daemon.home)
    assert "gave up after" in log
    assert "served the last block" in log and "the session is told" in log


def test_an_empty_context_forgets_the_last_block(daemon: Any, project: Path) -> None:
    MemoryStore(project).save_semantic("Always run the tests first", "quality_rule", 1.0)
    daemon.register(project)
    hook("session-start", start_payload(project))
    assert _kept(project).exists()
    forgotten = daemon.result("forget", project, match="Always run the tests first")
    assert forgotten
    proc, _ = hook("session-start", start_payload(project, session="s2"))
    assert proc.returncode == 0 and proc.stdout == b""
    assert not _kept(project).exists()


def test_forget_takes_the_last_block_with_it(daemon: Any, project: Path) -> None:
    """The kept block quotes the memory: what is forgotten must not wait there for a hung
    daemon to serve it again. Through the daemon, and in direct mode."""
    store = MemoryStore(project)
    store.save_semantic("Deploy key is kept in the team vault", "project_context", 1.0)
    store.save_semantic("Always run the tests first", "quality_rule", 1.0)
    daemon.register(project)
    hook("session-start", start_payload(project))
    assert "team vault" in _kept(project).read_text()
    dry = daemon.result("forget", project, match="team vault", dry_run=True)
    assert dry["dry_run"] is True and _kept(project).exists()  # a dry run changes nothing
    daemon.result("forget", project, match="team vault")
    assert not _kept(project).exists()

    assert daemon.stop() == 0
    hook("session-start", start_payload(project, session="s2"))  # direct mode keeps one again
    assert "Always run the tests first" in _kept(project).read_text()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "maestro_memory.client.cli",
            "-C",
            str(project),
            "forget",
            "--match",
            "tests first",
            "--json",
        ],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["via"] == "direct"
    assert not _kept(project).exists()


# The watchdog's alarm works only in the main thread: run there the hook has nothing but its
# backstop, which must still serve the last block before it ends the process.
IN_A_THREAD = (
    "import threading\n"
    "from maestro_memory.client.integrations.hooks import run_hook\n"
    "t = threading.Thread(target=run_hook, args=('claude', 'session-start'))\n"
    "t.start(); t.join()\n"
)


def test_the_hard_deadline_backstop_serves_the_last_block(
    maestro_home: Path, project: Path
) -> None:
    MemoryStore(project).save_semantic("Always run the tests first", "quality_rule", 1.0)
    proc, _ = hook("session-start", start_payload(project))  # no daemon: direct mode
    assert "Always run the tests first" in claude_reads(proc.stdout, "SessionStart")
    assert _kept(project).exists()
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", DEADLINE_ENV)}
    payload = json.dumps(start_payload(project, session="s2")).encode()
    with project_lock(project):  # initialize waits for it, and no alarm interrupts the wait
        done = subprocess.run(
            [sys.executable, "-c", IN_A_THREAD],
            input=payload,
            env=env,
            capture_output=True,
            timeout=BOUND,
        )
    assert done.returncode == 0, done.stderr
    first, _, block = claude_reads(done.stdout, "SessionStart").partition("\n")
    assert "hard deadline" in first and "may be out of date" in first
    assert "Always run the tests first" in block
    assert "still running after" in hook_log(maestro_home)
