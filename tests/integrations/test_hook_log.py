"""``hooks.log`` rotation under concurrent hooks: real hook processes, the real log file.

Many hooks start at once (an agent with several sessions, a team of subagents), and the log is
rotated when it passes ``LOG_ROTATE_BYTES``: the one older generation (``hooks.log.1``) must be
the full log that was rotated, never a fresh log renamed over it by a second hook.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from maestro_memory.client.integrations.hooks import DEADLINE_ENV, LOG_NAME, LOG_ROTATE_BYTES
from maestro_memory.common import paths as daemon_paths

from .support import maestroctl_cmd

HOOKS_AT_ONCE = 12
WAIT = 120.0


def _log(home: Path) -> Path:
    return daemon_paths.resolve({"MAESTRO_HOME": str(home)}).log_dir / LOG_NAME


def _prefill(path: Path) -> bytes:
    """A log just over the rotation size, whose lines say which they are."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines, size, n = [], 0, 0
    while size <= LOG_ROTATE_BYTES:
        line = f"2026-01-01T00:00:00.000+00:00 pid=1 claude earlier: line {n}\n".encode()
        lines.append(line)
        size += len(line)
        n += 1
    data = b"".join(lines)
    path.write_bytes(data)
    return data


def _hook_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env[DEADLINE_ENV] = "30"  # the hooks here must not give up waiting on a held log lock
    return env


def _start_hooks(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` real session-start hooks, each blocked on its stdin until ``_release``."""
    return [
        subprocess.Popen(
            [*maestroctl_cmd(), "hook", "claude", "session-start"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_hook_env(),
        )
        for _ in range(count)
    ]


def _release(hooks: list[subprocess.Popen[bytes]], lonely: Path) -> None:
    """Hand every hook its payload at once (a folder with no project: each logs one line)."""
    payload = json.dumps({"session_id": "s", "cwd": str(lonely)}).encode()
    for proc in hooks:
        assert proc.stdin is not None
        proc.stdin.write(payload)
    for proc in hooks:
        assert proc.stdin is not None
        proc.stdin.close()


def _finish(hooks: list[subprocess.Popen[bytes]]) -> set[int]:
    for proc in hooks:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=WAIT) == 0 and out == b"", err
    return {proc.pid for proc in hooks}


def _assert_one_line_each(log: Path, pids: set[int]) -> None:
    lines = log.read_text().splitlines()
    assert len(lines) == len(pids), lines
    logged = {int(m.group(1)) for m in (re.search(r"pid=(\d+)", line) for line in lines) if m}
    assert logged == pids
    assert all("no .maestro/ at or above" in line for line in lines)


def test_concurrent_hooks_rotate_once_and_lose_no_generation(
    maestro_home: Path, tmp_path: Path
) -> None:
    lonely = tmp_path / "no-memory-here"
    lonely.mkdir()
    log = _log(maestro_home)
    earlier = _prefill(log)
    hooks = _start_hooks(HOOKS_AT_ONCE)
    _release(hooks, lonely)  # all reach the over-full log at about the same moment
    pids = _finish(hooks)
    assert log.with_name(LOG_NAME + ".1").read_bytes() == earlier  # rotated once, kept whole
    _assert_one_line_each(log, pids)


def _waiting_on(inode: int) -> int:
    """How many processes wait for a ``flock`` on the file with this inode (/proc/locks)."""
    lines = Path("/proc/locks").read_text().splitlines()
    return sum(1 for line in lines if " -> FLOCK " in line and f":{inode} " in line)


def test_hooks_wait_for_a_rotation_and_write_to_the_new_log(
    maestro_home: Path, tmp_path: Path
) -> None:
    """Deterministic: the test is the hook in the middle of a rotation (it holds the lock);
    the others wait for it, then see that the log was renamed and write to the new one: not
    a line into the rotated generation, and no second rotation."""
    if not Path("/proc/locks").exists():
        pytest.skip("the waiters are counted in Linux's /proc/locks")
    lonely = tmp_path / "no-memory-here"
    lonely.mkdir()
    log = _log(maestro_home)
    earlier = _prefill(log)
    held = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        hooks = _start_hooks(HOOKS_AT_ONCE // 2)
        _release(hooks, lonely)
        deadline = time.monotonic() + WAIT
        inode = os.fstat(held).st_ino
        while _waiting_on(inode) < len(hooks):  # a condition with a deadline, not a sleep
            assert time.monotonic() < deadline, "the hooks never waited for the log's lock"
            assert all(proc.poll() is None for proc in hooks), "a hook did not wait"
            time.sleep(0.02)
        os.replace(log, log.with_name(LOG_NAME + ".1"))  # what the rotating hook does
    finally:
        os.close(held)  # releases the lock
    pids = _finish(hooks)
    assert log.with_name(LOG_NAME + ".1").read_bytes() == earlier
    _assert_one_line_each(log, pids)


CHILD = """
import sys
from pathlib import Path
from maestro_memory.client.integrations.hooks import append_rotating
path, child, count, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for n in range(count):
    append_rotating(path, f"child={child} n={n}\\n".encode(), limit)
"""


def test_rotation_under_heavy_contention_keeps_whole_generations(tmp_path: Path) -> None:
    """Many rotations (a small limit) by writers in a tight loop: every rotated generation is
    a full log, and what is kept of each writer is the unbroken tail of what it wrote."""
    path = tmp_path / LOG_NAME
    limit, count, children = 2000, 400, 6
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(c), str(count), str(limit)],
            stderr=subprocess.PIPE,
        )
        for c in range(children)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 0, err
    older = path.with_name(LOG_NAME + ".1").read_text()
    current = path.read_text()
    assert len(older.encode()) > limit  # a whole generation, not a fresh log renamed over it
    longest = max(len(line) + 1 for line in (older + current).splitlines())
    assert len(current.encode()) <= limit + longest
    kept: dict[str, list[int]] = {}
    for line in (older + current).splitlines():
        match = re.fullmatch(r"child=(\d+) n=(\d+)", line)
        assert match, line
        kept.setdefault(match.group(1), []).append(int(match.group(2)))
    for child, numbers in kept.items():
        assert numbers == list(range(numbers[0], count)), child  # in order, no gap, to the end
