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
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..common.atomic import TEMP_MARK, temp_name
from ..common.limits import MEMORY_FILE_MAX_BYTES, memory_file_too_large
from .model import (
    LinkRefused,
    MemoryWriteError,
    ProjectMissing,
    TooLarge,
    UnsafeMemory,
    UntrustedFolder,
)

log = logging.getLogger("maestro_memory.core")

FileSignature = tuple[int, int, int]  # (inode, size, mtime_ns)

LOCK_FILE = ".lock"
INTENT_FILE = ".commit"


@dataclass
class _IO:
    """Indirection over the syscalls of a commit (replaced only by fault-injection tests).
    Every name is relative to the memory folder's descriptor (``Folder.fd``)."""

    def open_temp(self, dir_fd: int, name: str, mode: int) -> int:
        return os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=dir_fd,
        )

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def replace(self, dir_fd: int, src: str, dst: str) -> None:
        os.replace(src, dst, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

    def unlink(self, dir_fd: int, name: str) -> None:
        os.unlink(name, dir_fd=dir_fd)

    def fsync_dir(self, dir_fd: int) -> None:
        os.fsync(dir_fd)


IO = _IO()


class ChangedUnderneath(MemoryWriteError):
    """A file changed (written without the lock) between the caller's read and its commit.
    Nothing was renamed: read again and re-apply."""


@dataclass(frozen=True)
class Folder:
    """A project's memory folder, opened once per operation by ``open_folder``: ``fd`` is a
    directory descriptor reached without following a link, ``path`` names it in messages.
    Every file of the operation is opened relative to ``fd``, so a link swapped in between two
    calls is never followed either."""

    path: Path
    fd: int


def folder_problem(path: Path, info: os.stat_result, uid: int, own_group: bool) -> str | None:
    """Why the memory folder ``path`` (fstat ``info``) is not trusted, or None: the rule, like
    git's ``safe.directory``. Owned by another user, or writable by others, or by a group that
    is not the user's own private group (``own_group``: the folder's group is the one named
    after this user and holding no one else, as ``umask 002`` systems give every user)."""
    if info.st_uid != uid:
        return f"{path} is owned by uid {info.st_uid}, not by this user (uid {uid})"
    if info.st_mode & stat.S_IWOTH or (info.st_mode & stat.S_IWGRP and not own_group):
        return f"{path} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _own_group(gid: int, uid: int) -> bool:
    """Whether ``gid`` is ``uid``'s private group (named like the user, with no other member).
    Asked only for a group-writable folder: ``pwd``/``grp`` are not loaded otherwise."""
    import grp
    import pwd

    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(uid)
    except KeyError:
        return False
    return (
        user.pw_gid == gid
        and group.gr_name == user.pw_name
        and not set(group.gr_mem) - {user.pw_name}
    )


def _refuse_untrusted(
    root: Path, path: Path, info: os.stat_result, trusted: frozenset[str]
) -> None:
    uid = os.getuid()  # the edge: the rule (folder_problem) takes the uid
    own = bool(info.st_mode & stat.S_IWGRP) and _own_group(info.st_gid, uid)
    problem = folder_problem(path, info, uid, own)
    if problem is not None and os.path.realpath(root) not in trusted:
        raise UntrustedFolder(
            f"not trusted: {problem}; Maestro Memory neither serves nor writes a memory "
            f"another user could have written. Fix the folder (chown/chmod go-w), or trust it "
            f"on purpose: maestroctl trust {root}"
        )


def _open_dir(name: str, dir_fd: int, shown: Path, create: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as exc:
        _refuse_link(exc, shown)
        raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o777, dir_fd=dir_fd)
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        _refuse_link(exc, shown)
        raise


def _refuse_link(exc: OSError, path: Path) -> None:
    """Raise ``LinkRefused`` for what an ``O_NOFOLLOW`` open says is a link (ELOOP; ENOTDIR
    when a directory was asked for and something else is there)."""
    if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and os.path.islink(path)):
        try:
            target = f" (to {os.readlink(path)!r})"
        except OSError:
            target = ""
        raise LinkRefused(
            f"refusing {path}: it is a symbolic link{target}; the memory is never read or "
            "written through a link. Replace it with a real folder or file"
        ) from exc
    if exc.errno == errno.ENOTDIR:
        raise UnsafeMemory(f"refusing {path}: it is not a folder") from exc


