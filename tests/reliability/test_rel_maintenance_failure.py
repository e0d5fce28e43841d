"""Scheduled maintenance of a project whose files cannot be written at the scheduled time:
the run shows as failed, with the reason, in the real ``maestroctl status --json``, the files
are as they were, and the next scheduled run (once the files are writable) recovers: ok.

Fired by the real scheduler: a near-future six-field cron in config.toml and SIGHUP. The
files are made unwritable for real, also for root: ``chattr +i`` on the memory dir (the
filesystem must support it), else a read-only bind mount of it; skipped when neither works.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonHandle, wait_for
from reliability_kit import disk_state, leftovers, memory_dir, schedule_soon

from maestro_memory.core import MemoryStore

FLAGGED = "Old rule zzflagged nobody follows"


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True)


@contextlib.contextmanager
def chattr_immutable(d: Path) -> Iterator[None]:
    done = _run("chattr", "+i", str(d))
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or "chattr +i failed")
    try:
        yield
    finally:
        _run("chattr", "-i", str(d))


@contextlib.contextmanager
def read_only_bind(d: Path) -> Iterator[None]:
    done = _run("mount", "--bind", str(d), str(d))
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or "mount --bind failed")
    try:
        done = _run("mount", "-o", "remount,ro,bind", str(d))
        if done.returncode != 0:
            raise OSError(done.stderr.strip() or "remount ro failed")
        yield
    finally:
        _run("umount", "-l", str(d))


def unwritable(d: Path) -> Callable[[], contextlib.AbstractContextManager[None]]:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a directory unwritable for the daemon (root)")
    reasons = []
    for tool, make in (("chattr", chattr_immutable), ("mount", read_only_bind)):
        if shutil.which(tool) is None:
            reasons.append(f"no {tool}")
            continue
        probe = d.parent / f".probe-{tool}"
        probe.mkdir()
        try:
            with make(probe):
                try:
                    (probe / "x").write_text("x")
                except OSError:
                    return lambda make=make: make(d)  # type: ignore[misc]
                reasons.append(f"{tool}: still writable")
        except OSError as exc:
            reasons.append(f"{tool}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                (probe / "x").unlink()
            probe.rmdir()
    pytest.skip("cannot make a directory unwritable here: " + "; ".join(reasons))


def ctl_status(daemon: DaemonHandle) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "status", "--json"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout
    doc: dict[str, Any] = json.loads(lines[0])
    result: dict[str, Any] = doc.get("result", doc)
    return result


def last_run(daemon: DaemonHandle, root: Path) -> dict[str, Any] | None:
    run: dict[str, Any] | None = daemon.status()["projects"][str(root)]["maintenance"]["last"]
    return run


def test_unwritable_at_the_scheduled_time_fails_then_recovers(
    daemon: DaemonHandle, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    MemoryStore(root).initialize("setup")
    semantic = memory_dir(root) / "semantic.md"
    semantic.write_text(
        semantic.read_text().replace(
            "## Project Context\n", f"## Project Context\n- [2026-01-01] [0.10] {FLAGGED}\n", 1
        )
    )
    make_unwritable = unwritable(memory_dir(root))
    daemon.register(root)
    assert daemon.status()["projects"][str(root)]["entries"]["flagged"] == 1
    before = {p.name: p.read_bytes() for p in memory_dir(root).iterdir() if p.is_file()}

    with make_unwritable():
        schedule_soon(daemon)
        failed = wait_for(
            lambda: last_run(daemon, root), timeout=120, message="the scheduled maintenance to run"
        )
        ctl = ctl_status(daemon)
    assert failed["outcome"] == "failed", failed
    reason = failed["message"]
    assert "Operation not permitted" in reason or "Read-only file system" in reason, reason
    assert "semantic.md" in reason and "intact" in reason, reason
    cli_last = ctl["projects"][str(root)]["maintenance"]["last"]
    assert cli_last["outcome"] == "failed" and cli_last["message"] == reason
    after = {p.name: p.read_bytes() for p in memory_dir(root).iterdir() if p.is_file()}
    assert after == before and leftovers(root) == []
    assert daemon.result("ping")["pong"]

    # Writable again: the next scheduled run recovers.
    schedule_soon(daemon)
    recovered = wait_for(
        lambda: (r := last_run(daemon, root)) and r["time"] != failed["time"] and r,
        timeout=120,
        message="the next scheduled maintenance",
    )
    assert recovered["outcome"] == "ok", recovered
    assert recovered["counts"]["remove"] + recovered["counts"]["archive"] == 1
    cli_last = ctl_status(daemon)["projects"][str(root)]["maintenance"]["last"]
    assert cli_last["outcome"] == "ok"
    state = disk_state(root)
    assert FLAGGED not in state.semantic_texts() and state.problems == {}
    assert FLAGGED in semantic.read_text().split("## Maintenance Log")[1]  # logged, not lost
