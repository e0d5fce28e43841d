"""The registered projects: a JSON list in the state dir that survives restarts.

Only the writer thread changes it; readers get a frozenset snapshot. Writes are atomic
(temp file, fsync, rename), so a crash leaves the old list or the new one.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from ..common.atomic import write_atomic
from ..common.statefiles import read_registry

log = logging.getLogger("maestrod")


def atomic_write_json(path: Path, data: object) -> None:
    payload = (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()
    write_atomic(path, payload, mode=0o600)


class Registry:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._projects: frozenset[Path] = frozenset(self._load())

    def _load(self) -> list[Path]:
        try:
            return read_registry(self.path)
        except (OSError, ValueError) as exc:
            log.error("project registry %s is unreadable (%s); starting with none", self.path, exc)
            return []

    def projects(self) -> frozenset[Path]:
        return self._projects

    def __contains__(self, project: object) -> bool:
        return project in self._projects

    def add(self, project: Path) -> bool:
        """Register ``project``; False if it already was."""
        with self._lock:
            if project in self._projects:
                return False
            self._save(self._projects | {project})
            return True

    def remove(self, project: Path) -> bool:
        with self._lock:
            if project not in self._projects:
                return False
            self._save(self._projects - {project})
            return True

    def _save(self, projects: frozenset[Path]) -> None:
        atomic_write_json(self.path, {"v": 1, "projects": sorted(map(str, projects))})
        self._projects = projects
