"""A prompt hook that could not keep a stated rule says so, in one line to the person
("Not remembered (reason): …"): a secret refused, a full disk (a real tmpfs), a busy lock, a
daemon that did not answer. Real hook processes, direct mode and through a daemon."""

from __future__ import annotations

import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore

from .test_hooks import hook, hook_log

RULE = "Always run the linter before committing."
PROSE_SECRET = "From now on, ssh root@10.0.4.12 with password hunter2! to deploy."


def told(stdout: bytes) -> str:
    """The one line the person sees (``systemMessage``)."""
    assert stdout, "the hook printed nothing"
    message = json.loads(stdout)["systemMessage"]
    assert isinstance(message, str) and "\n" not in message
    return message


def prompt(project: Path, text: str) -> dict[str, Any]:
    return {"session_id": "s-1", "cwd": str(project), "prompt": text}


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_a_rule_with_a_prose_secret_is_refused_and_the_person_is_told(
    request: pytest.FixtureRequest, maestro_home: Path, project: Path, with_daemon: bool
) -> None:
    (project / ".maestro").mkdir()
    if with_daemon:
        request.getfixturevalue("daemon").register(project)
    proc, _ = hook("user-prompt", prompt(project, PROSE_SECRET))
    assert proc.returncode == 0, proc.stderr
    line = told(proc.stdout)
    assert line.startswith("Not remembered (contains a secret (password)"), line
    assert "[redacted: password]" in line and "hunter2" not in line
    assert MemoryStore(project).semantic_entries() == []
    for path in (project / ".maestro").rglob("*"):
        assert not path.is_file() or b"hunter2" not in path.read_bytes(), path


def test_saved_and_refused_rules_of_one_prompt_are_both_told(
    maestro_home: Path, project: Path
) -> None:
    (project / ".maestro").mkdir()
    proc, _ = hook("user-prompt", prompt(project, f"{RULE} Also, {PROSE_SECRET}"))
    line = told(proc.stdout)
    assert line.startswith("Remembered: Always run the linter before committing"), line
    assert "Not remembered (contains a secret" in line and "hunter2" not in line


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_a_full_disk_is_told(
    request: pytest.FixtureRequest, maestro_home: Path, tiny_disk: Path, with_daemon: bool
) -> None:
    root = tiny_disk / "proj"
    MemoryStore(root).save_semantic("Use pnpm, not npm", "user_preference", 1.0)
    if with_daemon:
        request.getfixturevalue("daemon").register(root)
    before = (root / ".maestro" / "memory" / "semantic.md").read_bytes()
    filler = fill(tiny_disk)
    proc, _ = hook("user-prompt", prompt(root, RULE))
    assert proc.returncode == 0, proc.stderr
    line = told(proc.stdout)
    assert line == "Not remembered (disk full): Always run the linter before committing", line
    assert (root / ".maestro" / "memory" / "semantic.md").read_bytes() == before
    filler.unlink()
    # Nothing to remember: nothing to tell, even when the save fails.
    fill(tiny_disk)
    proc, _ = hook("user-prompt", prompt(root, "what does this function do?"))
    assert b"Not remembered" not in proc.stdout


def test_a_busy_lock_is_told(maestro_home: Path, project: Path) -> None:
    MemoryStore(project).save_semantic("Use pnpm, not npm", "user_preference", 1.0)
    fd = os.open(project / ".maestro" / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        proc, _ = hook("user-prompt", prompt(project, RULE), deadline="3")
    finally:
        os.close(fd)
    line = told(proc.stdout)
    assert line.startswith("Not remembered (the memory is busy"), (line, hook_log(maestro_home))
    assert not any("linter" in e.text for e in MemoryStore(project).semantic_entries())
