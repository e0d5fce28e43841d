"""Shared helpers of the reliability and security suites.

* ``disk_state(project)``: a fresh, lock-free parse of the files (what a new process would see)
  plus their parse problems and leftover temp/intent files.
* ``WorkerPool``: client processes (``rel_worker.py``) that write and report every
  *acknowledged* write as a JSON line, read by a thread per process so the test can wait on
  "N more acks" instead of sleeping.
* ``faulty_prefix()``: the ``argv_prefix`` that starts ``maestrod`` through
  ``faulty_maestrod.py`` (fault injection inside the daemon process; a test stand-in).

Everything waits on conditions with deadlines (``wait_for``); a poll interval inside a wait
loop is the only pause.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "daemon"))  # maestrod_testkit

from maestrod_testkit import wait_for  # noqa: E402

from maestro_memory.core import MemoryStore, fsio  # noqa: E402
from maestro_memory.core.memory import Memory  # noqa: E402

WORKER = HERE / "rel_worker.py"
FAULTY_DAEMON = HERE / "faulty_maestrod.py"
LONG = os.environ.get("MAESTRO_RELIABILITY_LONG", "") not in ("", "0")
MEMORY_FILES = ("semantic.md", "episodic.md", "archive.md")

__all__ = [
    "LONG",
    "DiskState",
    "WorkerPool",
    "disk_state",
    "entry_view",
    "faulty_prefix",
    "leftovers",
    "wait_for",
]


def memory_dir(project: Path) -> Path:
    return project / ".maestro" / "memory"


def leftovers(project: Path) -> list[str]:
    """Temp files and commit intents in the memory dir (a finished commit leaves none)."""
    d = memory_dir(project)
    if not d.is_dir():
        return []
    return sorted(n for n in os.listdir(d) if fsio.is_temp_name(n) or n == fsio.INTENT_FILE)


@dataclass
class DiskState:
    memory: Memory
    problems: dict[str, list[str]]
    leftovers: list[str]

    def semantic_texts(self) -> list[str]:
        return [e.text for e in self.memory.semantic_entries()]

    def text_counts(self) -> collections.Counter[str]:
        return collections.Counter(self.semantic_texts())


def disk_state(project: Path) -> DiskState:
    memory = MemoryStore(project).read()
    return DiskState(memory, memory.problems(), leftovers(project))


def entry_view(entries: Iterable[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The comparable part of protocol ``Entry`` dicts (for cache == disk checks)."""
    return sorted(
        (
            e["id"],
            e["sector"],
            e["text"],
            round(e["confidence"], 6),
            None if e["salience"] is None else round(e["salience"], 6),
        )
        for e in entries
    )


def disk_entry_view(project: Path) -> list[tuple[Any, ...]]:
    memory = MemoryStore(project).read()
    return entry_view(e.to_dict() for e in [*memory.semantic_entries(), *memory.episodic_entries()])


def faulty_prefix() -> list[str]:
    """``argv_prefix`` for ``daemon_factory``: run maestrod through the fault wrapper."""
    return [sys.executable, str(FAULTY_DAEMON)]


@dataclass
class Worker:
    proc: subprocess.Popen[str]
    acks: list[dict[str, Any]] = field(default_factory=list)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    other: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None


class WorkerPool:
    """``rel_worker.py`` processes; ``acked()`` is every acknowledged write so far."""

    def __init__(self, stop_file: Path, env: dict[str, str] | None = None) -> None:
        self.stop_file = stop_file
        self.env = {**os.environ, **(env or {})}
        self.workers: list[Worker] = []
        self._lock = threading.Lock()

    def start(
        self,
        mode: str,
        project: Path,
        worker_id: int,
        *,
        count: int = -1,
        timeout: float = 1.0,
        extra: list[str] | None = None,
    ) -> Worker:
        proc = subprocess.Popen(
            [
                sys.executable,
                str(WORKER),
                mode,
                str(project),
                str(worker_id),
                str(count),
                str(timeout),
                str(self.stop_file),
                *(extra or []),
            ],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        worker = Worker(proc)
        worker.thread = threading.Thread(target=self._read, args=(worker,), daemon=True)
        worker.thread.start()
        self.workers.append(worker)
        return worker

    def _read(self, worker: Worker) -> None:
        assert worker.proc.stdout is not None
        for line in worker.proc.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                with self._lock:
                    worker.other.append(line)
                continue
            with self._lock:
                if "ack" in record:
                    worker.acks.append(record["ack"])
                elif "err" in record:
                    worker.errors[record["err"]] += 1
                else:
                    worker.other.append(line)

    def acked(self) -> list[dict[str, Any]]:
        with self._lock:
            return [a for w in self.workers for a in w.acks]

    def ack_count(self) -> int:
        with self._lock:
            return sum(len(w.acks) for w in self.workers)

    def errors(self) -> collections.Counter[str]:
        total: collections.Counter[str] = collections.Counter()
        with self._lock:
            for w in self.workers:
                total.update(w.errors)
        return total

    def stop(self, timeout: float = 60.0) -> None:
        """Ask every worker to finish (stop file), wait, and check each exited cleanly."""
        self.stop_file.touch()
        self.join(timeout)

    def join(self, timeout: float = 120.0) -> None:
        failures = []
        for w in self.workers:
            try:
                w.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
            if w.thread is not None:
                w.thread.join(10)
            err = w.proc.stderr.read() if w.proc.stderr is not None else ""
            if w.proc.returncode != 0:
                failures.append(f"worker exited {w.proc.returncode}: {err[-2000:]}")
        assert not failures, failures

    def kill_all(self) -> None:
        for w in self.workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()


# -- the real scheduler, fired a few seconds from now ------------------------------------------
def schedule_soon(daemon: Any, lead_seconds: int = 4) -> str:
    """Point the maintenance job at a moment ``lead_seconds`` away through config.toml and
    SIGHUP (the real reload path, as tests/daemon/test_daemon_scheduler.py does); returns that
    moment (ISO). Retried when a slow machine let the moment pass before the reload."""
    import datetime as dt
    import signal

    # The lead grows on each retry: on a loaded machine a reload can take longer than 4 s.
    for lead in (lead_seconds, lead_seconds * 3, lead_seconds * 10):
        at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=lead)).replace(microsecond=0)
        cron = f"{at.second} {at.minute} {at.hour} {at.day} {at.month} *"
        daemon.paths.config_path.write_text(f'[maintenance]\ncron = "{cron}"\ntimezone = "UTC"\n')
        daemon.signal(signal.SIGHUP)

        def seen(at: dt.datetime = at) -> str | None:
            if daemon.status()["maintenance"]["next_run"] == at.isoformat():
                return "scheduled"
            return "late" if dt.datetime.now(dt.UTC) > at else None

        if wait_for(seen, message="the rescheduled maintenance job") == "scheduled":
            return at.isoformat()
    raise AssertionError("could not schedule the maintenance job in the near future")
