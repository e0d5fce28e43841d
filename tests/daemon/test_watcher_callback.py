"""The daemon's inotify callback implements every method watchdog's ``InotifyFD`` calls.

watchdog 7.1 added ``on_events_lost`` (called after an inotify queue overflow); a callback
without it made the reader thread raise there, so the rescan after an overflow never came.
Checked against the installed watchdog's own protocol, so the next addition fails here too.
A real overflow needs a machine-wide ``max_queued_events`` change (it would disturb every other
inotify user here), so the second test drives the callback with a recorder for the watcher.
"""

from __future__ import annotations

from pathlib import Path

from watchdog.observers.inotify_c import WatchCallback

from maestro_memory.daemon.watcher import _DirWatch


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
