"""The per-project journal: one JSON line per change, append-only, in the state dir.

A record::

    {"time": "2025-01-01T12:00:00+00:00", "op": "save_semantic", "session_id": null,
     "pid": 1234, "entries": ["s-1a2b3c4d"],
     "changes": [{"id": "s-1a2b3c4d", "before": null, "after": {"confidence": 0.9,
                  "salience": null}}]}

``changes`` comes from diffing every entry's (confidence, salience) before and after the
request; an added entry has ``before: null``, a removed one ``after: null``. External edits
are journalled as op ``external_edit``. Appends are flushed but not fsynced: the memory files
are the record, the journal is their history.
"""

from __future__ import annotations

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

from ..core.memory import Memory, MemoryView

log = logging.getLogger("maestrod")

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
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()

    def path_for(self, project: Path) -> Path:
        return self.directory / journal_name(project)

    def append(self, project: Path, records: Iterable[dict[str, Any]]) -> None:
        lines = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records)
        if not lines:
            return
        try:
            with self._lock, open(self.path_for(project), "a", encoding="utf-8") as out:
                out.write(lines)
        except OSError as exc:
            log.error("cannot append to the journal of %s: %s", project, exc)

    def tail(self, project: Path, limit: int) -> list[dict[str, Any]]:
        """The last ``limit`` records, oldest first (newest last)."""
        keep: deque[str] = deque(maxlen=limit)
        try:
            with open(self.path_for(project), encoding="utf-8", errors="replace") as src:
                keep.extend(src)
        except FileNotFoundError:
            return []
        out = []
        for line in keep:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a torn last line after a crash
        return out


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
