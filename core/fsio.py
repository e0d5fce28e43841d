"""The only place the core touches the disk: the project lock and crash-safe commits.

Protocol (every writer, daemon or direct, follows it):

1. ``project_lock``: exclusive ``flock`` on ``.maestro/memory/.lock``, opened with
   ``O_NOFOLLOW`` so a planted symlink cannot redirect it. Held for the whole
   read-apply-write cycle; the kernel releases it if the holder dies.
2. ``recover``: under the lock, finish a commit a dead writer left half done (its intent file
   lists fully written, fsynced temp files: rename them into place) and delete stray temp files,
   logging each.
3. ``commit``: every changed file is written to a temp file in the same directory and fsynced.
   One file: ``os.replace`` then fsync the directory. Several files: the directory is fsynced
   (the temps' names are durable), then an intent file naming the temps is made durable
   (written to its own temp, fsynced, renamed, directory fsynced), then each temp is renamed,
   the directory fsynced, the intent removed. So after a crash the set of files is either all
   old or, after recovery, all new: ``tests/reliability/test_crash_states.py`` checks every
   crash state of every commit shape under the persistence model in ARCHITECTURE.md.

A failure before anything was renamed removes every temp file and raises
``MemoryWriteError``: the previous files are intact.

People edit these files without the lock (an editor, ``git checkout``). ``commit`` takes an
``unchanged`` check, run after the temps are durable and right before the first rename: if a
file changed since the caller read it, nothing is renamed and ``ChangedUnderneath`` is raised,
so the caller reads again and re-applies instead of renaming over the edit. That leaves a
window of a few system calls (the check's stats to the renames) instead of the whole
transaction (two fsyncs). ``commit`` returns what it wrote as ``(inode, size, mtime_ns)`` of
each file, taken from the temp file itself, so the caller can tell its own files from a later
edit. Readers take no lock: ``os.replace`` is
atomic, so a reader sees the old file or the new one, never a torn one.

The I/O steps go through ``IO`` so the fault-injection tests can fail the Nth call of any step
and the crash-state test (``tests/reliability/test_crash_states.py``) can record them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .model import MemoryWriteError

log = logging.getLogger("maestro_memory.core")

FileSignature = tuple[int, int, int]  # (inode, size, mtime_ns)

LOCK_FILE = ".lock"
INTENT_FILE = ".commit"
TEMP_MARK = ".tmp-"


@dataclass
class _IO:
    """Indirection over the syscalls of a commit (replaced only by fault-injection tests)."""

    def open_temp(self, path: str, mode: int) -> int:
        return os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode
        )

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def fsync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


IO = _IO()


class ChangedUnderneath(MemoryWriteError):
    """A file changed (written without the lock) between the caller's read and its commit.
    Nothing was renamed: read again and re-apply."""


def signature(memory_dir: Path, names: tuple[str, ...]) -> tuple[FileSignature | None, ...]:
    """(inode, size, mtime_ns) of each file, None for a missing one: cheap to compare."""
    out: list[FileSignature | None] = []
    for name in names:
        try:
            st = os.stat(memory_dir / name)
        except FileNotFoundError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and TEMP_MARK in name


class LockBusy(MemoryWriteError):
    """The project lock stayed held past the caller's deadline; nothing was read or written."""


LOCK_POLL_SECONDS = 0.01


