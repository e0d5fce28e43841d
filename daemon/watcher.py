"""Notice changes made by anyone else (an editor, ``git checkout``, a direct-mode writer).

One inotify instance (watchdog's ``InotifyFD``, its inotify layer, used directly) serves every
project, read by one thread; a second thread, the clock, fires the debounced checks. So the
thread count does not grow with the number of projects. (watchdog's ``Observer`` starts an
emitter thread per watched directory: 900 threads for 300 projects.)

Per registered project three directories are watched, none recursively, each only while it
exists: the project root (``.maestro`` appearing or vanishing), ``.maestro`` (``memory``
appearing or vanishing) and the memory dir itself (the files). Each watch also reports its own
deletion or move (``IN_DELETE_SELF``, ``IN_MOVE_SELF``, ``IN_IGNORED``). Events are filtered
by name (only the memory files and the chain directories count: temp files, ``.lock`` and
``.state.json`` do not) and debounced into a *check* queued to the writer, which compares the
files with what it last read or wrote (stat, then content hash). The daemon's own commits are
not even checked: the writer tells the watcher (``OwnCommits``) the (inode, size, mtime_ns) of
each memory file it renamed into place, and a rename-into-place event (``IN_MOVED_TO``) for a
file that still has exactly that identity is ours and dropped (one ``stat``, no time window). A
file written in place is never ours (a commit only renames), so such an event is always checked,
and the check compares the content too (``thorough``): an edit that kept the inode, the size and
even the mtime of our commit is still seen. Before each check the project's watches are
re-armed to match the directories that exist now (a few ``stat`` calls): that picks up a
memory dir deleted and created again, and the check that follows sees whatever was written
before the new watch existed.

The agent tools' own memory folders (issue 20: ``~/.claude/projects/<key>/memory`` …, from
``common.toolsources.watch_points``) ride on the same instance, as a fourth role, "tools": the
folder itself while it exists (any ``*.md`` written, moved or deleted), else its nearest
existing ancestor, for the name of the next folder down, so a folder created later is
noticed (the re-arm before each check moves the watch down the path as it appears). Their
events are debounced apart and end in ``on_tools`` (an import queued to the writer), not in
a check. Running out of watches there only makes the project's tool folders polled (every
``POLL_INTERVAL_SECONDS``, a stat of each file): its memory files keep their inotify watches.

While idle nothing runs: no periodic rescan of inotify-watched projects. Work is periodic only
where inotify cannot be trusted: a project whose watches could not be added (the kernel's
``max_user_watches`` or ``max_user_instances`` reached) is checked by polling every
``POLL_INTERVAL_SECONDS`` and status says "polling"; a kernel queue overflow (events lost)
re-arms and checks every project once.

Two locks, always taken in this order and never the other way round: ``_lock`` (the projects
and their watches; held while calling into ``InotifyFD``) and ``_cond`` (a leaf: the debounce
table, the polled set and the overflow mark; never held while calling anything). Inotify
callbacks run in the reader thread and take only the leaf, so they can never wait for a
thread that is waiting for the reader.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.observers.inotify_c import (
    CallbackId,
    InotifyConstants,
    InotifyEvent,
    InotifyFD,
    Mask,
    WatchDescriptor,
)

from ..common import layout
from ..core.fsio import FileSignature
from ..core.memory import FILES

log = logging.getLogger("maestrod")

DEBOUNCE_SECONDS = 0.15
MAX_DELAY_SECONDS = 1.0  # a constant stream of events still gets checked this often
POLL_INTERVAL_SECONDS = 1.0
MEMORY_NAMES = frozenset(FILES.values())
MAESTRO_DIR, MEMORY_SUBDIR = layout.MAESTRO_DIR, layout.MEMORY_SUBDIR

_C = InotifyConstants
# A chain directory: only entries appearing, vanishing or moving, and the directory itself.
CHAIN_MASK = Mask(
    _C.IN_CREATE
    | _C.IN_DELETE
    | _C.IN_MOVED_FROM
    | _C.IN_MOVED_TO
    | _C.IN_DELETE_SELF
    | _C.IN_MOVE_SELF
    | _C.IN_ONLYDIR
)
# The memory dir: also files written in place (an editor that does not rename).
MEMORY_MASK = Mask(CHAIN_MASK | _C.IN_MODIFY | _C.IN_CLOSE_WRITE)
SELF_GONE = Mask(_C.IN_DELETE_SELF | _C.IN_MOVE_SELF | _C.IN_IGNORED)
IN_PLACE = Mask(_C.IN_MODIFY | _C.IN_CLOSE_WRITE)  # a file written where it is: never a commit


def is_limit_error(exc: OSError) -> bool:
    """inotify out of watches (ENOSPC) or of instances (EMFILE)."""
    return exc.errno in (errno.ENOSPC, errno.EMFILE)


TOOLS_ROLE = "tools"


def relevant(role: str, mask: int, name: str, names: frozenset[str] | None = None) -> bool:
    """Does an event with this mask and entry name, on a watch of this role ("root",
    ".maestro", "memory" or "tools"), say that a memory file or the chain to them changed?
    For "tools", ``names`` are the entries that count (None: any ``*.md`` file)."""
    if mask & SELF_GONE or mask & _C.IN_Q_OVERFLOW:
        return True
    if role == TOOLS_ROLE:
        if names is None:
            return name.endswith(".md") and not name.startswith(".")
        return name in names
    if role == "root":
        return name == MAESTRO_DIR
    if role == MAESTRO_DIR:
        return name == MEMORY_SUBDIR
    return name in MEMORY_NAMES


ROLES = ("root", MAESTRO_DIR, MEMORY_SUBDIR)


def chain(project: Path) -> list[tuple[str, Path]]:
    maestro = project / MAESTRO_DIR
    return list(zip(ROLES, (project, maestro, maestro / MEMORY_SUBDIR), strict=True))


class _DirWatch:
    """One watched directory of one project: the callback ``InotifyFD`` calls."""

    def __init__(
        self,
        watcher: Watcher,
        project: Path,
        role: str,
        key: tuple[int, int],
        names: frozenset[str] | None = None,
    ) -> None:
        self.watcher = watcher
        self.project = project
        self.role = role
        self.names = names  # "tools": the entry names that count (None: any *.md)
        self.kind = "tools" if role == TOOLS_ROLE else "memory"
        self.key = key  # (st_dev, st_ino) of the directory when the watch was added
        self.wd = WatchDescriptor(-1)
        self.id = CallbackId(next(_ids))
        self.alive = True  # False once the kernel dropped the watch (IN_IGNORED)

    def on_event(self, event: InotifyEvent) -> None:
        name = os.fsdecode(event.name)
        if not relevant(self.role, event.mask, name, self.names):
            return
        if self.role == MEMORY_SUBDIR:
            if event.mask == _C.IN_MOVED_TO and self.watcher.own.ours(self.project, name):
                return  # the writer's own rename, the file still as it left it
            if event.mask & IN_PLACE:
                self.watcher.on_event(self.project, self.kind, thorough=True)
                return
        self.watcher.on_event(self.project, self.kind)

    def on_watch_deleted(self, wd: WatchDescriptor) -> None:
        self.alive = False  # a plain attribute write: no lock needed
        self.watcher.on_event(self.project, self.kind)

    def on_queue_overflow(self) -> None:
        self.watcher.on_overflow()

    def on_events_lost(self) -> None:
        # watchdog >= 7.1 calls this once every callback has seen the overflow (without it the
        # reader thread raised AttributeError there). Asking again is idempotent: the flag is
        # set once, and a rescan taken after this point sees the watches already repaired.
        self.watcher.on_overflow()


_ids = itertools.count(1)


@dataclass
class _ProjectWatch:
    project: Path
    mode: str = "inotify"  # or "polling"
    watches: dict[str, _DirWatch] = field(default_factory=dict)  # role -> watch
    tool_watches: dict[Path, _DirWatch] = field(default_factory=dict)  # directory -> watch
    tools_polled: bool = False  # out of watches for the tool folders: polled instead


ToolPoints = Callable[[Path], list[tuple[Path, frozenset[str] | None]]]
Key = tuple[Path, str]  # (project, "memory" | "tools")


def _dir_key(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class OwnCommits:
    """The (inode, size, mtime_ns) each memory file had when the writer's last commit renamed
    it into place (told by the writer, asked from the inotify reader thread; its lock is a leaf
    that calls nothing)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._left: dict[Path, dict[str, FileSignature]] = {}

    def committed(self, project: Path, signatures: Mapping[str, FileSignature]) -> None:
        ours = {name: sig for name, sig in signatures.items() if name in MEMORY_NAMES}
        with self._lock:
            self._left.setdefault(project, {}).update(ours)

    def forget(self, project: Path) -> None:
        with self._lock:
            self._left.pop(project, None)

    def ours(self, project: Path, name: str) -> bool:
        """Is the memory file ``name`` exactly as our last commit left it (the same inode, size
        and mtime_ns now)? Then the rename event that put it there was ours."""
        with self._lock:
            want = self._left.get(project, {}).get(name)
        if want is None:
            return False
        try:
            st = os.stat(layout.memory_dir(project) / name, follow_symlinks=False)
        except OSError:
            return False
        return (st.st_ino, st.st_size, st.st_mtime_ns) == want


