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

from ..core.memory import FORGOTTEN_MARK, Memory, MemoryView
from ..core.secrets import redact_value

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
        # Records hold ids and scores, but also what a client sent (a session id): screened.
        lines = "".join(
            json.dumps(redact_value(r), ensure_ascii=False, sort_keys=True) + "\n" for r in records
        )
        if not lines:
            return
        try:
            with self._lock, open(self.path_for(project), "a", encoding="utf-8") as out:
                out.write(lines)
        except OSError as exc:
            log.error("cannot append to the journal of %s: %s", project, exc)

    def scrub(self, project: Path, texts: Iterable[str]) -> int:
        """Rewrite the journal of ``project`` with every string that contains one of ``texts``
        replaced by a marker (``forget``). Returns the number of records changed."""
        needles = [t for t in texts if t]
        path = self.path_for(project)
        if not needles:
            return 0
        with self._lock:
            try:
                old = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
            except FileNotFoundError:
                return 0
            changed = 0
            new = []
            for line in old:
                if any(n in line for n in needles) or any(
                    json.dumps(n, ensure_ascii=False)[1:-1] in line for n in needles
                ):
                    try:
                        rec = _scrub_value(json.loads(line), needles)
                        line = json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n"
                    except ValueError:
                        line = "{}\n"  # a torn line that quotes the text: drop its content
                    changed += 1
                new.append(line)
            if changed:
                tmp = path.with_name(path.name + ".scrub-tmp")
                with open(tmp, "w", encoding="utf-8") as out:
                    out.writelines(new)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, path)
            return changed

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