@contextlib.contextmanager
def project_lock(memory_dir: Path, deadline: float | None = None) -> Iterator[None]:
    """Hold the project's lock for the block. ``deadline`` (a ``time.monotonic()`` value):
    give up with ``LockBusy`` when the lock is still held by someone else then (flock has no
    timeout, so the attempt repeats every ``LOCK_POLL_SECONDS``); None waits as long as it
    takes."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise MemoryWriteError(
                errno.ELOOP, f"refusing to lock {path}: it is a symlink"
            ) from exc
        raise MemoryWriteError(exc.errno, f"cannot open lock file {path}: {exc.strerror}") from exc
    try:
        if deadline is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            _flock_until(fd, path, deadline)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _flock_until(fd: int, path: Path, deadline: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LockBusy(errno.EWOULDBLOCK, f"{path} is held by another writer") from None
            time.sleep(min(LOCK_POLL_SECONDS, left))


def read_files(memory_dir: Path, names: tuple[str, ...]) -> dict[str, str | None]:
    """Read each file as text (``None`` when missing). Undecodable bytes are replaced, never
    fatal: the parser keeps what it cannot read as raw lines."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            data = (memory_dir / name).read_bytes()
        except FileNotFoundError:
            out[name] = None
            continue
        out[name] = data.decode("utf-8", errors="surrogateescape")
    return out


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _temp_path(memory_dir: Path, name: str) -> str:
    return str(memory_dir / f".{name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")


