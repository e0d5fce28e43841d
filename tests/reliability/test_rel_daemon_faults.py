"""Writes through the daemon when a commit step fails: ENOSPC and EIO at the Nth call of each
step (open temp, write, fsync, replace, fsync dir), N = 1..3, for a multi-file commit (a
replacement: semantic.md + archive.md with an intent) and a single-file one (an episode). Then
a real full disk under the daemon.

The injected failures are a TEST STAND-IN: the daemon runs through ``faulty_maestrod.py``,
which wraps ``fsio.IO``'s step methods in the daemon process before starting the real
``maestrod`` main (see that file). The full-disk case uses a real tmpfs, no stand-in.

For each case: the client gets a coded ``internal`` error naming the errno; when the reply says
the previous files are intact they are byte-for-byte intact and no temp file is left; when it
says the new content is in place, it is; the daemon keeps serving (the next write succeeds, its
cache equals the files) and counts the failed commit.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle
from reliability_kit import (
    disk_entry_view,
    disk_state,
    entry_view,
    faulty_prefix,
    leftovers,
    memory_dir,
)

STEPS = ("open_temp", "write", "fsync", "replace", "fsync_dir")
_tokens = itertools.count(1)


def snapshot(project: Path) -> dict[str, bytes]:
    d = memory_dir(project)
    return {
        p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != ".lock"
    }


class Faults:
    def __init__(self, control: Path) -> None:
        self.control = control
        self.fired_path = Path(str(control) + ".fired")

    def arm(self, step: str, n: int, code: int) -> str:
        token = f"t{next(_tokens)}"
        tmp = self.control.with_name(self.control.name + ".tmp")
        tmp.write_text(json.dumps({"token": token, "step": step, "n": n, "errno": code}))
        os.replace(tmp, self.control)  # atomic: the daemon sees all of it or nothing
        return token

    def disarm(self) -> None:
        self.control.unlink(missing_ok=True)

    def fired(self, token: str) -> bool:
        try:
            return any(
                line.split()[0] == token for line in self.fired_path.read_text().splitlines()
            )
        except FileNotFoundError:
            return False


@pytest.fixture
def faulty(daemon_factory: DaemonFactory, tmp_path: Path) -> Iterator[tuple[DaemonHandle, Faults]]:
    control = tmp_path / "fault.json"
    daemon = daemon_factory(
        env={"MAESTRO_FAULT_CONTROL": str(control)}, argv_prefix=faulty_prefix()
    )
    yield daemon, Faults(control)


def seeded(daemon: DaemonHandle, root: Path) -> None:
    root.mkdir()
    daemon.register(root)
    daemon.result(
        "save_semantic",
        root,
        fact="JWT with 15min expiry",
        category="architecture_decision",
        confidence=1.0,
    )
    daemon.result(
        "save_episodic", root, context="Working on the login page", session_id="s0", confidence=0.9
    )


WRITES: dict[str, tuple[str, dict[str, Any]]] = {
    # semantic.md + archive.md: written with a commit intent, renamed one after the other.
    "multi": (
        "save_semantic",
        {"fact": "JWT with 30min expiry", "category": "architecture_decision", "confidence": 1.0},
    ),
    # episodic.md alone.
    "single": (
        "save_episodic",
        {"context": "Fixed the logout redirect", "session_id": "s1", "confidence": 0.9},
    ),
}


def applied(project: Path, kind: str) -> bool:
    state = disk_state(project)
    if kind == "multi":
        texts = state.semantic_texts()
        assert texts in (["JWT with 15min expiry"], ["JWT with 30min expiry"]), texts
        archived = [e.text for e in state.memory.archived_entries()]
        # Never torn across files: replaced in semantic.md <=> archived in archive.md.
        assert (texts == ["JWT with 30min expiry"]) == ("JWT with 15min expiry" in archived)
        return texts == ["JWT with 30min expiry"]
    episodes = [e.text for e in state.memory.episodic_entries()]
    return "Fixed the logout redirect" in episodes


@pytest.mark.parametrize("kind", sorted(WRITES))
def test_nth_step_failure_in_the_daemon(
    faulty: tuple[DaemonHandle, Faults], tmp_path: Path, kind: str
) -> None:
    daemon, faults = faulty
    op, args = WRITES[kind]
    failures = 0
    for case, (step, n, code) in enumerate(
        itertools.product(STEPS, (1, 2, 3), (errno.ENOSPC, errno.EIO))
    ):
        where = f"{kind}/{step}#{n}/{errno.errorcode[code]}"
        root = tmp_path / f"p{case}"
        seeded(daemon, root)
        before = snapshot(root)
        token = faults.arm(step, n, code)
        reply = daemon.send(op, root, args)
        faults.disarm()
        if reply["ok"]:
            assert not faults.fired(token), f"{where}: failure injected but ok was replied"
            assert applied(root, kind), where
        else:
            failures += 1
            assert faults.fired(token), f"{where}: error without an injected failure: {reply}"
            error = reply["error"]
            assert error["code"] == "internal", (where, error)
            message = error["message"]
            assert os.strerror(code) in message, (where, message)
            intact = "previous files are intact" in message
            in_place = "in place" in message
            assert intact != in_place, f"{where}: the reply must say one or the other: {message}"
            if intact:
                assert snapshot(root) == before, f"{where}: reply says intact, files changed"
                assert leftovers(root) == [], where
                assert not applied(root, kind), where
            else:
                assert applied(root, kind), f"{where}: reply says in place, it is not"
        # Whatever happened, the files parse, and the daemon keeps serving this project.
        assert disk_state(root).problems == {}, where
        assert daemon.result("ping")["pong"]
        after = daemon.result(
            "save_semantic",
            root,
            fact=f"Deploy number {case} via staging",
            category="project_context",
            confidence=0.9,
        )
        assert after["action"] == "added", where
        assert leftovers(root) == [], f"{where}: the next commit left temp files"
        assert entry_view(daemon.result("entries", root)["entries"]) == disk_entry_view(root), (
            f"{where}: the cache differs from the files"
        )
    # Every step is called at least once per commit (three times for most of a multi-file one).
    assert failures >= (20 if kind == "multi" else 10), f"only {failures} cases failed"
    status = daemon.status()
    assert status["writer"]["failed_commits"] == failures
    assert status["requests"]["ops"][op]["failed"] == failures


# -- a real full disk ------------------------------------------------------------------------
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


def test_real_full_disk_under_the_daemon(daemon: DaemonHandle, tiny_disk: Path) -> None:
    root = tiny_disk / "proj"
    seeded(daemon, root)
    before = snapshot(root)
    filler = fill(tiny_disk)
    for op, args in [
        (
            "save_semantic",
            {"fact": "A long rule " + "y" * 3900, "category": "quality_rule", "confidence": 1.0},
        ),
        ("save_episodic", {"context": "A long episode " + "z" * 3900, "session_id": "s2"}),
    ]:
        reply = daemon.send(op, root, args)
        assert reply["ok"] is False, reply
        assert reply["error"]["code"] == "internal"
        assert os.strerror(errno.ENOSPC) in reply["error"]["message"]
        assert "previous files are intact" in reply["error"]["message"]
        assert snapshot(root) == before
        assert leftovers(root) == []
        assert daemon.result("ping")["pong"]
    # Reads are still served from the last good state while the disk is full.
    assert entry_view(daemon.result("entries", root)["entries"]) == disk_entry_view(root)
    filler.unlink()
    saved = daemon.result(
        "save_semantic", root, fact="Space again for rules", category="quality_rule", confidence=1.0
    )
    assert saved["action"] == "added"
    assert "Space again for rules" in disk_state(root).semantic_texts()
    assert daemon.status()["writer"]["failed_commits"] == 2
