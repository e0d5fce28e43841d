"""The read side: per project, the latest immutable ``MemoryView`` and what status reports.

The writer thread (and only it) publishes new views; the main thread answers ``build_context``
and ``entries`` from them without touching the disk. A view is immutable, so handing one out
needs no lock beyond the swap itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

from ..common.protocol import INTERNAL, NOT_REGISTERED, OpError
from ..core.memory import MemoryView


@dataclass(frozen=True)
class ProjectInfo:
    view: MemoryView | None = None
    read_error: str | None = None  # why the files could not be read the last time we tried
    refused: str | None = None  # the error code when the core refused the folder (a link …)
    last_external_edit: str | None = None
    external_edits: int = 0


class ReadCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._infos: dict[Path, ProjectInfo] = {}

    def view(self, project: Path) -> MemoryView:
        info = self._infos.get(project)
        if info is None:
            raise OpError(NOT_REGISTERED, f"project {project} is not registered")
        if info.refused is not None:
            raise OpError(info.refused, info.read_error or "the memory folder is refused")
        if info.view is None:
            raise OpError(
                INTERNAL,
                f"the memory of {project} could not be read: {info.read_error or 'not loaded yet'}",
            )
        return info.view

    def info(self, project: Path) -> ProjectInfo | None:
        return self._infos.get(project)

    def publish(self, project: Path, view: MemoryView) -> None:
        with self._lock:
            old = self._infos.get(project, ProjectInfo())
            self._infos[project] = replace(old, view=view, read_error=None, refused=None)

    def read_failed(self, project: Path, reason: str, refused: str | None = None) -> None:
        """Keep serving the last good view (if any); status shows the reason. ``refused``
        (an error code: the core refused the folder, a link or another user's) serves
        nothing until a read succeeds again: every read gets that code and ``reason``."""
        with self._lock:
            old = self._infos.get(project, ProjectInfo())
            view = None if refused is not None else old.view
            self._infos[project] = replace(old, view=view, read_error=reason, refused=refused)

    def external_edit(self, project: Path, when: str) -> None:
        with self._lock:
            old = self._infos.get(project, ProjectInfo())
            self._infos[project] = replace(
                old, last_external_edit=when, external_edits=old.external_edits + 1
            )

    def drop(self, project: Path) -> None:
        with self._lock:
            self._infos.pop(project, None)