def _write_temp(
    memory_dir: Path,
    name: str,
    data: bytes,
    temps: list[str],
    sigs: dict[str, FileSignature] | None = None,
) -> str:
    target = memory_dir / name
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    tmp = _temp_path(memory_dir, name)
    fd = IO.open_temp(tmp, mode)
    temps.append(tmp)
    try:
        view = memoryview(data)
        while view:
            written = IO.write(fd, view.tobytes())
            if written <= 0:
                raise OSError(errno.EIO, "short write")
            view = view[written:]
        IO.fsync(fd)
        if sigs is not None:
            st = os.fstat(fd)  # a rename keeps inode, size and mtime: this is the file we put
            sigs[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    finally:
        os.close(fd)
    return tmp


def _intent(pairs: list[tuple[str, str]]) -> bytes:
    """The intent file: the renames to finish, as names inside the memory directory (not
    absolute paths, so a project moved or copied after a crash still recovers)."""
    names = [[os.path.basename(src), os.path.basename(dst)] for src, dst in pairs]
    return json.dumps({"renames": names}).encode()


def _cleanup(paths: list[str]) -> None:
    for p in paths:
        with contextlib.suppress(FileNotFoundError):
            IO.unlink(p)


def commit(
    memory_dir: Path, files: Mapping[str, bytes], *, unchanged: Callable[[], bool] | None = None
) -> dict[str, FileSignature]:
    """Durably replace ``files`` (name -> content) in ``memory_dir``. Caller holds the lock.

    ``unchanged``: called right before the first rename; False raises ``ChangedUnderneath``
    (nothing renamed). Returns the signature of each file written."""
    sigs: dict[str, FileSignature] = {}
    if not files:
        return sigs
    temps: list[str] = []
    pairs: list[tuple[str, str]] = []
    intent_path = str(memory_dir / INTENT_FILE)
    renamed = 0
    intent = False
    try:
        for name, data in files.items():
            pairs.append((_write_temp(memory_dir, name, data, temps, sigs), str(memory_dir / name)))
        if len(pairs) > 1:
            intent_tmp = _write_temp(memory_dir, INTENT_FILE, _intent(pairs), temps)
            # The temps' names must be durable before an intent that names them can be: else
            # a crash may keep the intent and one temp but lose another temp's name, and
            # recovery would finish half the commit (found by tests/reliability/
            # test_crash_states.py).
            IO.fsync_dir(str(memory_dir))
            IO.replace(intent_tmp, intent_path)
            temps.remove(intent_tmp)
            intent = True
            IO.fsync_dir(str(memory_dir))
        if unchanged is not None and not unchanged():
            raise ChangedUnderneath(
                errno.EAGAIN,
                f"{', '.join(files)} in {memory_dir} changed while this write "
                "was prepared (written without the lock); nothing was written",
            )
        for src, dst in pairs:
            IO.replace(src, dst)
            renamed += 1
        IO.fsync_dir(str(memory_dir))
    except ChangedUnderneath:
        _cleanup(temps + ([intent_path] if intent else []))
        raise
    except OSError as exc:
        if renamed == 0:
            _cleanup(temps + ([intent_path] if intent else []))
            raise MemoryWriteError(
                exc.errno or errno.EIO,
                f"writing {', '.join(files)} in {memory_dir} failed ({exc.strerror or exc}); "
                "the previous files are intact",
            ) from exc
        if renamed < len(pairs):
            # Part of a multi-file commit is in place: roll forward, now or at the next lock.
            try:
                recover(memory_dir)
            except OSError:
                log.error("commit in %s interrupted; the next writer will complete it", memory_dir)
        raise MemoryWriteError(
            exc.errno or errno.EIO,
            f"writing {', '.join(files)} in {memory_dir}: the new content is in place but could "
            f"not be confirmed durable ({exc.strerror or exc})",
        ) from exc
    if intent:
        with contextlib.suppress(FileNotFoundError):
            IO.unlink(intent_path)
    return sigs


def recover_if_interrupted(memory_dir: Path) -> None:
    """For a lock-free reader: if an interrupted multi-file commit's intent file is there,
    take the lock and recover, so the reader sees all old or all new files. One stat when
    there is none. Never call it holding the lock (``flock`` is per open file: it would wait
    for itself). A reader that cannot recover (read-only files) reads what is there."""
    if not os.path.exists(memory_dir / INTENT_FILE):
        return
    try:
        with project_lock(memory_dir):
            recover(memory_dir)
    except OSError as exc:
        log.warning("cannot complete the interrupted commit in %s: %s", memory_dir, exc)


def recover(memory_dir: Path) -> list[str]:
    """Complete an interrupted multi-file commit and remove stray temp files (under the lock).

    Returns a description of what was done, one line per action (also logged)."""
    actions: list[str] = []
    intent_path = memory_dir / INTENT_FILE
    try:
        data = json.loads(intent_path.read_text())
        pairs = [(str(a), str(b)) for a, b in data["renames"]]
    except FileNotFoundError:
        pairs = []
    except (ValueError, KeyError, TypeError):
        actions.append(f"removed unreadable commit intent {intent_path}")
        log.warning(actions[-1])
        IO.unlink(str(intent_path))
        pairs = []
    else:
        for src_name, dst_name in pairs:
            # Names only, joined to this directory: never rename outside it, and an intent
            # still applies after the project was moved or copied (older intents held
            # absolute paths: their last component is the name).
            src_name, dst_name = Path(src_name).name, Path(dst_name).name
            if not is_temp_name(src_name) or dst_name in ("", LOCK_FILE, INTENT_FILE):
                continue
            src, dst = memory_dir / src_name, memory_dir / dst_name
            if os.path.exists(src):
                IO.replace(str(src), str(dst))
                actions.append(f"completed interrupted write of {dst_name}")
                log.warning("%s in %s", actions[-1], memory_dir)
        IO.fsync_dir(str(memory_dir))
        IO.unlink(str(intent_path))
    try:
        names = os.listdir(memory_dir)
    except FileNotFoundError:
        return actions
    for name in names:
        if is_temp_name(name):
            with contextlib.suppress(FileNotFoundError):
                IO.unlink(str(memory_dir / name))
            actions.append(f"deleted stale temp file {name} left by an interrupted writer")
            log.warning("%s in %s", actions[-1], memory_dir)
    return actions


def write_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` whole or not at all, for any one file outside the memory
    directory (settings, registry, service file, pid file, a merge result): a temp file in the
    same directory, fsynced, renamed over ``path``, then the directory fsynced (best effort).

    ``mode``: the new file's exact permissions; default: those of the file it replaces, else
    0o666 minus the umask (as for any new file). On error the temp file is removed, ``path``
    is untouched and the ``OSError`` propagates.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(4)}")
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = target.stat().st_mode & 0o7777
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
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
    with contextlib.suppress(OSError):
        IO.fsync_dir(str(target.parent))
