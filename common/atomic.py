"""Replacing one file whole or not at all: the one atomic write for every file outside the
memory folder (settings, registry, service file, pid file, a merge result, the hook's last
block). The memory files themselves go through ``core/fsio.commit`` (all three together).

Standard library only and nothing loaded at import: the hooks write with it on their deadline
path without loading the core.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

TEMP_MARK = ".tmp-"  # a temp file's name: ".<name>.tmp-<pid>-<random>" (core/fsio too)


def temp_name(name: str) -> str:
    """The name of a temp file beside ``name``: hidden, unique to this process and attempt."""
    return f".{name}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}"


def write_atomic(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, nofollow: bool = False
) -> None:
    """Replace ``path`` with ``data`` whole or not at all: a temp file in the same directory,
    fsynced, renamed over ``path``, then the directory fsynced (best effort).

    ``mode``: the new file's exact permissions; default: those of the file it replaces, else
    0o666 minus the umask (as for any new file). ``nofollow``: refuse (``OSError`` ``ELOOP``)
    when ``path`` is a symbolic link instead of reading its target's mode. On error the temp
    file is removed, ``path`` is untouched and the ``OSError`` propagates.
    """
    target = Path(path)
    if nofollow and target.is_symlink():
        raise OSError(40, "refusing to replace a symbolic link", str(target))  # ELOOP
    tmp = target.with_name(temp_name(target.name))
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = target.stat().st_mode & 0o7777
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(tmp, flags, 0o666 if mode is None else 0o600)  # never wider than asked
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(target.parent)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable (best effort: some filesystems refuse)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
