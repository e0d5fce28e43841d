"""The daemon's inotify callback implements every method watchdog's ``InotifyFD`` calls.

watchdog 7.1 added ``on_events_lost`` (called after an inotify queue overflow); a callback
without it made the reader thread raise there, so the rescan after an overflow never came.
Checked against the installed watchdog's own protocol, so the next addition fails here too.
A real overflow needs a machine-wide ``max_queued_events`` change (it would disturb every other
inotify user here), so the second test drives the callback with a recorder for the watcher.
"""

from __future__ import annotations

import os
from pathlib import Path

from watchdog.observers.inotify_c import (
    InotifyConstants,
    InotifyEvent,
    Mask,
    WatchCallback,
    WatchDescriptor,
)

from maestro_memory.common import layout
from maestro_memory.daemon.watcher import Watcher, _DirWatch


def test_the_callback_has_every_method_of_watchdogs_protocol() -> None:
    wanted = {name for name in vars(WatchCallback) if name.startswith("on_")}
    assert {"on_event", "on_watch_deleted", "on_queue_overflow"} <= wanted
    missing = sorted(name for name in wanted if not callable(getattr(_DirWatch, name, None)))
    assert not missing, f"_DirWatch lacks {missing}"


class _Recorder:
    def __init__(self) -> None:
        self.overflows = 0

    def on_overflow(self) -> None:
        self.overflows += 1


def test_both_overflow_calls_ask_for_a_rescan() -> None:
    recorder = _Recorder()
    watch = _DirWatch(recorder, Path("/p"), "memory", (0, 0))  # type: ignore[arg-type]
    watch.on_queue_overflow()
    watch.on_events_lost()
    assert recorder.overflows == 2


def _our_commit(project: Path) -> tuple[Watcher, Path]:
    """A watched project whose semantic.md the writer just committed (as the watcher is told)."""
    from maestro_memory.core import MemoryStore

    MemoryStore(project).save_semantic("Deploys need two approvals", "project_context", 0.9)
    path = layout.memory_dir(project) / "semantic.md"
    watcher = Watcher(lambda project, thorough: None, force_polling=True)
    watcher.watch(project)
    st = os.stat(path)
    watcher.own.committed(project, {"semantic.md": (st.st_ino, st.st_size, st.st_mtime_ns)})
    return watcher, path


def _event(mask: int, name: str) -> InotifyEvent:
    return InotifyEvent(WatchDescriptor(1), Mask(mask), 0, name.encode())


def test_the_rename_of_our_own_commit_asks_for_no_check(tmp_path: Path) -> None:
    watcher, _ = _our_commit(tmp_path)
    watch = _DirWatch(watcher, tmp_path, "memory", (0, 0))
    watch.on_event(_event(InotifyConstants.IN_MOVED_TO, "semantic.md"))
    assert not watcher._due  # ours: dropped
    watch.on_event(_event(InotifyConstants.IN_MODIFY, "semantic.md"))  # in place: never ours
    assert (tmp_path, "memory") in watcher._due and watcher._thorough.get(tmp_path)


def test_a_file_renamed_over_our_commit_is_not_ours(tmp_path: Path) -> None:
    watcher, path = _our_commit(tmp_path)
    assert watcher.own.ours(tmp_path, "semantic.md")
    edit = path.with_name("edit.tmp")
    edit.write_bytes(path.read_bytes())  # the very same bytes, but another file
    os.replace(edit, path)
    assert not watcher.own.ours(tmp_path, "semantic.md")
    watch = _DirWatch(watcher, tmp_path, "memory", (0, 0))
    watch.on_event(_event(InotifyConstants.IN_MOVED_TO, "semantic.md"))
    assert (tmp_path, "memory") in watcher._due
    assert not watcher.own.ours(tmp_path, "episodic.md")  # nothing recorded: not ours
