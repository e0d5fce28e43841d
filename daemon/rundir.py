"""The daemon's directories and its single-instance lock.

Everything here runs before the socket is bound, so that the only reachable states are "this
process owns a private runtime dir and holds the lock" or "the daemon refused to start":

* every directory is created 0700 and must be owned by us and not writable by group/others;
* an exclusive ``flock`` on ``maestrod.lock`` is held for the whole life of the process (the
  kernel drops it when the process dies, however it dies);
* a stale socket or pid file is removed only once that lock is held.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import time
from pathlib import Path

from ..common.atomic import write_atomic
from ..common.paths import SUN_PATH_MAX, Paths, dir_problem, home_refusal

LOCK_GRACE_SECONDS = 0.25

log = logging.getLogger("maestrod")


class StartupError(Exception):
    """The daemon cannot start; the message says why and what to do."""


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) 0700; refuse one someone else could write."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        info = os.lstat(path)
    except OSError as exc:
        raise StartupError(f"cannot create directory {path}: {exc.strerror}") from exc
    problem = dir_problem(path, info)
    if problem is not None:
        what, fix = problem
        raise StartupError(f"{what}; refusing to start: run '{fix}' and start again")


def prepare_dirs(paths: Paths, home: Path | None = None) -> None:
    """``home``: the ``MAESTRO_HOME`` in use, if any (checked first: ``home_refusal``, the
    rule every process applies)."""
    if home is not None:
        refusal = home_refusal({"MAESTRO_HOME": str(home)})
        if refusal is not None:
            raise StartupError(f"{refusal}; refusing to start")
    for directory in paths.all_dirs():
        ensure_private_dir(directory)
    ensure_private_dir(paths.journal_dir)
    socket_dir = paths.socket_path.parent
    if socket_dir != paths.runtime_dir:
        # The short fallback for a long runtime path: /tmp/maestro-<uid>/<hash>/. Both levels
        # must be ours and private, or another user could pre-create them and listen there.
        ensure_private_dir(socket_dir.parent)
        ensure_private_dir(socket_dir)
    if len(os.fsencode(paths.socket_path)) >= SUN_PATH_MAX:
        raise StartupError(
            f"socket path {paths.socket_path} is longer than the platform limit "
            f"of {SUN_PATH_MAX - 1} bytes; set MAESTRO_HOME to a shorter path"
        )


class InstanceLock:
    """The exclusive lock that proves "I am the daemon for these paths"."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self._fd: int | None = None

    def acquire(self) -> None:
        path = self.paths.lock_path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StartupError(f"cannot open lock file {path}: {exc.strerror}") from exc
        # A client's liveness probe holds a shared lock for a few microseconds; a daemon holds
        # its exclusive lock for life. So a lock still held after a short grace is a daemon.
        deadline = time.monotonic() + LOCK_GRACE_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                busy = exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
                if busy and time.monotonic() < deadline:
                    time.sleep(0.005)  # retry interval of the grace period
                    continue
                os.close(fd)
                if busy:
                    raise StartupError(f"already running (pid {self._running_pid()})") from exc
                raise StartupError(f"cannot lock {path}: {exc.strerror}") from exc
        self._fd = fd
        # We are the only daemon for these paths: leftovers of a killed one are stale.
        for leftover in (self.paths.socket_path, self.paths.pid_path):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                os.close(fd)
                self._fd = None
                raise StartupError(f"cannot remove the stale {leftover}: {exc.strerror}") from exc
        self._write_pid()

    def _running_pid(self) -> str:
        try:
            text = self.paths.pid_path.read_text().strip()
        except OSError:
            return "unknown"
        return text if text.isdigit() else "unknown"

    def _write_pid(self) -> None:
        write_atomic(self.paths.pid_path, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Remove the socket and pid file, then drop the lock (in that order: whoever takes
        the lock next finds nothing of ours)."""
        if self._fd is None:
            return
        for leftover in (self.paths.socket_path, self.paths.pid_path):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                log.error("cannot remove %s: %s", leftover, exc.strerror)
        os.close(self._fd)
        self._fd = None