@contextlib.contextmanager
def open_folder(
    memory_dir: Path,
    *,
    create: bool = False,
    create_project: bool = False,
    trusted: frozenset[str] = frozenset(),
) -> Iterator[Folder]:
    """The memory folder ``<project>/.maestro/memory``, opened for one operation: the project
    folder as given, then ``.maestro`` and ``memory`` each with ``O_NOFOLLOW`` relative to the
    one above, each checked once (``fstat``): a link is ``LinkRefused``, a folder another user
    could write is ``UntrustedFolder`` unless its project is in ``trusted`` (canonical paths).

    ``create`` makes ``.maestro`` and ``memory`` when missing; the project folder only with
    ``create_project`` too (a library caller's new project): a registered project that is gone
    is ``ProjectMissing``, never re-created. Without ``create`` a missing folder is
    ``FileNotFoundError`` (the caller reads an empty memory)."""
    root = memory_dir.parent.parent
    if create and create_project:
        os.makedirs(root, exist_ok=True)
    try:
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise
        raise ProjectMissing(
            f"the project folder {root} is missing; nothing was written (it is never "
            "re-created: restore it, or 'maestroctl forget --project' it)"
        ) from None
    fds = [root_fd]
    try:
        here = root
        for name in (memory_dir.parent.name, memory_dir.name):
            here = here / name
            fds.append(_open_dir(name, fds[-1], here, create))
            _refuse_untrusted(root, here, os.fstat(fds[-1]), trusted)
        yield Folder(memory_dir, fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def read_file(folder: Folder, name: str) -> bytes | None:
    """The bytes of ``name`` in ``folder`` (None when missing), opened with ``O_NOFOLLOW``: a
    link is ``LinkRefused``, anything but a regular file (a pipe would block) ``UnsafeMemory``."""
    path = folder.path / name
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder.fd
        )
    except FileNotFoundError:
        return None
    except OSError as exc:
        _refuse_link(exc, path)
        raise
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise UnsafeMemory(f"refusing {path}: it is not a regular file")
    with os.fdopen(fd, "rb") as src:
        data = src.read(MEMORY_FILE_MAX_BYTES + 1)  # bounded: a huge file is never loaded
        if len(data) > MEMORY_FILE_MAX_BYTES:
            size = max(os.fstat(src.fileno()).st_size, len(data))
            raise TooLarge(memory_file_too_large(path, size, writing=False))
        return data


def signature(folder: Folder, names: tuple[str, ...]) -> tuple[FileSignature | None, ...]:
    """(inode, size, mtime_ns) of each file, None for a missing one: cheap to compare."""
    out: list[FileSignature | None] = []
    for name in names:
        try:
            st = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
        except FileNotFoundError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def exists(folder: Folder, name: str) -> bool:
    """Whether ``name`` is in ``folder`` (a link counts: it is never followed)."""
    try:
        os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and TEMP_MARK in name


class LockBusy(MemoryWriteError):
    """The project lock stayed held past the caller's deadline; nothing was read or written."""


LOCK_POLL_SECONDS = 0.01


@contextlib.contextmanager
def project_lock(folder: Folder, deadline: float | None = None) -> Iterator[None]:
    """Hold the project's lock for the block. ``deadline`` (a ``time.monotonic()`` value):
    give up with ``LockBusy`` when the lock is still held by someone else then (flock has no
    timeout, so the attempt repeats every ``LOCK_POLL_SECONDS``); None waits as long as it
    takes."""
    path = folder.path / LOCK_FILE
    try:
        fd = os.open(
            LOCK_FILE,
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder.fd,
        )
    except OSError as exc:
        _refuse_link(exc, path)
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


def read_files(folder: Folder, names: tuple[str, ...]) -> dict[str, str | None]:
    """Read each file as text (``None`` when missing; never through a link: ``read_file``).
    Undecodable bytes are replaced, never fatal: the parser keeps what it cannot read as raw
    lines."""
    out: dict[str, str | None] = {}
    for name in names:
        data = read_file(folder, name)
        out[name] = None if data is None else data.decode("utf-8", errors="surrogateescape")
    return out


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogateescape")


def _write_temp(
    folder: Folder,
    name: str,
    data: bytes,
    temps: list[str],
    sigs: dict[str, FileSignature] | None = None,
) -> str:
    try:
        mode = os.stat(name, dir_fd=folder.fd, follow_symlinks=False).st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    tmp = temp_name(name)
    fd = IO.open_temp(folder.fd, tmp, mode)
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
    return json.dumps({"renames": [[src, dst] for src, dst in pairs]}).encode()


def _cleanup(folder: Folder, names: list[str]) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            IO.unlink(folder.fd, name)


