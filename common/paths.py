"""Where the daemon keeps its socket, lock, state, config and logs (platformdirs).

``MAESTRO_HOME=<dir>`` roots everything under one directory (``run/``, ``state/``, ``config/``,
``log/``): tests and side-by-side instances use it. The client resolves the same paths, so both
sides agree on the socket without talking first.

Unix socket paths are limited (``sun_path``: 108 bytes on Linux, 104 on macOS, including the
terminating NUL). When ``<runtime>/maestrod.sock`` is longer than that, the socket lives in a
short fallback directory, ``/tmp/maestro-<uid>/<hash>/``, where ``<hash>`` is derived from the
runtime directory: deterministic, so the client finds it too. The lock stays in the runtime dir.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .errors import MaestroError
from .layout import canonical_project

APP = "maestro-memory"
SOCKET_NAME = "maestrod.sock"
LOCK_NAME = "maestrod.lock"
PID_NAME = "maestrod.pid"
HOOK_BLOCKS_DIR = "hook-blocks"
SUN_PATH_MAX = 104 if sys.platform == "darwin" else 108


class Paths(NamedTuple):  # not a dataclass: the client loads this in agent hooks, cheaply
    runtime_dir: Path
    state_dir: Path
    config_dir: Path
    log_dir: Path

    @property
    def lock_path(self) -> Path:
        return self.runtime_dir / LOCK_NAME

    @property
    def pid_path(self) -> Path:
        return self.runtime_dir / PID_NAME

    @property
    def socket_path(self) -> Path:
        preferred = self.runtime_dir / SOCKET_NAME
        if len(os.fsencode(preferred)) < SUN_PATH_MAX:
            return preferred
        return self.socket_fallback_dir / SOCKET_NAME

    @property
    def socket_fallback_dir(self) -> Path:
        import hashlib  # only for the rare long runtime dir: hooks do not pay for it

        digest = hashlib.sha1(os.fsencode(self.runtime_dir)).hexdigest()[:12]
        return Path("/tmp") / f"maestro-{os.getuid()}" / digest

    @property
    def endpoint(self) -> str:
        return f"ipc://{self.socket_path}"

    @property
    def registry_path(self) -> Path:
        return self.state_dir / "projects.json"

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "journal"

    @property
    def jobs_path(self) -> Path:
        return self.state_dir / "maintenance.json"

    @property
    def config_path(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "maestrod.log"

    def hook_block_path(self, project: Path | str) -> Path:
        """The last context block a session-start hook served for ``project``
        (``<state>/hook-blocks/<BLAKE2b-64 of its canonical path>.json``; the path inside the
        file is checked on reading). ``forget`` deletes it, whatever path (a symlink …) the
        hook was given, and any other block in the folder that names the project."""
        import hashlib  # deferred: only a session start and forget need it

        key = hashlib.blake2b(os.fsencode(str(canonical_project(project))), digest_size=8)
        return self.state_dir / HOOK_BLOCKS_DIR / f"{key.hexdigest()}.json"

    def all_dirs(self) -> tuple[Path, ...]:
        return (self.runtime_dir, self.state_dir, self.config_dir, self.log_dir)


def resolve(env: Mapping[str, str] | None = None) -> Paths:
    """The paths for this user (or for ``MAESTRO_HOME`` when set)."""
    environ = os.environ if env is None else env
    home = environ.get("MAESTRO_HOME")
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(root / "run", root / "state", root / "config", root / "log")
    import platformdirs  # deferred: the CLI resolves paths on every start

    runtime = Path(platformdirs.user_runtime_dir(APP, appauthor=False))
    return Paths(
        runtime_dir=runtime,
        state_dir=Path(platformdirs.user_state_dir(APP, appauthor=False)),
        config_dir=Path(platformdirs.user_config_dir(APP, appauthor=False)),
        log_dir=Path(platformdirs.user_log_dir(APP, appauthor=False)),
    )


def dir_problem(path: Path, info: os.stat_result) -> tuple[str, str] | None:
    """What makes ``path`` (lstat ``info``) unsafe as one of the daemon's directories, and how
    to fix it; None when it is safe. The one rule, shared by maestrod (which refuses to start)
    and ``maestroctl doctor`` (which reports it): a real directory (no symlink), owned by this
    user, writable by no one else. Readable by others (0755) is accepted: the socket in it is
    0700 and the daemon checks each peer's uid, so reading the names inside gives nothing."""
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory (or is a symlink)", f"remove or rename {path}"
    uid = os.getuid()
    if info.st_uid != uid:
        return (
            f"{path} is owned by uid {info.st_uid}, not by this user (uid {uid})",
            f"remove it (as its owner) or fix it: chown {uid} {path}",
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (
            f"{path} is writable by group or others (mode {stat.S_IMODE(info.st_mode):04o})",
            f"chmod 700 {path}",
        )
    return None


def home_problems(home: Path) -> list[str]:
    """What makes ``MAESTRO_HOME`` unsafe: the home itself writable by group/others or not
    ours; its parent writable by group/others (unless sticky, as /tmp is: then others cannot
    rename or replace our entry) or owned by another user (who could swap the home for
    theirs). A missing home or parent is no problem (maestrod creates the home 0700)."""
    problems: list[str] = []
    uid = os.getuid()
    for path, is_home in ((home, True), (home.parent, False)):
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(f"cannot check {path}: {exc.strerror}")
            continue
        mode = stat.S_IMODE(info.st_mode)
        what = "MAESTRO_HOME" if is_home else "the parent of MAESTRO_HOME"
        if info.st_uid not in (uid, 0) or (is_home and info.st_uid != uid):
            problems.append(
                f"{what} {path} is owned by uid {info.st_uid}, not by this user (uid {uid})"
            )
        writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and is_home and info.st_mode & stat.S_ISVTX:
            problems.append(  # a shared folder such as /tmp: never suggest changing it
                f"{what} {path} is a shared folder, writable by group or others "
                f"(mode {mode:04o}); choose a private folder of your own"
            )
        elif writable and (is_home or not info.st_mode & stat.S_ISVTX):
            problems.append(
                f"{what} {path} is writable by group or others (mode {mode:04o}); "
                f"run 'chmod go-w {path}'"
            )
    return problems


def maestro_home(env: Mapping[str, str] | None = None) -> Path | None:
    """``MAESTRO_HOME`` as ``paths.resolve`` reads it, or None when unset."""
    value = (os.environ if env is None else env).get("MAESTRO_HOME")
    return Path(value).expanduser().absolute() if value else None


class UnsafeHome(MaestroError):
    """``MAESTRO_HOME`` is not safe (``home_refusal``): nothing is read from it or written."""

    code = "unsafe_home"


def home_refusal(env: Mapping[str, str] | None = None) -> str | None:
    """The one rule every process applies to ``MAESTRO_HOME`` (maestrod, the CLI in direct
    mode, the hooks, the MCP door, the viewer): the message refusing it, or None when it is
    unset or safe (``home_problems``). Two stats: cheap enough for every hook."""
    home = maestro_home(env)
    if home is None:
        return None
    problems = home_problems(home)
    if not problems:
        return None
    return (
        "; ".join(problems)
        + "; nothing is read from it (config, state) and no daemon in it is trusted"
    )


def resolve_safe(env: Mapping[str, str] | None = None) -> Paths:
    """``resolve``, refused with ``UnsafeHome`` when ``home_refusal`` says so: what every
    process but maestrod's own start-up check (and ``doctor``, which reports it) calls."""
    refusal = home_refusal(env)
    if refusal is not None:
        raise UnsafeHome(refusal)
    return resolve(env)
