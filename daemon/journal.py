"""The per-project journal: one JSON line per change, append-only, in the state dir.

A record::

    {"time": "2025-01-01T12:00:00+00:00", "op": "save_semantic", "session_id": null,
     "pid": 1234, "entries": ["s-1a2b3c4d"],
     "changes": [{"id": "s-1a2b3c4d", "before": null, "after": {"confidence": 0.9,
                  "salience": null}}]}

``changes`` lists every entry whose (confidence, salience) the request changed; an added entry
has ``before: null``, a removed one ``after: null``. For a request the writer learns them from
the entry blocks the request reached (``Memory.touched``) and the scores last journalled
(``ScoreLedger``): O(what changed), not O(entries). External edits are journalled as op
``external_edit``, from a diff of the whole memory before and after (a re-parse reads it all
anyway).

Durability: the writer appends a batch's records once per group commit, right after the
commit, and each append is fsynced, so an acknowledged write's record survives a crash with it
(one fsync per group commit, not per request; a crash between the commit and the append loses
only that batch's history, never memory). Rotation: when a journal passes ``ROTATE_BYTES`` it
becomes ``<name>.1`` (``.1`` -> ``.2`` …), keeping ``KEEP_ROTATED`` old files; the oldest is
deleted with a log line. ``tail`` reads across the rotation boundary (oldest file first), so
``maestroctl log`` sees the history as one.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..common.atomic import fsync_dir, write_atomic
from ..common.statefiles import KEEP_ROTATED, journal_name, read_journal
from ..core.markdown import EntryBlock
from ..core.memory import FORGOTTEN_MARK, Memory, MemoryView
from ..core.secrets import redact_value

log = logging.getLogger("maestrod")

ROTATE_BYTES = 4 * 1024 * 1024

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


class ScoreLedger:
    """The scores of one ``Memory``'s live entries as the journal last recorded them.

    Made once per parsed ``Memory`` (O(entries), like the parse); then ``changes`` turns the
    blocks one request reached into that request's changes and updates the ledger, in
    O(blocks reached). It gives what ``diff_values`` gives over the whole memory before and
    after the request (``tests/daemon/test_journal_changes.py`` checks that on every op).
    """

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.values = memory_values(memory)

    def changes(self, touched: Iterable[EntryBlock]) -> list[dict[str, Any]]:
        final: dict[str, tuple[float, float | None] | None] = {}
        for block in touched:
            value = None if block.removed else (block.confidence, block.salience)
            if value is not None or block.id not in final:  # a live block with the id wins
                final[block.id] = value
        changes = []
        for entry_id, new in final.items():
            old = self.values.get(entry_id)
            if old == new:
                continue
            changes.append({"id": entry_id, "before": _scores(old), "after": _scores(new)})
            if new is None:
                del self.values[entry_id]
            else:
                self.values[entry_id] = new
        return changes


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


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
        data = "".join(
            json.dumps(_screened(r), ensure_ascii=False, sort_keys=True) + "\n" for r in records
        ).encode("utf-8")
        if not data:
            return
        path = self.path_for(project)
        try:
            with self._lock:
                flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                fd = os.open(path, flags, 0o600)
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
        fsync_dir(self.directory)

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
                    write_atomic(path, "".join(new).encode("utf-8"), mode=0o600)
                    changed += hits
        return changed

    def tail(self, project: Path, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` records across the rotated files, oldest first (newest last):
        ``common.statefiles.read_journal``, the function ``Client`` reads with when the daemon
        is down."""
        return read_journal(self.directory, project, limit, self.keep)


def _scrub_value(value: Any, needles: list[str]) -> Any:
    if isinstance(value, str):
        return FORGOTTEN_MARK if any(n in value for n in needles) else value
    if isinstance(value, list):
        return [_scrub_value(v, needles) for v in value]
    if isinstance(value, dict):
        return {k: _scrub_value(v, needles) for k, v in value.items()}
    return value


# What ``record`` writes itself: the clock, an op name of the op table, a pid. Everything else
# (a session id a client sent, entry ids and file names read from a repository's files) is
# screened. The screen runs every prose pattern on a string with a colon in it (a timestamp), so
# skipping these is most of the journal's cost on the write path (bench P3).
_OURS = frozenset({"time", "op", "pid"})


def _screened(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v if k in _OURS else redact_value(v) for k, v in r.items()}


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
