"""Daemon lifecycle: ``start``, ``stop``, ``restart``."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import TYPE_CHECKING, Any

from ...errors import DaemonNotRunning, DaemonTimeout, MaestroError
from ..exits import PROG
from .base import (
    BACKGROUND_LOG,
    START_TIMEOUT,
    STOP_TIMEOUT,
    Context,
    Outcome,
    _answers_hello,
    _daemon_pid,
    _wait,
    command,
)

if TYPE_CHECKING:
    import subprocess

    from ....common.paths import Paths
    from ...integrations.service import ServiceManager


# -- daemon lifecycle --------------------------------------------------------------------------
def _start_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--foreground",
        action="store_true",
        help="run maestrod in this terminal instead (Ctrl-C stops it)",
    )


def _daemon_argv() -> list[str]:
    from ...integrations.service import find_maestrod

    found = find_maestrod()
    return [str(found)] if found else [sys.executable, "-m", "maestro_memory.daemon"]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    home = env.get("MAESTRO_HOME")
    if home:  # the child runs in "/", so a relative MAESTRO_HOME must be made absolute
        env["MAESTRO_HOME"] = os.path.abspath(os.path.expanduser(home))
    env.pop("NOTIFY_SOCKET", None)  # not ours to hand on: we are not its service manager
    env["MAESTRO_STARTED_BY"] = PROG  # what 'status' shows as who started it
    return env


def _spawn(paths: Paths) -> subprocess.Popen[bytes]:
    import subprocess

    paths.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    log_file = paths.log_dir / BACKGROUND_LOG
    with open(log_file, "ab") as log:
        return subprocess.Popen(
            _daemon_argv(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd="/",
            env=_child_env(),
            close_fds=True,
        )


def _log_tail(paths: Paths) -> str:
    try:
        lines = (paths.log_dir / BACKGROUND_LOG).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    lines = [line.strip() for line in lines if line.strip()]
    return lines[-1] if lines else ""


def _service_for_start() -> ServiceManager | None:
    from ...integrations.service import manager_for

    manager = manager_for()
    return manager if manager.serves_this_home() else None


def start_daemon(ctx: Context) -> dict[str, Any]:
    """Start maestrod detached and wait until it answers; returns what happened."""
    from ...integrations.service import ServiceError, run_command

    client = ctx.client()
    if client.daemon_running():
        return {"running": True, "started": False, "pid": _daemon_pid(ctx), "started_by": None}
    proc: subprocess.Popen[bytes] | None = None
    manager = _service_for_start()
    how = "process"
    if manager is not None:
        try:
            run_command(manager.start_argv())
            how = manager.name
        except ServiceError:
            manager = None  # an installed but broken service must not block a manual start
    if manager is None:
        proc = _spawn(ctx.paths)
    deadline = time.monotonic() + max(START_TIMEOUT, ctx.timeout)
    # Each try waits longer (0.3 s doubling to 3 s): a fixed 0.3 s never got an answer on a
    # machine so loaded that a round trip took longer (each try is a fresh socket: a late
    # reply to the previous one is lost), and start failed with the daemon up and serving.
    attempt = 0.3
    while True:
        hello = _answers_hello(ctx.paths, attempt)
        attempt = min(attempt * 2, 3.0)
        if hello is not None:
            pid = hello.get("pid") if isinstance(hello.get("pid"), int) else None
            pid = pid or _daemon_pid(ctx) or (proc.pid if proc is not None else None)
            return {
                "running": True,
                "started": True,
                "pid": pid,
                "started_by": how,
                "log": str(ctx.paths.log_dir / BACKGROUND_LOG) if proc else None,
            }
        if proc is not None and proc.poll() is not None:
            if client.daemon_running():  # another start won the race: that one serves us
                continue
            tail = _log_tail(ctx.paths)
            raise MaestroError(
                f"maestrod exited during start (status {proc.returncode})"
                + (f": {tail}" if tail else "")
                + f"; see {ctx.paths.log_dir / BACKGROUND_LOG}"
            )
        if time.monotonic() > deadline:
            raise MaestroError(
                f"maestrod did not answer within {START_TIMEOUT:g} s of being "
                f"started (via {how}); see {ctx.paths.log_dir}"
            )
        _wait(proc)


def stop_daemon(ctx: Context) -> dict[str, Any]:
    """Ask maestrod to shut down and wait until its lock is free."""
    from ..._liveness import lock_is_held

    client = ctx.client()
    if not client.daemon_running():
        return {"was_running": False, "stopped": False, "pid": None}
    pid = _daemon_pid(ctx)
    with contextlib.suppress(DaemonNotRunning, DaemonTimeout):
        client.shutdown()  # a timeout may just mean it is going already: the lock tells
    deadline = time.monotonic() + STOP_TIMEOUT
    while lock_is_held(ctx.paths.lock_path):
        if time.monotonic() > deadline:
            raise MaestroError(
                f"maestrod{f' (pid {pid})' if pid else ''} did not stop within "
                f"{STOP_TIMEOUT:g} s; its log is in {ctx.paths.log_dir}"
            )
        _wait(None)
    return {"was_running": True, "stopped": True, "pid": pid}


def _start_text(info: dict[str, Any]) -> str:
    pid = f" (pid {info['pid']})" if info.get("pid") else ""
    if not info.get("started"):
        return f"maestrod is already running{pid}."
    by = {"systemd": " by systemd", "launchd": " by launchd"}.get(str(info.get("started_by")), "")
    return f"maestrod started{by}{pid}."


@command("start", "start maestrod in the background and wait until it answers", _start_args)
def cmd_start(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.foreground:
        argv = _daemon_argv()
        sys.stdout.flush()
        os.execv(argv[0], argv)
    info = start_daemon(ctx)
    return Outcome(info, _start_text(info))


@command("stop", "ask maestrod to shut down and wait until it has")
def cmd_stop(ctx: Context, ns: argparse.Namespace) -> Outcome:
    info = stop_daemon(ctx)
    if not info["was_running"]:
        return Outcome(info, "maestrod is not running.")
    pid = f" (pid {info['pid']})" if info.get("pid") else ""
    return Outcome(info, f"maestrod stopped{pid}.")


@command("restart", "stop maestrod if it runs, then start it")
def cmd_restart(ctx: Context, ns: argparse.Namespace) -> Outcome:
    stopped = stop_daemon(ctx)
    started = start_daemon(ctx)
    lines = []
    if stopped["was_running"]:
        pid = f" (pid {stopped['pid']})" if stopped["pid"] else ""
        lines.append(f"maestrod stopped{pid}.")
    lines.append(_start_text(started))
    return Outcome({"stopped": stopped, "started": started}, "\n".join(lines))