def commit(
    folder: Folder, files: Mapping[str, bytes], *, unchanged: Callable[[], bool] | None = None
) -> dict[str, FileSignature]:
    """Durably replace ``files`` (name -> content) in ``folder``. Caller holds the lock.

    ``unchanged``: called right before the first rename; False raises ``ChangedUnderneath``
    (nothing renamed). Returns the signature of each file written."""
    sigs: dict[str, FileSignature] = {}
    if not files:
        return sigs
    memory_dir = folder.path
    temps: list[str] = []
    pairs: list[tuple[str, str]] = []
    renamed = 0
    intent = False
    for name, data in files.items():  # refused before a byte is written
        if len(data) > MEMORY_FILE_MAX_BYTES:
            raise TooLarge(memory_file_too_large(memory_dir / name, len(data), writing=True))
    try:
        for name, data in files.items():
            pairs.append((_write_temp(folder, name, data, temps, sigs), name))
        if len(pairs) > 1:
            intent_tmp = _write_temp(folder, INTENT_FILE, _intent(pairs), temps)
            # The temps' names must be durable before an intent that names them can be: else
            # a crash may keep the intent and one temp but lose another temp's name, and
            # recovery would finish half the commit (found by tests/reliability/
            # test_crash_states.py).
            IO.fsync_dir(folder.fd)
            IO.replace(folder.fd, intent_tmp, INTENT_FILE)
            temps.remove(intent_tmp)
            intent = True
            IO.fsync_dir(folder.fd)
        if unchanged is not None and not unchanged():
            raise ChangedUnderneath(
                errno.EAGAIN,
                f"{', '.join(files)} in {memory_dir} changed while this write "
                "was prepared (written without the lock); nothing was written",
            )
        for src, dst in pairs:
            IO.replace(folder.fd, src, dst)
            renamed += 1
        IO.fsync_dir(folder.fd)
    except ChangedUnderneath:
        _cleanup(folder, temps + ([INTENT_FILE] if intent else []))
        raise
    except OSError as exc:
        if renamed == 0:
            _cleanup(folder, temps + ([INTENT_FILE] if intent else []))
            raise MemoryWriteError(
                exc.errno or errno.EIO,
                f"writing {', '.join(files)} in {memory_dir} failed ({exc.strerror or exc}); "
                "the previous files are intact",
            ) from exc
        if renamed < len(pairs):
            # Part of a multi-file commit is in place: roll forward, now or at the next lock.
            try:
                recover(folder)
            except OSError:
                log.error("commit in %s interrupted; the next writer will complete it", memory_dir)
        raise MemoryWriteError(
            exc.errno or errno.EIO,
            f"writing {', '.join(files)} in {memory_dir}: the new content is in place but could "
            f"not be confirmed durable ({exc.strerror or exc})",
        ) from exc
    if intent:
        with contextlib.suppress(FileNotFoundError):
            IO.unlink(folder.fd, INTENT_FILE)
    return sigs


def recover_if_interrupted(folder: Folder) -> None:
    """For a lock-free reader: if an interrupted multi-file commit's intent file is there,
    take the lock and recover, so the reader sees all old or all new files. One stat when
    there is none. Never call it holding the lock (``flock`` is per open file: it would wait
    for itself). A reader that cannot recover (read-only files) reads what is there."""
    if not exists(folder, INTENT_FILE):
        return
    try:
        with project_lock(folder):
            recover(folder)
    except OSError as exc:
        log.warning("cannot complete the interrupted commit in %s: %s", folder.path, exc)


def recover(folder: Folder) -> list[str]:
    """Complete an interrupted multi-file commit and remove stray temp files (under the lock).

    Returns a description of what was done, one line per action (also logged)."""
    actions: list[str] = []
    memory_dir = folder.path
    intent_path = memory_dir / INTENT_FILE
    try:
        raw = read_file(folder, INTENT_FILE)
        data = None if raw is None else json.loads(raw)
        pairs = [] if data is None else [(str(a), str(b)) for a, b in data["renames"]]
    except (ValueError, KeyError, TypeError):
        actions.append(f"removed unreadable commit intent {intent_path}")
        log.warning(actions[-1])
        IO.unlink(folder.fd, INTENT_FILE)
        pairs = []
    else:
        for src_name, dst_name in pairs:
            # Names only, joined to this directory: never rename outside it, and an intent
            # still applies after the project was moved or copied (older intents held
            # absolute paths: their last component is the name).
            src_name, dst_name = Path(src_name).name, Path(dst_name).name
            if not is_temp_name(src_name) or dst_name in ("", LOCK_FILE, INTENT_FILE):
                continue
            if exists(folder, src_name):
                IO.replace(folder.fd, src_name, dst_name)
                actions.append(f"completed interrupted write of {dst_name}")
                log.warning("%s in %s", actions[-1], memory_dir)
        if data is not None:
            IO.fsync_dir(folder.fd)
            IO.unlink(folder.fd, INTENT_FILE)
    for name in os.listdir(folder.fd):
        if is_temp_name(name):
            with contextlib.suppress(FileNotFoundError):
                IO.unlink(folder.fd, name)
            actions.append(f"deleted stale temp file {name} left by an interrupted writer")
            log.warning("%s in %s", actions[-1], memory_dir)
    return actions
