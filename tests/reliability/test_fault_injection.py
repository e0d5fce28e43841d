"""Fail the Nth call of every step of a commit, with ENOSPC and EIO, and with a real full disk.

The syscalls cannot be made to fail on demand on a healthy disk, so ``fsio.IO``'s step methods
are wrapped to raise on their Nth call (the only stand-in in this file). The full-disk case uses a
real, tiny tmpfs mounted by the test when it runs as root.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore, MemoryWriteError, fsio

STEPS = ("open_temp", "write", "fsync", "replace", "fsync_dir")


def snapshot(d: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file() and p.name != ".lock"
    }


def temps(d: Path) -> list[str]:
    return [n for n in os.listdir(d) if fsio.is_temp_name(n) or n == fsio.INTENT_FILE]


def seeded(root: Path) -> MemoryStore:
    store = MemoryStore(root, clock=lambda: "2026-12-02")
    store.save_semantic("JWT with 15min expiry", "architecture_decision", 1.0)
    store.save_episodic("Working on the login page", "s0", 0.9)
    return store


class FailNth:
    def __init__(self, step: str, n: int, code: int) -> None:
        self.step, self.n, self.code, self.calls = step, n, code, 0
        self.original: Callable[..., Any] = getattr(fsio.IO, step)

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        if self.calls == self.n:
            raise OSError(self.code, os.strerror(self.code))
        return self.original(*args)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EIO])
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_nth_failure_of_each_step_never_tears_or_leaves_temps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, n: int, code: int
) -> None:
    store = seeded(tmp_path)
    before = snapshot(store.memory_dir)
    fail = FailNth(step, n, code)
    monkeypatch.setattr(fsio.IO, step, fail)
    # A replacement writes semantic.md and archive.md: a multi-file commit with an intent.
    try:
        result = store.save_semantic("JWT with 30min expiry", "architecture_decision", 1.0)
    except MemoryWriteError as exc:
        assert exc.errno == code
        message = str(exc)
    else:
        assert fail.calls < n, "the injected failure was reached but no error surfaced"
        assert result.action == "replaced"
        message = ""
    monkeypatch.undo()
    after = snapshot(store.memory_dir)
    assert temps(store.memory_dir) == [] or "not be confirmed durable" in message
    if "previous files are intact" in message:
        assert after == before
    # Whatever happened, the files parse and hold one coherent version.
    memory = store.read()
    assert memory.problems() == {}
    texts = [e.text for e in memory.semantic_entries()]
    assert texts in (["JWT with 15min expiry"], ["JWT with 30min expiry"])
    archived = [e.text for e in memory.archived_entries()]
    assert (texts == ["JWT with 30min expiry"]) == ("JWT with 15min expiry" in archived)
    # The next writer completes or cleans up, and works.
    store.save_semantic("Deploys go through staging", "project_context", 0.9)
    assert temps(store.memory_dir) == []
    assert "Deploys go through staging" in [e.text for e in store.semantic_entries()]


def test_real_full_disk_keeps_the_old_files(tiny_disk: Path) -> None:
    store = seeded(tiny_disk)
    before = snapshot(store.memory_dir)
    # Fill the disk to the last block.
    filler = tiny_disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    with pytest.raises(MemoryWriteError) as info:
        store.save_semantic("A long rule " + "y" * 3900, "quality_rule", 1.0)
    assert info.value.errno == errno.ENOSPC
    assert "previous files are intact" in str(info.value)
    assert snapshot(store.memory_dir) == before
    assert temps(store.memory_dir) == []
    filler.unlink()
    store.save_semantic("Space again", "quality_rule", 1.0)
    assert "Space again" in [e.text for e in store.semantic_entries()]
