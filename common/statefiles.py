"""Reading the daemon's state files: the registry of projects and a project's journal.

The daemon writes them (``daemon/registry.py``, ``daemon/journal.py``) and answers the
``projects`` and ``log`` ops with the functions below; when it is not running, ``Client`` reads
the same files with the same functions (``Client.projects(direct_when_down=True)``,
``Client.log(..., direct_when_down=True)``), so both paths give the same answer. Standard
library only: read-only, no lock (the registry is replaced atomically and the journal is
append-only; a torn last journal line is skipped).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .layout import memory_dir
from .protocol import BAD_REQUEST, OpError

KEEP_ROTATED = 3  # rotated journal files kept beside the live one (<name>.1 … <name>.3)
LOG_LIMIT_DEFAULT = 50  # the ``log`` op's records when it names no limit
LOG_LIMIT_MAX = 1000


def read_registry(path: Path) -> list[Path]:
    """The registered projects in the registry file at ``path``; [] when there is none.

    Raises ``OSError`` or ``ValueError`` when the file exists but cannot be read or parsed
    (the daemon logs that and starts with none; a reader treats it as empty)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    items = data.get("projects", []) if isinstance(data, dict) else []
    return [Path(p) for p in items if isinstance(p, str) and os.path.isabs(p)]


def missing(project: Path) -> str | None:
    """Why a registered ``project`` is missing (its folder is gone, or its memory folder is:
    deleted, or a drive not mounted), or None. The one rule: maintenance skips a missing
    project and reports it, and nothing re-creates it (``core/fsio.open_folder``); ``status``
    and ``doctor`` say so. A link in its place is not missing: the core refuses it."""
    if not os.path.isdir(project):
        return f"the project folder {project} is missing"
    if not os.path.lexists(memory_dir(project)):
        return f"the memory folder {memory_dir(project)} is missing"
    return None


def project_listing(projects: Iterable[Path]) -> dict[str, Any]:
    """The ``projects`` op's reply for these registered projects (sorted)."""
    out = []
    for project in sorted(projects):
        folder = memory_dir(project)
        out.append(
            {
                "path": str(project),
                "memory_dir": str(folder),
                "memory_dir_exists": folder.is_dir(),
                "exists": project.is_dir(),
                "missing": missing(project),
            }
        )
    return {"projects": out}


def journal_name(project: Path) -> str:
    """The file name of ``project``'s journal in the journal directory."""
    return hashlib.sha256(os.fsencode(project)).hexdigest()[:20] + ".jsonl"


def rotated_journal(directory: Path, project: Path, n: int) -> Path:
    return directory / f"{journal_name(project)}.{n}"


def read_journal(
    directory: Path, project: Path, limit: int, keep: int = KEEP_ROTATED
) -> list[dict[str, Any]]:
    """The last ``limit`` records across the rotated files, oldest first (newest last)."""
    last: deque[str] = deque(maxlen=limit)
    files = [rotated_journal(directory, project, n) for n in range(keep, 0, -1)]
    files.append(directory / journal_name(project))
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as src:
                last.extend(src)
        except FileNotFoundError:
            continue
    out = []
    for line in last:
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a torn last line after a crash
    return out


def log_reply(
    directory: Path, project: Path, limit: int, keep: int = KEEP_ROTATED
) -> dict[str, Any]:
    """The ``log`` op's reply: ``project``'s last ``limit`` journal records, oldest first.

    Raises ``OpError`` (``bad_request``) for a limit outside 1..``LOG_LIMIT_MAX``."""
    if not 1 <= limit <= LOG_LIMIT_MAX:
        raise OpError(BAD_REQUEST, f"'limit' must be between 1 and {LOG_LIMIT_MAX}")
    return {"records": read_journal(directory, project, limit, keep)}
