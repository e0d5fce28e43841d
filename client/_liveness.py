"""Is a daemon listening? Answered from the file system at once, never by waiting for a reply.

The daemon holds an exclusive ``flock`` on its lock file for its whole life and binds the socket
only after taking it (``common/paths.py``). So:

* no socket file              -> nothing listens (connecting would just queue forever);
* no lock file, or we can take
  a shared lock on it         -> no daemon holds it: a socket left behind by a killed daemon;
* the lock is held            -> a daemon is alive (it may still be slow to answer).

The shared lock, when we get it, is released straight away (by closing the descriptor:
the client runs this probe before every request). A daemon starting in that same
instant could see its non-blocking exclusive attempt fail, so the probe looks at the socket
first: a daemon that has not bound yet is reported as not running without touching its lock.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def lock_is_held(lock_path: Path | str) -> bool:
    """True when some process holds a lock on ``lock_path`` (i.e. a daemon is alive)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    except OSError:
        # Unreadable (or a symlink, which the daemon refuses too): we cannot prove it is free,
        # so let the socket decide.
        return True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            # EWOULDBLOCK: held. Anything else (ENOLCK, EINTR...): not provably free either.
            return True
        return False  # the close below releases the shared lock (one system call less)
    finally:
        os.close(fd)


def daemon_listening(socket_path: Path | str, lock_path: Path | str) -> bool:
    """True when a daemon holds the lock and its socket exists; no network round trip."""
    if not os.path.exists(socket_path):
        return False
    return lock_is_held(lock_path)
