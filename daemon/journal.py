"""The per-project journal: one JSON line per change, append-only, in the state dir.

A record::

    {"time": "2025-01-01T12:00:00+00:00", "op": "save_semantic", "session_id": null,
     "pid": 1234, "entries": ["s-1a2b3c4d"],
     "changes": [{"id": "s-1a2b3c4d", "before": null, "after": {"confidence": 0.9,
                  "salience": null}}]}

``changes`` comes from diffing every entry's (confidence, salience) before and after the
request; an added entry has ``before: null``, a removed one ``after: null``. External edits
are journalled as op ``external_edit``.

Durability: the writer appends a batch's records once per group commit, right after the
commit, and each append is fsynced, so an acknowledged write's record survives a crash with it
(one fsync per group commit, not per request; a crash between the commit and the append loses
only that batch's history, never memory). Rotation: when a journal passes ``ROTATE_BYTES`` it
becomes ``<name>.1`` (``.1`` -> ``.2`` …), keeping ``KEEP_ROTATED`` old files; the oldest is
deleted with a log line. ``tail`` reads across the rotation boundary (oldest file first), so
``maestroctl log`` sees the history as one.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import logging
import os
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core import fsio
from ..core.memory import FORGOTTEN_MARK, Memory, MemoryView
from ..core.secrets import redact_value

log = logging.getLogger("maestrod")

ROTATE_BYTES = 4 * 1024 * 1024
KEEP_ROTATED = 3

# entry id -> (confidence, salience)
Values = dict[str, tuple[float, float | None]]


def memory_values(memory: Memory) -> Values:
    """Every live entry's scores, read straight from the parsed blocks (cheap)."""
    out: Values = {}
    for kind in ("semantic", "episodic"):
        for block in memory.docs[kind].entries():
            out[block.id] = (block.confidence, block.salience)
    return out


def view_values(view: MemoryView | None) -> Values:
    if view is None:
        return {}
    return {e.id: (e.confidence, e.salience) for e in (*view.semantic, *view.episodic)}


def _scores(value: tuple[float, float | None] | None) -> dict[str, float | None] | None:
    if value is None:
        return None
    return {
        "confidence": round(value[0], 4),
        "salience": None if value[1] is None else round(value[1], 4),
    }


def diff_values(before: Values, after: Values) -> list[dict[str, Any]]:
    changes = []
    for entry_id in (*before, *(k for k in after if k not in before)):
        old, new = before.get(entry_id), after.get(entry_id)
        if old != new:
            changes.append({"id": entry_id, "before": _scores(old), "after": _scores(new)})
    return changes


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def journal_name(project: Path) -> str:
    return hashlib.sha256(os.fsencode(project)).hexdigest()[:20] + ".jsonl"


class Journal:
    def __init__(
        self, directory: Path, *, rotate_bytes: int = ROTATE_BYTES, keep: int = KEEP_ROTATED
    ) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep!r}")
        self.directory = directory
        self.rotate_bytes = rotate_bytes
        self.keep = keep
        self._lock = threading.Lock()

    def path_for(self, project: Path) -> Path:
        return self.directory / journal_name(project)

    def rotated(self, project: Path, n: int) -> Path:
        path = self.path_for(project)
        return path.with_name(f"{path.name}.{n}")

    def append(self, project: Path, records: Iterable[dict[str, Any]]) -> None:
        # Records hold ids and scores, but also what a client sent (a session id): screened.
        data = "".join(
            json.dumps(redact_value(r), ensure_ascii=False, sort_keys=True) + "\n" for r in records
        ).encode("utf-8")
        if not data:
            return
        path = self.path_for(project)
        try:
            with self._lock:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    os.fsync(fd)
                    size = os.fstat(fd).st_size
                finally:
                    os.close(fd)
                if size >= self.rotate_bytes:
                    self._rotate(project)
        except OSError as exc:
            log.error("cannot append to the journal of %s: %s", project, exc)

    def _rotate(self, project: Path) -> None:
        """``name`` -> ``name.1`` -> ``name.2`` …; the file past ``keep`` is deleted (logged)."""
        oldest = self.rotated(project, self.keep)
        if oldest.exists():
            log.info("journal of %s: deleting the oldest rotated file %s", project, oldest)
            oldest.unlink()
        for n in range(self.keep - 1, 0, -1):
            src = self.rotated(project, n)
            if src.exists():
                os.replace(src, self.rotated(project, n + 1))
        os.replace(self.path_for(project), self.rotated(project, 1))
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def scrub(self, project: Path, texts: Iterable[str]) -> int:
        """Rewrite the journal of ``project`` (the current file and every rotated one) with each
        string that contains one of ``texts`` replaced by a marker (``forget``). Returns the
        number of records changed."""
        needles = [t for t in texts if t]
        if not needles:
            return 0
        escaped = [json.dumps(n, ensure_ascii=False)[1:-1] for n in needles]
        changed = 0
        with self._lock:
            files = [self.path_for(project)]
            files += [self.rotated(project, n) for n in range(1, self.keep + 1)]
            for path in files:
                try:
                    old = path.read_text(encoding="utf-8", errors="replace")
                except FileNotFoundError:
                    continue
                new = []
                hits = 0
                for line in old.splitlines(keepends=True):
                    if any(n in line for n in needles) or any(e in line for e in escaped):
                        try:
                            rec = _scrub_value(json.loads(line), needles)
                            line = json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n"
                        except ValueError:
                            line = "{}\n"  # a torn line that quotes the text: drop its content
                        hits += 1
                    new.append(line)
                if hits:
                    fsio.write_atomic(path, "".join(new).encode("utf-8"), mode=0o600)
                    changed += hits
        return changed

    def tail(self, project: Path, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` records across the rotated files, oldest first (newest last)."""
        keep: deque[str] = deque(maxlen=limit)
        files = [self.rotated(project, n) for n in range(self.keep, 0, -1)]
        files.append(self.path_for(project))
        for path in files:
            try:
                with open(path, encoding="utf-8", errors="replace") as src:
                    keep.extend(src)
            except FileNotFoundError:
                continue
        out = []
        for line in keep:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a torn last line after a crash
        return out


def _scrub_value(value: Any, needles: list[str]) -> Any:
    if isinstance(value, str):
        return FORGOTTEN_MARK if any(n in value for n in needles) else value
    if isinstance(value, list):
        return [_scrub_value(v, needles) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_value(v, needles) for k, v in value.items()}
    return value


def record(
    op: str, *, session_id: str | None, pid: int | None, changes: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    return {
        "time": now_iso(),
        "op": op,
        "session_id": session_id,
        "pid": pid,
        "entries": [c["id"] for c in changes],
        "changes": changes,
        **extra,
    }