class Watcher:
    def __init__(
        self,
        on_change: Callable[[Path, bool], None],
        *,
        force_polling: bool = False,
        on_tools: Callable[[Path], None] | None = None,
        tool_points: ToolPoints | None = None,
    ) -> None:
        """``on_change(project, thorough)``: its memory files may have changed (a check).
        ``on_tools(project)``: its agent tools' memory folders may have changed;
        ``tool_points(project)``: the (directory, entry names or None for any ``*.md``) to
        watch for that, recomputed at every re-arm."""
        self._on_change = on_change
        self._on_tools = on_tools
        self._tool_points = tool_points
        self._force_polling = force_polling
        self._lock = threading.RLock()  # _projects and the watches (see the module doc)
        self._cond = threading.Condition(threading.Lock())  # leaf: see the module doc
        self._projects: dict[Path, _ProjectWatch] = {}
        self._due: dict[Key, tuple[float, float]] = {}  # (project, kind) -> (fire at, first)
        self._polled: set[Path] = set()
        self._thorough: dict[Path, bool] = {}  # a file written in place: check the content too
        self.own = OwnCommits()  # what the writer's commits left: their events are ours
        self._tools_polled: set[Path] = set()  # only their tool folders are polled
        self._next_poll = 0.0
        self._overflow = False
        self._stopping = False
        self._inotify: InotifyFD | None = None
        self._inotify_error: OSError | None = None  # why there is no inotify instance
        self._clock = threading.Thread(target=self._run_clock, name="watch-clock", daemon=True)

    def start(self) -> None:
        if not self._force_polling:
            try:
                self._inotify = InotifyFD()
            except OSError as exc:
                # Every project polls; the warning names the reason once per project.
                self._inotify_error = exc
                log.warning("cannot create an inotify instance: %s", exc.strerror or exc)
            else:
                self._inotify.name = "watch-inotify"
                self._inotify.start()
        self._clock.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._inotify is not None:
            self._inotify.stop()  # closes the instance: the kernel drops every watch
            if self._inotify.is_alive():
                self._inotify.join(2.0)
        if self._clock.is_alive():
            self._clock.join(2.0)

    # -- projects ----------------------------------------------------------------------------
    def watch(self, project: Path) -> None:
        with self._lock:
            pw = self._projects.get(project)
            if pw is None:
                pw = _ProjectWatch(project)
                self._projects[project] = pw
                if self._force_polling:
                    self._to_polling(pw)
                elif self._inotify is None:
                    self._limit_reached(pw, self._inotify_error)
            self._arm(pw)
        if self._on_tools is not None:
            self.on_event(project, "tools")  # catch up with what changed while not watched

    def unwatch(self, project: Path) -> None:
        with self._lock:
            pw = self._projects.pop(project, None)
            with self._cond:
                for kind in ("memory", "tools"):
                    self._due.pop((project, kind), None)
                self._thorough.pop(project, None)
                self._polled.discard(project)
                self._tools_polled.discard(project)
            self.own.forget(project)
            if pw is not None:
                for role in list(pw.watches):
                    self._drop(pw, role)
                for folder in list(pw.tool_watches):
                    self._drop_tool(pw, folder)

    def mode(self, project: Path) -> str:
        pw = self._projects.get(project)
        return pw.mode if pw is not None else "none"

    def watch_count(self) -> int:
        """How many directories are watched through inotify (for status and tests)."""
        with self._lock:
            return sum(len(pw.watches) + len(pw.tool_watches) for pw in self._projects.values())

    def tool_mode(self, project: Path) -> str:
        """How the project's agent tool folders are watched: inotify, polling or none."""
        pw = self._projects.get(project)
        if pw is None or self._tool_points is None:
            return "none"
        return "polling" if pw.mode == "polling" or pw.tools_polled else "inotify"

    def _to_polling(self, pw: _ProjectWatch) -> None:
        for role in list(pw.watches):
            self._drop(pw, role)
        for folder in list(pw.tool_watches):
            self._drop_tool(pw, folder)
        pw.mode = "polling"
        with self._cond:
            self._polled.add(pw.project)
            self._cond.notify()

    def _limit_reached(self, pw: _ProjectWatch, exc: OSError | None) -> None:
        reason = (exc.strerror or str(exc)) if exc is not None else "no inotify instance"
        log.warning("inotify limit reached (%s); watching %s by polling every %.0f s",
                    reason, pw.project, POLL_INTERVAL_SECONDS)  # fmt: skip
        self._to_polling(pw)

    def _drop(self, pw: _ProjectWatch, role: str) -> None:
        dw = pw.watches.pop(role)
        if self._inotify is not None and dw.wd >= 0:
            try:
                self._inotify.remove_callbacks([(dw.wd, dw.id)])
            except OSError as exc:
                log.debug("remove watch on %s (%s): %s", pw.project, role, exc)

    def _drop_tool(self, pw: _ProjectWatch, folder: Path) -> None:
        dw = pw.tool_watches.pop(folder)
        if self._inotify is not None and dw.wd >= 0:
            try:
                self._inotify.remove_callbacks([(dw.wd, dw.id)])
            except OSError as exc:
                log.debug("remove watch on %s (tools of %s): %s", folder, pw.project, exc)

    def _points(self, project: Path) -> dict[Path, frozenset[str] | None]:
        """The tool directories to watch for ``project``, one entry per directory."""
        if self._tool_points is None:
            return {}
        try:
            found = self._tool_points(project)
        except Exception as exc:  # a bad [import] config: logged, the memory still watched
            log.warning("cannot locate the agent tool memories of %s: %s", project, exc)
            return {}
        out: dict[Path, frozenset[str] | None] = {}
        for folder, names in found:
            if folder in out:
                prior = out[folder]
                out[folder] = None if prior is None or names is None else prior | names
            else:
                out[folder] = names
        return out

    def _arm_tools(self, pw: _ProjectWatch) -> None:
        """The tool watches of ``_arm`` (caller holds ``_lock``)."""
        assert self._inotify is not None
        if pw.tools_polled:
            return
        points = self._points(pw.project)
        for folder, dw in list(pw.tool_watches.items()):
            gone = folder not in points or points[folder] != dw.names
            if gone or _dir_key(folder) != dw.key or not dw.alive:
                self._drop_tool(pw, folder)
        for folder, names in points.items():
            key = _dir_key(folder)
            if key is None or folder in pw.tool_watches:
                continue
            dw = _DirWatch(self, pw.project, TOOLS_ROLE, key, names)
            try:
                dw.wd = self._inotify.add_callback(os.fsencode(folder), MEMORY_MASK, dw, dw.id)
            except OSError as exc:
                if is_limit_error(exc):
                    log.warning(
                        "inotify limit reached (%s); polling the agent tool folders of %s",
                        exc.strerror or exc,
                        pw.project,
                    )
                    for held in list(pw.tool_watches):
                        self._drop_tool(pw, held)
                    pw.tools_polled = True
                    with self._cond:
                        self._tools_polled.add(pw.project)
                        self._cond.notify()
                    return
                log.debug("cannot watch %s yet: %s", folder, exc)
                continue
            pw.tool_watches[folder] = dw
            if dw.wd < 0:
                self._drop_tool(pw, folder)
                log.warning("cannot watch %s: permission denied", folder)

    def _arm(self, pw: _ProjectWatch) -> None:
        """Make the watches match the directories that exist now (caller holds ``_lock``)."""
        if pw.mode != "inotify" or self._inotify is None:
            return
        self._arm_memory(pw)
        if pw.mode == "inotify":
            self._arm_tools(pw)

    def _arm_memory(self, pw: _ProjectWatch) -> None:
        """The memory chain's watches of ``_arm`` (caller holds ``_lock``)."""
        assert self._inotify is not None
        for role, path in chain(pw.project):
            try:
                st = os.stat(path)
                key: tuple[int, int] | None = (st.st_dev, st.st_ino)
            except OSError:
                key = None
            current = pw.watches.get(role)
            if current is not None and (key is None or key != current.key or not current.alive):
                self._drop(pw, role)
                current = None
            if key is None or current is not None:
                continue
            dw = _DirWatch(self, pw.project, role, key)
            mask = MEMORY_MASK if role == MEMORY_SUBDIR else CHAIN_MASK
            try:
                dw.wd = self._inotify.add_callback(os.fsencode(path), mask, dw, dw.id)
            except OSError as exc:
                if is_limit_error(exc):
                    self._limit_reached(pw, exc)
                    return
                log.debug("cannot watch %s yet: %s", path, exc)
                continue
            pw.watches[role] = dw
            if dw.wd < 0:  # watchdog ignores EACCES: no watch was made
                self._drop(pw, role)
                log.warning("cannot watch %s: permission denied", path)
            elif role == MEMORY_SUBDIR:
                with self._cond:  # what was written before this watch existed: by content
                    self._thorough[pw.project] = True

    # -- events and the clock ------------------------------------------------------------------
    def on_event(self, project: Path, kind: str = "memory", *, thorough: bool = False) -> None:
        """A relevant event for ``project``'s memory files or (``kind`` "tools") its agent
        tool folders (in the inotify reader thread: the leaf lock only)."""
        now = time.monotonic()
        key = (project, kind)
        with self._cond:
            if self._stopping or project not in self._projects:  # a dict read: atomic
                return
            self._thorough[project] = thorough or self._thorough.get(project, False)
            first = self._due.get(key, (0.0, now))[1]
            self._due[key] = (min(now + DEBOUNCE_SECONDS, first + MAX_DELAY_SECONDS), first)
            self._cond.notify()

    def on_overflow(self) -> None:
        with self._cond:
            self._overflow = True
            self._cond.notify()

    def _next_ready(self) -> tuple[list[Key], bool] | None:
        """Wait (holding the leaf) until something is ready: ((project, kind)s, overflow)."""
        with self._cond:
            while not self._stopping:
                now = time.monotonic()
                if self._overflow:
                    self._overflow = False
                    self._due.clear()
                    return [(p, k) for p in self._projects for k in ("memory", "tools")], True
                ready = [key for key, (at, _) in self._due.items() if at <= now]
                for key in ready:
                    del self._due[key]
                polling = self._polled or self._tools_polled
                if polling and now >= self._next_poll:
                    self._next_poll = now + POLL_INTERVAL_SECONDS
                    polled = [(p, k) for p in self._polled for k in ("memory", "tools")]
                    polled += [(p, "tools") for p in self._tools_polled]
                    ready += [key for key in polled if key not in ready]
                if ready:
                    return ready, False
                wakes = [at for at, _ in self._due.values()]
                if polling:
                    wakes.append(self._next_poll)
                self._cond.wait(max(0.0, min(wakes) - now) if wakes else None)
            return None

    def _run_clock(self) -> None:
        while True:
            batch = self._next_ready()
            if batch is None:
                return
            ready, overflow = batch
            if overflow:
                log.warning("inotify queue overflowed: re-checking all %d projects", len(ready))
            with self._lock:  # after the leaf is released: the lock order is _lock, _cond
                for project in dict.fromkeys(p for p, _ in ready):
                    pw = self._projects.get(project)
                    if pw is not None:
                        self._arm(pw)
            for project, kind in ready:
                try:
                    if kind == "memory":
                        with self._cond:
                            thorough = self._thorough.pop(project, False)
                        self._on_change(project, thorough or overflow)
                    elif self._on_tools is not None:
                        self._on_tools(project)
                except Exception as exc:  # the writer is closed: we are stopping
                    log.debug("%s of %s not queued: %s", kind, project, exc)
