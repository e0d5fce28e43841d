"""Many processes, no daemon: the lock protocol alone keeps every update and never tears."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from maestro_memory.core import MemoryStore, fsio
from maestro_memory.core.model import LinkRefused, MemoryWriteError

CTX = mp.get_context("spawn")  # fresh interpreters: no state shared by fork


def _init_worker(root: str, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    MemoryStore(root).initialize("s1")


def _save_worker(root: str, worker: int, count: int, start: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    store = MemoryStore(root)
    for i in range(count):
        # Distinct facts that share no topic: each must be "added".
        store.save_semantic(f"Worker{worker} rule{i} token{worker}x{i}", "project_context", 0.9)


def _run_all(target: object, args_list: list[tuple[object, ...]]) -> None:
    procs = [CTX.Process(target=target, args=args) for args in args_list]  # type: ignore[arg-type]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0


def test_eight_processes_initialize_one_session_decay_applied_once(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.save_semantic("Main branch is develop", "project_context", 1.0)
    store.save_episodic("Working on the parser", "s0", confidence=1.0)
    start = CTX.Event()
    procs = [CTX.Process(target=_init_worker, args=(str(tmp_path), start)) for _ in range(8)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert [e.confidence for e in store.semantic_entries()] == [0.95]
    [epi] = store.episodic_entries()
    assert (epi.salience, epi.confidence) == (0.8, 0.8)


def test_eight_processes_times_hundred_saves_keep_all_eight_hundred(tmp_path: Path) -> None:
    start = CTX.Event()
    procs = [
        CTX.Process(target=_save_worker, args=(str(tmp_path), w, 100, start)) for w in range(8)
    ]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    texts = [e.text for e in MemoryStore(tmp_path).semantic_entries()]
    assert len(texts) == 800
    assert len(set(texts)) == 800
    assert not [n for n in os.listdir(tmp_path / ".maestro/memory") if fsio.is_temp_name(n)]


KILL_LOOP = textwrap.dedent(
    """
    import sys
    from maestro_memory.core import MemoryStore
    store = MemoryStore(sys.argv[1])
    print("ready", flush=True)
    i = 0
    while True:
        # Tokens unique to each fact: no two facts share a topic, so each one is "added".
        store.save_semantic(f"kw{i}a needs kw{i}b", "quality_rule", 0.9)
        store.save_episodic(f"checkpoint {i}", "s", 0.8)
        i += 1
    """
)


def test_writer_killed_mid_loop_leaves_files_that_parse(tmp_path: Path) -> None:
    for round_ in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-c", KILL_LOOP, str(tmp_path)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        semantic = tmp_path / ".maestro/memory/semantic.md"
        deadline = time.monotonic() + 30
        target = 5 * (round_ + 1)
        # Wait until it has written a few entries, then kill it wherever it is.
        while time.monotonic() < deadline:
            if semantic.exists() and semantic.read_text().count(" needs kw") >= target:
                break
            time.sleep(0.01)  # poll interval of the condition wait
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        store = MemoryStore(tmp_path)
        memory = store.read()
        assert memory.problems() == {}
        count = len(store.semantic_entries())
        assert count >= target
        assert len(store.episodic_entries()) <= 20
        # The next writer recovers: stray temps from the killed one are removed.
        store.save_semantic(f"zz{round_}a zz{round_}b zz{round_}c", "project_context", 0.9)
        assert not [n for n in os.listdir(store.memory_dir) if fsio.is_temp_name(n)]
        assert len(store.semantic_entries()) == count + 1


def test_failed_write_leaves_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injection: the OS call cannot be made to fail on demand here, so fsync is replaced
    # by one that raises ENOSPC (the fuller suite lives in tests/reliability).
    store = MemoryStore(tmp_path)
    store.save_semantic("Existing rule stays", "quality_rule", 1.0)
    before = (store.memory_dir / "semantic.md").read_bytes()

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsio.IO, "fsync", no_space)
    with pytest.raises(MemoryWriteError, match="previous files are intact"):
        store.save_semantic("New rule that cannot be written", "quality_rule", 1.0)
    monkeypatch.undo()
    assert (store.memory_dir / "semantic.md").read_bytes() == before
    assert not [n for n in os.listdir(store.memory_dir) if fsio.is_temp_name(n)]
    assert [e.text for e in store.semantic_entries()] == ["Existing rule stays"]


def test_lock_refuses_a_symlink(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    store.initialize("x")
    lock = store.memory_dir / ".lock"
    lock.unlink()
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LinkRefused, match=r"\.lock: it is a symbolic link"):
        store.save_semantic("Anything", "quality_rule", 1.0)
    assert not (tmp_path / "elsewhere").exists()
