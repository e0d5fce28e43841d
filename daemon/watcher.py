"""Notice changes made by anyone else (an editor, ``git checkout``, a direct-mode writer).

Per registered project three directories are watched, none recursively: the project root
(``.maestro`` appearing or vanishing), ``.maestro`` (``memory`` appearing or vanishing) and
the memory dir itself (the files). Events are filtered (temp files, ``.lock``,
``.state.json``, open/close-without-write), debounced, and turned into a *check* queued to
the writer, which compares the files with what it last read or wrote (stat, then content
hash) — so the daemon's own commits are recognised and ignored there, without a race.

Two locks, always taken in this order and never the other way round: ``_lock`` (the projects
and their watches; held while calling into watchdog) and ``_cond`` (a leaf: the debounce table
and the "stale directory" marks; never held while calling anything). Event handlers run in
watchdog's threads *holding watchdog's own lock*, so they take only the leaf: a handler that
waited for ``_lock`` while we held it and waited for watchdog's lock (to schedule a watch)
was a deadlock that silently stopped the watcher and, through ``watch()``, the writer.

A clock thread fires the debounced checks and, every ``RESCAN_SECONDS``, re-checks every
project (a cheap stat in the writer) and re-arms the watches: that catches a missed event and
a memory dir deleted and created again. When inotify runs out of watches or instances, the
project is watched by a shared ``PollingObserver`` instead and status says "polling".
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED_NO_WRITE,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MOVED,
    EVENT_TYPE_OPENED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from ..common import layout
from ..core import fsio
from ..core.memory import FILES

log = logging.getLogger("maestrod")

DEBOUNCE_SECONDS = 0.15
MAX_DELAY_SECONDS = 1.0  # a constant stream of events still gets checked this often
RESCAN_SECONDS = 2.0
POLL_INTERVAL_SECONDS = 1.0
MEMORY_NAMES = frozenset(FILES.values())
CHAIN_NAMES = frozenset({layout.MAESTRO_DIR, layout.MEMORY_SUBDIR})


def is_limit_error(exc: OSError) -> bool:
    """inotify out of watches (ENOSPC) or of instances (EMFILE)."""
    return exc.errno in (errno.ENOSPC, errno.EMFILE)


def relevant(event: FileSystemEvent) -> bool:
    """Does this event say a memory file (or a directory on the way to them) changed?"""
    if event.event_type in (EVENT_TYPE_OPENED, EVENT_TYPE_CLOSED_NO_WRITE):
        return False
    paths = [event.src_path, *([event.dest_path] if event.dest_path else [])]
    for raw in paths:
        name = os.path.basename(os.fsdecode(raw))
        if fsio.is_temp_name(name):
            continue
        if name in MEMORY_NAMES or name in CHAIN_NAMES:
            return True
    return False


@dataclass
class _ProjectWatch:
    project: Path
    mode: str = "inotify"  # or "polling"
    watches: dict[Path, tuple[ObservedWatch, BaseObserver, int]] = field(default_factory=dict)

    def chain(self) -> list[Path]:
        maestro = self.project / layout.MAESTRO_DIR
        return [self.project, maestro, maestro / layout.MEMORY_SUBDIR]


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher, project: Path) -> None:
        self.watcher = watcher
        self.project = project

    def on_any_event(self, event: FileSystemEvent) -> None:
        self.watcher.on_event(self.project, event)


class Watcher:
    def __init__(self, on_change: Callable[[Path], None], *, force_polling: bool = False) -> None:
        self._on_change = on_change
        self._force_polling = force_polling
        self._lock = threading.RLock()  # _projects and the watches (see the module doc)
        self._cond = threading.Condition(threading.Lock())  # leaf: _due, _stale, _stopping
        self._projects: dict[Path, _ProjectWatch] = {}
        self._due: dict[Path, tuple[float, float]] = {}  # project -> (fire at, first event)
        self._stale: dict[Path, set[Path]] = {}  # project -> directories whose watch is dead
        self._stopping = False
        self._inotify: BaseObserver = Observer()
        self._polling: BaseObserver | None = None
        self._clock = threading.Thread(target=self._run_clock, name="watch-clock", daemon=True)

    def start(self) -> None:
        self._inotify.start()  # started first: schedule() then fails loudly, in our thread
        self._clock.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for observer in (self._inotify, self._polling):
            if observer is not None:
                observer.stop()
        for observer in (self._inotify, self._polling):
            if observer is not None and observer.is_alive():
                observer.join(2.0)
        if self._clock.is_alive():
            self._clock.join(2.0)

    # -- projects ----------------------------------------------------------------------------
    def watch(self, project: Path) -> None:
        with self._lock:
            if project not in self._projects:
                pw = _ProjectWatch(project, mode="polling" if self._force_polling else "inotify")
                self._projects[project] = pw
            self._arm(self._projects[project])

    def unwatch(self, project: Path) -> None:
        with self._lock:
            pw = self._projects.pop(project, None)
            with self._cond:
                self._due.pop(project, None)
                self._stale.pop(project, None)
            if pw is not None:
                for path in list(pw.watches):
                    self._drop(pw, path)

    def mode(self, project: Path) -> str:
        pw = self._projects.get(project)
        return pw.mode if pw is not None else "none"

    def _observer_for(self, pw: _ProjectWatch) -> BaseObserver:
        if pw.mode == "inotify":
            return self._inotify
        if self._polling is None:
            self._polling = PollingObserver(timeout=POLL_INTERVAL_SECONDS)
            self._polling.start()
        return self._polling

    def _drop(self, pw: _ProjectWatch, path: Path) -> None:
        watch, observer, _ = pw.watches.pop(path)
        try:
            observer.unschedule(watch)
        except (KeyError, OSError) as exc:
            log.debug("unschedule %s: %s", path, exc)

    def _arm(self, pw: _ProjectWatch) -> None:
        """Make the watches match the directories that exist now (caller holds ``_lock``)."""
        with self._cond:
            stale = self._stale.pop(pw.project, set())
        for path in pw.chain():
            try:
                inode = os.stat(path).st_ino if path.is_dir() else None
            except OSError:
                inode = None
            current = pw.watches.get(path)
            if current is not None and (inode is None or inode != current[2] or path in stale):
                self._drop(pw, path)
                current = None
            if inode is None or current is not None:
                continue
            try:
                observer = self._observer_for(pw)
                watch = observer.schedule(_Handler(self, pw.project), str(path), recursive=False)
            except OSError as exc:
                if pw.mode == "inotify" and is_limit_error(exc):
                    log.warning(
                        "inotify limit reached (%s); watching %s by polling every %.0f s",
                        exc.strerror or exc,
                        pw.project,
                        POLL_INTERVAL_SECONDS,
                    )
                    for watched in list(pw.watches):
                        self._drop(pw, watched)
                    pw.mode = "polling"
                    self._arm(pw)
                    return
                log.debug("cannot watch %s yet: %s", path, exc)
                continue
            pw.watches[path] = (watch, observer, inode)

    # -- events and the clock ------------------------------------------------------------------
    def on_event(self, project: Path, event: FileSystemEvent) -> None:
        if not relevant(event):
            return
        now = time.monotonic()
        # In a watchdog thread that holds watchdog's lock: only the leaf lock here.
        with self._cond:
            if self._stopping or project not in self._projects:  # a dict read: atomic
                return
            if event.is_directory and event.event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED):
                # The watch on a vanished directory is dead even if the directory comes back
                # before we look (with the same inode number): re-arm it.
                self._stale.setdefault(project, set()).add(Path(os.fsdecode(event.src_path)))
            first = self._due.get(project, (0.0, now))[1]
            self._due[project] = (min(now + DEBOUNCE_SECONDS, first + MAX_DELAY_SECONDS), first)
            self._cond.notify()

    def _run_clock(self) -> None:
        next_rescan = time.monotonic() + RESCAN_SECONDS
        while True:
            with self._cond:
                if self._stopping:
                    return
                now = time.monotonic()
                ready = [p for p, (at, _) in self._due.items() if at <= now]
                for project in ready:
                    del self._due[project]
                rescan = now >= next_rescan
                if rescan:
                    next_rescan = now + RESCAN_SECONDS
                if not ready and not rescan:
                    wake = min([next_rescan, *(at for at, _ in self._due.values())])
                    self._cond.wait(max(0.0, wake - now))
                    continue
            with self._lock:  # after the leaf is released: the lock order is _lock, _cond
                if rescan:
                    ready = list(self._projects)
                for project in ready:
                    pw = self._projects.get(project)
                    if pw is not None:
                        self._arm(pw)
            for project in ready:
                try:
                    self._on_change(project)
                except Exception as exc:  # the writer is closed: we are stopping
                    log.debug("check of %s not queued: %s", project, exc)
