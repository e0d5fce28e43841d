"""The ``maestroctl`` subcommands: one function each, registered in ``COMMANDS``.

A command receives the ``Context`` (global options, the project, a lazily made ``Client``) and
its parsed arguments, and returns an ``Outcome``: the JSON-safe result and the text a person
reads. It raises ``MaestroError`` (exit 1), ``DaemonUnavailable`` (exit 3) or ``UsageProblem``
(exit 2); ``cli.py`` turns those into one line on stderr or one JSON document.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _output as out
from ._client import DEFAULT_TIMEOUT, Client

__all__ = ["COMMANDS", "DEFAULT_TIMEOUT", "Context", "Outcome", "UsageProblem"]
from .errors import DaemonNotRunning, DaemonTimeout, MaestroError

if TYPE_CHECKING:
    import subprocess

    from ..daemon.paths import Paths
    from ._service import ServiceManager

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3

START_TIMEOUT = 15.0  # how long `start` waits for the new daemon to answer hello
STOP_TIMEOUT = 15.0  # how long `stop` waits for the daemon to release its lock
POLL_INTERVAL = 0.05
DEFAULT_CATEGORY = "project_context"
DEFAULT_EPISODIC_SESSION = "manual"
SESSION_ENV = "MAESTRO_SESSION_ID"
DECISIONS = ("remove", "archive", "reinforce")
BACKGROUND_LOG = "maestrod.out.log"
NOT_RUNNING_HINT = (
    "Start it with 'maestroctl start', or have it start at login with "
    "'maestroctl service install'. Memory commands keep working without it "
    "(they read and write the files directly)."
)


class UsageProblem(Exception):
    """A command line that parsed but makes no sense (exit 2)."""


# -- context and outcome -----------------------------------------------------------------------
def find_project(start: str) -> str:
    """The nearest directory at or above ``start`` holding ``.maestro/``, else ``start``."""
    origin = os.path.abspath(start)
    current = origin
    while True:
        if os.path.isdir(os.path.join(current, ".maestro")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return origin
        current = parent


@dataclass
class Context:
    project_arg: str | None
    json: bool
    debug: bool
    require_daemon: bool | None
    timeout: float
    _client: Client | None = None
    _project: str | None = None

    @classmethod
    def from_namespace(cls, ns: argparse.Namespace) -> Context:
        return cls(
            project_arg=getattr(ns, "project", None),
            json=bool(getattr(ns, "json", False)),
            debug=bool(getattr(ns, "debug", False)),
            # None lets the client read MAESTRO_REQUIRE_DAEMON.
            require_daemon=True if getattr(ns, "require_daemon", False) else None,
            timeout=float(getattr(ns, "timeout", DEFAULT_TIMEOUT)),
        )

    @property
    def project(self) -> str:
        if self._project is None:
            if self.project_arg is not None:
                self._project = os.path.abspath(os.path.expanduser(self.project_arg))
            else:
                self._project = find_project(os.getcwd())
        return self._project

    def client(self) -> Client:
        if self._client is None:
            self._client = Client(
                self.project, timeout=self.timeout, require_daemon=self.require_daemon
            )
        return self._client

    @property
    def paths(self) -> Paths:
        return self.client().paths

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


@dataclass
class Outcome:
    result: dict[str, Any]
    text: str = ""
    exit_code: int = EXIT_OK
    via: str | None = None
    project: str | None = None
    notice: str = ""  # human mode only: printed on stderr after the text


def memory_outcome(ctx: Context, result: dict[str, Any], text: str, notice: str = "") -> Outcome:
    return Outcome(result, text, via=ctx.client().last_via, project=ctx.project, notice=notice)


# -- the registry ------------------------------------------------------------------------------
Runner = Callable[[Context, argparse.Namespace], Outcome]
Configurer = Callable[[argparse.ArgumentParser], None]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    description: str
    arguments: Configurer
    run: Runner


COMMANDS: dict[str, Command] = {}


def command(
    name: str, summary: str, arguments: Configurer = _no_arguments, description: str = ""
) -> Callable[[Runner], Runner]:
    def register(fn: Runner) -> Runner:
        COMMANDS[name] = Command(
            name, summary, description or summary[:1].upper() + summary[1:] + ".", arguments, fn
        )
        return fn

    return register


# -- shared helpers ----------------------------------------------------------------------------
def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _entry_line(entry: dict[str, Any]) -> str:
    bits = [f"confidence {entry.get('confidence', 0.0):.2f}"]
    if entry.get("salience") is not None:
        bits.append(f"salience {entry['salience']:.2f}")
    return ", ".join(bits)


def _category_words(category: Any) -> str:
    return str(category).replace("_", " ") if category else "-"


def _daemon_pid(ctx: Context) -> int | None:
    """The running daemon's pid from its pid file (no request needed)."""
    try:
        return int(ctx.paths.pid_path.read_text().strip())
    except (OSError, ValueError):
        return None


def _wait(proc: subprocess.Popen[bytes] | None) -> None:
    """Pause one polling interval (returns early if ``proc`` exits meanwhile)."""
    if proc is not None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(POLL_INTERVAL)
    else:
        time.sleep(POLL_INTERVAL)


def _answers_hello(paths: Paths) -> dict[str, Any] | None:
    """One quick hello, straight over the socket (no lock probing: the daemon may be taking
    its lock right now)."""
    if not os.path.exists(paths.socket_path):
        return None
    with Client(timeout=0.3, retries=0, require_daemon=True, paths=paths) as probe:
        try:
            return probe._request("hello", None, {})
        except DaemonTimeout:
            return None


# -- daemon lifecycle --------------------------------------------------------------------------
def _start_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--foreground",
        action="store_true",
        help="run maestrod in this terminal instead (Ctrl-C stops it)",
    )


def _daemon_argv() -> list[str]:
    from ._service import find_maestrod

    found = find_maestrod()
    return [str(found)] if found else [sys.executable, "-m", "maestro_memory.daemon"]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    home = env.get("MAESTRO_HOME")
    if home:  # the child runs in "/", so a relative MAESTRO_HOME must be made absolute
        env["MAESTRO_HOME"] = os.path.abspath(os.path.expanduser(home))
    env.pop("NOTIFY_SOCKET", None)  # not ours to hand on: we are not its service manager
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
    from ._service import manager_for

    manager = manager_for()
    return manager if manager.serves_this_home() else None


def start_daemon(ctx: Context) -> dict[str, Any]:
    """Start maestrod detached and wait until it answers; returns what happened."""
    from ._service import ServiceError, run_command

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
    while True:
        hello = _answers_hello(ctx.paths)
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
    from ._liveness import lock_is_held

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


# -- status, paths, doctor ---------------------------------------------------------------------
def _counts_text(counts: dict[str, Any]) -> str:
    shown = [f"{v} {k}" for k, v in counts.items() if isinstance(v, int) and v]
    return ", ".join(shown) or "empty"


def _maintenance_cell(last: dict[str, Any]) -> str:
    if not last:
        return "never"
    when = out.local_time(last.get("time"))
    outcome = str(last.get("outcome") or "?")
    if outcome != "ok" and last.get("message"):
        outcome += f" ({last['message']})"
    return f"{when} {outcome}"


def _status_text(st: dict[str, Any]) -> str:
    process = _dict(st.get("process"))
    lines = [
        f"maestrod is running (pid {process.get('pid', '?')}, up "
        f"{out.duration(process.get('uptime_s'))}, version {st.get('version', '?')})."
    ]
    requests = _dict(st.get("requests"))
    open_files = process.get("open_files")
    pairs: list[tuple[str, Any]] = [
        ("memory", out.size(process.get("rss_bytes"))),
        ("cpu", f"{process.get('cpu_percent', 0.0):.1f} %"),
        ("threads", process.get("threads")),
        ("open files", open_files if isinstance(open_files, int) and open_files >= 0 else "-"),
        ("requests", f"{requests.get('served', 0)} served, {requests.get('failed', 0)} failed"),
        ("write queue", st.get("write_queue_depth")),
        ("socket", st.get("endpoint")),
    ]
    schedule = _dict(st.get("maintenance"))
    if schedule:
        pairs.append(
            (
                "maintenance",
                f"'{schedule.get('cron')}' ({schedule.get('timezone')}), "
                f"next {out.local_time(schedule.get('next_run'))}",
            )
        )
    if st.get("stopping"):
        pairs.append(("state", "shutting down"))
    lines.append(out.key_values(pairs))
    projects = _dict(st.get("projects"))
    if projects:
        rows: list[list[Any]] = []
        for path, p in projects.items():
            info = _dict(p)
            maintenance = _dict(info.get("maintenance"))
            problems = _dict(info.get("problems"))
            notes = []
            if not info.get("memory_dir_exists", True):
                notes.append("no memory dir yet")
            if info.get("read_error"):
                notes.append(f"read error: {info['read_error']}")
            if problems:
                notes.append(f"{sum(len(v) for v in problems.values())} parse problem(s)")
            rows.append(
                [
                    out.home_relative(path),
                    _counts_text(_dict(info.get("entries"))),
                    info.get("watcher", "-"),
                    out.local_time(info.get("last_external_edit")),
                    _maintenance_cell(_dict(maintenance.get("last"))),
                    "; ".join(notes) or "ok",
                ]
            )
        lines += [
            "",
            out.table(
                [
                    "PROJECT",
                    "ENTRIES",
                    "WATCHER",
                    "LAST EXTERNAL EDIT",
                    "LAST MAINTENANCE",
                    "NOTES",
                ],
                rows,
            ),
        ]
    else:
        lines += ["", "No projects registered yet: 'maestroctl register' in a project adds it."]
    ops = _dict(requests.get("ops"))
    if ops:
        op_rows = [
            [
                op,
                _dict(v).get("count"),
                _dict(v).get("failed"),
                _dict(v).get("p50_ms"),
                _dict(v).get("p99_ms"),
            ]
            for op, v in ops.items()
        ]
        lines += ["", out.table(["OP", "REQUESTS", "FAILED", "P50 MS", "P99 MS"], op_rows)]
    return "\n".join(lines)


@command(
    "status",
    "say whether maestrod is running and what it is doing",
    description="Say whether maestrod is running and what it is doing. Exits 3 when it is "
    "not running (like 'systemctl status'), 0 when it is.",
)
def cmd_status(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if not client.daemon_running():
        result = {"running": False, "socket": str(ctx.paths.socket_path), "hint": NOT_RUNNING_HINT}
        text = f"maestrod is not running.\n{NOT_RUNNING_HINT}"
        return Outcome(result, text, exit_code=EXIT_UNAVAILABLE)
    st = client.status()
    return Outcome({"running": True, **st}, _status_text(st), via="daemon")


def _paths_result(ctx: Context) -> dict[str, Any]:
    from ._service import find_maestrod, manager_for

    p = ctx.paths
    manager = manager_for()
    return {
        "maestro_home": os.environ.get("MAESTRO_HOME") or None,
        "runtime_dir": str(p.runtime_dir),
        "socket": str(p.socket_path),
        "lock": str(p.lock_path),
        "pid_file": str(p.pid_path),
        "state_dir": str(p.state_dir),
        "registry": str(p.registry_path),
        "journal_dir": str(p.journal_dir),
        "config_dir": str(p.config_dir),
        "config": str(p.config_path),
        "log_dir": str(p.log_dir),
        "log": str(p.log_path),
        "maestrod": str(find_maestrod() or "") or None,
        "service_file": str(manager.service_file),
        "project": ctx.project,
        "memory_dir": os.path.join(ctx.project, ".maestro", "memory"),
    }


@command("paths", "show where the socket, state, config, logs and service file live")
def cmd_paths(ctx: Context, ns: argparse.Namespace) -> Outcome:
    result = _paths_result(ctx)
    labels = [(k.replace("_", " "), v if v is not None else "-") for k, v in result.items()]
    return Outcome(result, out.key_values(labels), project=ctx.project)


@dataclass
class Check:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


@dataclass
class _Doctor:
    ctx: Context
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str, fix: str = "") -> None:
        self.checks.append(Check(name, status, detail, fix))

    def directories(self) -> None:
        p = self.ctx.paths
        for label, path, private in (
            ("runtime dir", p.runtime_dir, True),
            ("state dir", p.state_dir, False),
            ("config dir", p.config_dir, False),
            ("log dir", p.log_dir, False),
        ):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                self.add(label, "ok", f"{path} does not exist yet (maestrod creates it)")
                continue
            except OSError as exc:
                self.add(
                    label,
                    "fail",
                    f"{path}: {exc.strerror}",
                    f"check the permissions of {path.parent}",
                )
                continue
            import stat as stat_mod

            if not stat_mod.S_ISDIR(st.st_mode):
                self.add(label, "fail", f"{path} is not a directory", f"remove or rename {path}")
            elif st.st_uid != os.getuid():
                self.add(
                    label,
                    "fail",
                    f"{path} belongs to uid {st.st_uid}, not to you",
                    f"remove it (as its owner) or fix it: chown {os.getuid()} {path}",
                )
            elif private and st.st_mode & 0o077:
                self.add(
                    label,
                    "fail",
                    f"{path} is open to other users "
                    f"(mode {st.st_mode & 0o777:o}); maestrod refuses to start",
                    f"chmod 700 {path}",
                )
            elif st.st_mode & 0o022:
                self.add(
                    label,
                    "fail",
                    f"{path} is writable by other users (mode {st.st_mode & 0o777:o})",
                    f"chmod go-w {path}",
                )
            elif not os.access(path, os.W_OK | os.X_OK):
                self.add(label, "fail", f"{path} is not writable by you", f"chmod u+rwx {path}")
            else:
                self.add(label, "ok", str(path))
        if p.socket_path.parent != p.runtime_dir:
            self.add(
                "socket",
                "ok",
                f"{p.socket_path} (the runtime dir path is too long for a "
                "Unix socket, so the short fallback is used)",
            )

    def executable(self) -> None:
        from ._service import find_maestrod

        found = find_maestrod()
        if found is None:
            self.add(
                "maestrod",
                "fail",
                f"no maestrod beside {sys.executable} or on PATH",
                "reinstall: pip install maestro-memory",
            )
        else:
            self.add("maestrod", "ok", str(found))

    def daemon(self) -> dict[str, Any] | None:
        client = self.ctx.client()
        if not client.daemon_running():
            self.add(
                "daemon",
                "warn",
                "not running: memory commands use the files directly",
                "maestroctl start",
            )
            return None
        try:
            st = client.status()
        except DaemonTimeout as exc:
            self.add("daemon", "fail", exc.message, "maestroctl restart")
            return None
        self.add("daemon", "ok", f"running (pid {_dict(st.get('process')).get('pid', '?')})")
        return st

    def service(self) -> None:
        from ._service import find_maestrod, manager_for

        manager = manager_for()
        target = manager.service_file
        if not target.exists():
            self.add(
                "service",
                "warn",
                f"not installed ({target} does not exist): maestrod will not start at login",
                "maestroctl service install",
            )
            return
        runs = manager.installed_maestrod()
        current = find_maestrod()
        if not runs or not os.path.isabs(runs) or not os.access(runs, os.X_OK):
            self.add(
                "service",
                "fail",
                f"{target} runs {runs or 'nothing'}, which is not an executable file",
                "maestroctl service install",
            )
        elif current is not None and runs != str(current):
            self.add(
                "service",
                "warn",
                f"{target} runs {runs}, not this installation's {current}",
                "maestroctl service install (to use this one)",
            )
        elif not manager.serves_this_home():
            self.add(
                "service",
                "warn",
                f"{target} serves MAESTRO_HOME="
                f"{manager.installed_home() or '(default)'}, not this shell's",
                "unset MAESTRO_HOME, or re-run maestroctl service install with it set",
            )
        else:
            self.add("service", "ok", f"installed: {target}")

    def watcher_limits(self, st: dict[str, Any] | None) -> None:
        if not sys.platform.startswith("linux"):
            return
        base = "/proc/sys/fs/inotify/"
        values: dict[str, int] = {}
        for name in ("max_user_watches", "max_user_instances"):
            try:
                with open(base + name) as fh:
                    values[name] = int(fh.read().strip())
            except (OSError, ValueError):
                pass
        if not values:
            self.add(
                "inotify",
                "warn",
                "cannot read /proc/sys/fs/inotify limits",
                "the daemon falls back to polling if watches run out",
            )
            return
        fix = (
            "sudo sysctl -w fs.inotify.max_user_watches=524288 "
            "fs.inotify.max_user_instances=512 (and add them to /etc/sysctl.d/ to keep them)"
        )
        polling = [
            path
            for path, p in _dict((st or {}).get("projects")).items()
            if "poll" in str(_dict(p).get("watcher", "")).lower()
        ]
        detail = ", ".join(f"{k} = {v}" for k, v in values.items())
        if polling:
            self.add(
                "inotify",
                "fail",
                f"{detail}; watcher limit hit, polling for {', '.join(polling)}",
                fix,
            )
        elif (
            values.get("max_user_watches", 1 << 20) < 8192
            or values.get("max_user_instances", 1 << 20) < 128
        ):
            self.add("inotify", "warn", f"{detail}: low; file changes may be noticed late", fix)
        else:
            self.add("inotify", "ok", detail)

    def projects(self, st: dict[str, Any] | None) -> None:
        if st is None:
            self.add(
                "projects",
                "warn",
                "not checked: maestrod holds the list of registered projects and is not running",
                "maestroctl start",
            )
            return
        listed = [_dict(p) for p in self.ctx.client().projects().get("projects") or []]
        missing = 0
        for item in listed:
            path = str(item.get("path"))
            if not item.get("exists", os.path.isdir(path)):
                missing += 1
                self.add(
                    "project",
                    "fail",
                    f"{path} is registered but does not exist",
                    f"maestroctl unregister {path}",
                )
            elif not item.get(
                "memory_dir_exists", os.path.isdir(os.path.join(path, ".maestro", "memory"))
            ):
                missing += 1
                self.add(
                    "project",
                    "fail",
                    f"{path} has no .maestro/memory directory",
                    f"maestroctl init -C {path} (to start it afresh), or "
                    f"maestroctl unregister {path}",
                )
        if not missing:
            self.add(
                "projects",
                "ok",
                f"{out.plural(len(listed), 'registered project')}, all with a memory directory",
            )

    def current_project(self) -> None:
        memory_dir = os.path.join(self.ctx.project, ".maestro", "memory")
        if not os.path.isdir(memory_dir):
            return
        try:
            problems = self.ctx.client().entries().get("problems") or {}
        except MaestroError as exc:
            self.add("memory files", "fail", f"{self.ctx.project}: {exc.message}")
            return
        for name, items in problems.items():
            for item in items:
                self.add(
                    "memory files",
                    "warn",
                    f"{memory_dir}/{name}: {item}",
                    "edit the file by hand; the line is kept as it is until then",
                )
        if not problems:
            self.add("memory files", "ok", f"{memory_dir} parses cleanly")
        from .gitmerge import git_setup_missing

        warning = git_setup_missing(self.ctx.project)
        if warning:
            self.add(
                "git merge driver", "warn", warning, f"maestroctl git-setup -C {self.ctx.project}"
            )


@command(
    "doctor",
    "check paths, permissions, the service, watcher limits and projects",
    description="Check paths, permissions, the service, the inotify limits and the "
    "registered projects, and say how to fix each problem. Exits 1 if any "
    "check fails.",
)
def cmd_doctor(ctx: Context, ns: argparse.Namespace) -> Outcome:
    doctor = _Doctor(ctx)
    doctor.executable()
    doctor.directories()
    st = doctor.daemon()
    doctor.service()
    doctor.watcher_limits(st)
    doctor.projects(st)
    doctor.current_project()
    from ._privacy import doctor_privacy

    doctor_privacy(doctor)
    failed = [c for c in doctor.checks if c.status == "fail"]
    words = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    lines = []
    for c in doctor.checks:
        lines.append(f"{words[c.status]}  {c.name}: {c.detail}")
        if c.fix and c.status != "ok":
            lines.append(f"      fix: {c.fix}")
    lines.append("")
    lines.append(f"{out.plural(len(failed), 'problem')} found." if failed else "No problems found.")
    result = {"healthy": not failed, "checks": [c.to_dict() for c in doctor.checks]}
    return Outcome(
        result, "\n".join(lines), exit_code=EXIT_ERROR if failed else EXIT_OK, project=ctx.project
    )


# -- projects ----------------------------------------------------------------------------------
def _project_paths(result: dict[str, Any]) -> list[str]:
    items = result.get("projects") or []
    paths = []
    for item in items:
        if isinstance(item, str):
            paths.append(item)
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            paths.append(item["path"])
    return paths


def _path_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the project directory (default: the current project)",
    )


def _chosen_path(ctx: Context, ns: argparse.Namespace) -> str:
    return os.path.abspath(os.path.expanduser(ns.path)) if ns.path else ctx.project


@command("register", "let maestrod own a project's memory (watch, cache, maintain)", _path_arg)
def cmd_register(ctx: Context, ns: argparse.Namespace) -> Outcome:
    path = _chosen_path(ctx, ns)
    result = ctx.client().register(path)
    shown = result.get("path", path)
    already = result.get("added") is False
    text = (
        f"{shown} was already registered."
        if already
        else f"Registered {shown}: maestrod now watches and maintains its memory."
    )
    return Outcome(result, text, via="daemon", project=str(shown))


@command("unregister", "stop maestrod owning a project (its files stay as they are)", _path_arg)
def cmd_unregister(ctx: Context, ns: argparse.Namespace) -> Outcome:
    path = _chosen_path(ctx, ns)
    result = ctx.client().unregister(path)
    shown = result.get("path", path)
    if result.get("removed") is False:
        return Outcome(result, f"{shown} was not registered.", via="daemon", project=str(shown))
    return Outcome(
        result,
        f"Unregistered {shown}; its memory files are untouched.",
        via="daemon",
        project=str(shown),
    )


@command("projects", "list the projects registered with maestrod")
def cmd_projects(ctx: Context, ns: argparse.Namespace) -> Outcome:
    result = ctx.client().projects()
    items = [_dict(p) for p in result.get("projects") or []]
    if not items:
        return Outcome(
            result,
            "No projects registered: 'maestroctl register' in a project adds it.",
            via="daemon",
        )
    rows: list[list[Any]] = []
    for item in items:
        if not item.get("exists", True):
            state = "directory missing"
        elif not item.get("memory_dir_exists", True):
            state = "no memory yet ('maestroctl init' creates it)"
        else:
            state = "ok"
        rows.append([out.home_relative(item.get("path", "?")), state])
    return Outcome(result, out.table(["PROJECT", "STATE"], rows), via="daemon")


# -- memory ------------------------------------------------------------------------------------
def _session_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--session", metavar="ID", help=what)


def _init_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p, "the session id (default: a new one); the same id decays only once")


@command("init", "start a session: create the files, decay once, flag what fell low", _init_args)
def cmd_init(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().initialize(ns.session)
    lines = [f"Session {r.get('session_id')} started in {out.home_relative(ctx.project)}."]
    if r.get("created"):
        lines.append(f"  created: {', '.join(r['created'])}")
    if r.get("applied", True):
        semantic = out.plural(r.get("semantic_decayed", 0), "semantic entry", "semantic entries")
        episodic = out.plural(r.get("episodic_decayed", 0), "episodic entry", "episodic entries")
        lines.append(f"  decayed: {semantic}, {episodic}")
    else:
        lines.append("  decay: already applied for this session, nothing changed")
    if r.get("pruned"):
        pruned = out.plural(len(r["pruned"]), "episodic entry", "episodic entries")
        lines.append(f"  pruned: {pruned}")
    if r.get("flagged"):
        lines.append(f"  flagged for review: {len(r['flagged'])} (see 'maestroctl review')")
    return memory_outcome(ctx, r, "\n".join(lines))


def _context_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--task",
        metavar="TEXT",
        help="the task at hand (medium-confidence entries relevant to it are included)",
    )
    p.add_argument(
        "--query",
        metavar="TEXT",
        help="a search; matching entries are included even at low confidence",
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="token budget (default: 500)")
    _session_arg(p, "the session id: the entries selected for relevance are reinforced")


@command(
    "context",
    "print the memory context block to inject into an agent's prompt",
    _context_args,
    description="Print the memory context block to inject into an agent's prompt; prints "
    "nothing when the memory is empty.",
)
def cmd_context(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.max_tokens is not None and ns.max_tokens < 0:  # 0 is a budget: nothing fits
        raise UsageProblem(f"--max-tokens must be 0 or more, got {ns.max_tokens}")
    r = ctx.client().build_context(ns.task, ns.query, ns.max_tokens, ns.session)
    return memory_outcome(ctx, r, str(r.get("context") or ""))


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0.0 and 1.0, got {text}")
    return value


def _save_semantic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", metavar="TEXT", help="the fact, in one line")
    p.add_argument(
        "--category",
        metavar="C",
        default=DEFAULT_CATEGORY,
        help="user_preference, architecture_decision, quality_rule or "
        f"project_context (default: {DEFAULT_CATEGORY})",
    )
    p.add_argument(
        "--confidence",
        type=_confidence,
        metavar="X",
        help="0.0 to 1.0 (default: 0.5, the spec's default)",
    )


@command("save-semantic", "add a long-term fact (replaces one it contradicts)", _save_semantic_args)
def cmd_save_semantic(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().save_semantic(ns.text, ns.category, ns.confidence)
    entry = r.get("entry") or {}
    action = r.get("action")
    where = _category_words(entry.get("category") or ns.category)
    if action == "added":
        text = f"Saved to semantic memory ({where}) as {entry.get('id')}, {_entry_line(entry)}."
    elif action == "replaced":
        old = r.get("replaced") or {}
        text = (
            f"Saved to semantic memory ({where}) as {entry.get('id')}, "
            f'{_entry_line(entry)}; it replaces {old.get("id")}: "{old.get("text")}".'
        )
    elif action == "reinforced":
        text = f"Already known as {entry.get('id')}; reinforced: {_entry_line(entry)}."
    else:
        text = f"Not saved: {r.get('reason') or 'the memory refused it'}."
    return memory_outcome(ctx, r, text)


def _save_episodic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", metavar="TEXT", help="what happened in this session")
    _session_arg(p, f"the session id (default: ${SESSION_ENV}, else '{DEFAULT_EPISODIC_SESSION}')")
    p.add_argument(
        "--confidence",
        type=_confidence,
        metavar="X",
        help="0.0 to 1.0 (default: 0.7, the spec's default)",
    )


@command(
    "save-episodic", "add session context (salience 1.0, decays each session)", _save_episodic_args
)
def cmd_save_episodic(ctx: Context, ns: argparse.Namespace) -> Outcome:
    session = ns.session or os.environ.get(SESSION_ENV) or DEFAULT_EPISODIC_SESSION
    r = ctx.client().save_episodic(ns.text, session, ns.confidence)
    entry = r.get("entry") or {}
    text = (
        f"Saved to episodic memory as {entry.get('id')} (session "
        f"{entry.get('session_id', session)}), {_entry_line(entry)}."
    )
    return memory_outcome(ctx, r, text)


def _detect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, metavar="TEXT", help="the user's message")
    p.add_argument("--assistant", metavar="TEXT", help="the assistant's response")


@command("detect", "find preferences and corrections in a turn and save them", _detect_args)
def cmd_detect(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().detect_signals(ns.user, ns.assistant)
    signals = r.get("signals") or []
    if not signals:
        return memory_outcome(ctx, r, "No memory signal in that message; nothing saved.")
    rows = [
        [
            s.get("action"),
            s.get("confidence"),
            _category_words(s.get("category")),
            s.get("entry_id"),
            s.get("fact"),
        ]
        for s in signals
    ]
    return memory_outcome(ctx, r, out.table(["ACTION", "CONF", "CATEGORY", "ENTRY", "FACT"], rows))


def _reinforce_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("entry_id", metavar="ID", help="the entry id (see 'maestroctl entries')")
    p.add_argument(
        "--confirm",
        action="store_true",
        help="a person confirmed it (for semantic entries: confidence + 0.1)",
    )


@command("reinforce", "boost an entry that was referenced or confirmed", _reinforce_args)
def cmd_reinforce(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().reinforce(ns.entry_id, ns.confirm)
    entry = r.get("entry") or {}
    return memory_outcome(
        ctx, r, f"Reinforced {entry.get('id', ns.entry_id)}: {_entry_line(entry)}."
    )


def _maintenance_text(report: dict[str, Any], project: str) -> str:
    where = out.home_relative(project)
    proposals = report.get("proposals") or []
    if report.get("dry_run"):
        if not proposals:
            return f"{where}: nothing to maintain (no entry is below the thresholds)."
        return (
            f"{where}: {out.plural(len(proposals), 'entry', 'entries')} would be handled "
            "(dry run, nothing changed):\n" + _proposal_table(proposals)
        )
    counts = report.get("counts") or {}
    if not report.get("applied"):
        return f"{where}: nothing to maintain (no entry is below the thresholds)."
    lines = [
        f"{where}: removed {counts.get('remove', 0)}, archived {counts.get('archive', 0)}, "
        f"reinforced {counts.get('reinforce', 0)}."
    ]
    lines += [f"  {line.lstrip('-').strip()}" for line in report.get("log_lines") or []]
    return "\n".join(lines)


def _proposal_table(proposals: list[dict[str, Any]]) -> str:
    rows = []
    for p in proposals:
        e = p.get("entry") or {}
        rows.append(
            [
                e.get("id"),
                e.get("sector"),
                e.get("confidence"),
                e.get("salience"),
                p.get("action"),
                p.get("reason"),
                e.get("text"),
            ]
        )
    return out.table(["ID", "SECTOR", "CONF", "SAL", "PROPOSED", "REASON", "TEXT"], rows)


def _maintain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--all",
        action="store_true",
        help="every project registered with maestrod (needs the daemon)",
    )
    p.add_argument("--dry-run", action="store_true", help="show the proposals, change nothing")


@command(
    "maintain", "act on low-confidence entries (remove / archive), logging each", _maintain_args
)
def cmd_maintain(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if not ns.all:
        report = client.maintenance(dry_run=ns.dry_run)
        return memory_outcome(ctx, report, _maintenance_text(report, ctx.project))
    try:
        projects = _project_paths(client.projects())
    except DaemonNotRunning:
        raise DaemonNotRunning(
            "'maintain --all' needs maestrod, which keeps the list of "
            "registered projects; start it ('maestroctl start') or run "
            "'maintain' in one project"
        ) from None
    results: list[dict[str, Any]] = []
    lines = []
    for path in projects:
        try:
            report = client.maintenance(dry_run=ns.dry_run, project=path)
        except MaestroError as exc:
            results.append(
                {"project": path, "ok": False, "error": {"code": exc.code, "message": exc.message}}
            )
            lines.append(f"{out.home_relative(path)}: FAILED: {exc.message}")
            continue
        results.append({"project": path, "ok": True, "report": report})
        lines.append(_maintenance_text(report, path))
    if not projects:
        lines.append("No projects registered: nothing to maintain.")
    failed = sum(1 for r in results if not r["ok"])
    return Outcome(
        {"projects": results, "failed": failed},
        "\n".join(lines),
        exit_code=EXIT_ERROR if failed else EXIT_OK,
        via="daemon",
    )


def _review_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--apply",
        nargs=2,
        metavar=("ID", "ACTION"),
        help="apply one decision: ACTION is remove, archive or reinforce",
    )


_PAST = {"remove": "Removed", "archive": "Archived", "reinforce": "Reinforced"}


@command(
    "review", "list flagged entries with proposals, or --apply a decision for one", _review_args
)
def cmd_review(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if ns.apply is None:
        report = client.maintenance(dry_run=True)
        proposals = report.get("proposals") or []
        if not proposals:
            return memory_outcome(ctx, report, "No entries need review.")
        text = (
            _proposal_table(proposals) + "\n\nApply one: maestroctl review --apply ID "
            "remove|archive|reinforce"
        )
        return memory_outcome(ctx, report, text)
    entry_id, action = ns.apply
    if action not in DECISIONS:
        raise UsageProblem(f"ACTION must be one of {', '.join(DECISIONS)}, got {action!r}")
    report = client.maintenance(decisions={entry_id: action})
    applied = (report.get("applied") or [{}])[0]
    entry = applied.get("entry") or {}
    text = f'{_PAST[action]} {entry.get("id", entry_id)}: "{entry.get("text", "")}".'
    return memory_outcome(ctx, report, text)


def _entries_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sector",
        choices=("semantic", "episodic", "archive"),
        help="only this sector (default: semantic and episodic)",
    )


@command("entries", "list the memory entries with their ids and scores", _entries_args)
def cmd_entries(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().entries(ns.sector)
    entries = r.get("entries") or []
    problems = _dict(r.get("problems"))
    notice = "\n".join(
        f"warning: {name}: {item}" for name, items in problems.items() for item in items
    )
    if not entries:
        return memory_outcome(ctx, r, "No entries.", notice)
    rows = [
        [
            e.get("id"),
            e.get("sector"),
            _category_words(e.get("category"))
            if e.get("sector") == "semantic"
            else e.get("session_id"),
            e.get("confidence"),
            e.get("salience"),
            e.get("date"),
            e.get("state"),
            e.get("text"),
        ]
        for e in entries
    ]
    return memory_outcome(
        ctx,
        r,
        out.table(
            ["ID", "SECTOR", "CATEGORY/SESSION", "CONF", "SAL", "DATE", "STATE", "TEXT"], rows
        ),
        notice,
    )


def _log_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, metavar="N", help="the N latest records")


def _changes_text(record: dict[str, Any]) -> str:
    parts = []
    for change in record.get("changes") or []:
        if not isinstance(change, dict):
            continue
        before, after = change.get("before"), change.get("after")
        if before is None:
            parts.append(f"+{change.get('id')}")
        elif after is None:
            parts.append(f"-{change.get('id')}")
        else:
            parts.append(
                f"{change.get('id')} {before.get('confidence', 0):.2f}→"
                f"{after.get('confidence', 0):.2f}"
            )
    if not parts and record.get("entries"):
        parts = [str(e) for e in record["entries"]]
    return ", ".join(parts) or "-"


@command("log", "show the project's journal: who changed what, and when", _log_args)
def cmd_log(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.limit is not None and ns.limit <= 0:
        raise UsageProblem(f"--limit must be a positive number, got {ns.limit}")
    r = ctx.client().log(ns.limit)
    records = next((v for k, v in r.items() if isinstance(v, list)), [])
    if not records:
        return Outcome(r, "The journal is empty.", via="daemon", project=ctx.project)
    rows = [
        [
            out.local_time(rec.get("time")),
            rec.get("op"),
            rec.get("session_id"),
            rec.get("pid"),
            _changes_text(rec),
        ]
        for rec in records
        if isinstance(rec, dict)
    ]
    return Outcome(
        r,
        out.table(["TIME", "OP", "SESSION", "PID", "CHANGES"], rows),
        via="daemon",
        project=ctx.project,
    )


# -- service -----------------------------------------------------------------------------------
def _service_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("install", "uninstall", "status"))
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; change nothing"
    )
    p.add_argument(
        "--manager",
        choices=("systemd", "launchd"),
        help="the service manager (default: launchd on macOS, systemd elsewhere)",
    )


def _plan_text(plan_dict: dict[str, Any], dry_run: bool) -> str:
    if plan_dict.get("note") and not plan_dict["actions"]:
        return str(plan_dict["note"]) + "."
    lines = ["Would:" if dry_run else "Done:"]
    for action in plan_dict["actions"]:
        lines.append(f"  {action['description']}")
        if dry_run and action.get("content"):
            lines += ["", *("    " + line for line in action["content"].splitlines()), ""]
    return "\n".join(lines)


@command(
    "service",
    "install, uninstall or show the login service (systemd or launchd)",
    _service_args,
    description="Install, uninstall or show the login service: a systemd user unit on "
    "Linux, a launchd LaunchAgent on macOS. 'install' renders the packaged "
    "template with this installation's maestrod, writes it, and enables it.",
)
def cmd_service(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from . import _service as service

    manager = service.manager_for(ns.manager)
    if ns.action == "status":
        if ns.dry_run:
            raise UsageProblem("--dry-run applies to install and uninstall")
        return _service_status(manager)
    if ns.action == "install":
        plan = manager.install_plan(
            service.require_maestrod(),
            ctx.paths.log_dir,
            daemon_running=ctx.client().daemon_running(),
        )
    else:
        plan = manager.uninstall_plan()
    result: dict[str, Any] = {"dry_run": ns.dry_run, **plan.to_dict()}
    if not ns.dry_run:

        def stop_first() -> None:
            stop_daemon(ctx)

        result["done"] = service.execute(plan, stop_first)
    text = _plan_text(plan.to_dict(), ns.dry_run)
    if not ns.dry_run and ns.action == "install":
        text += "\nmaestrod now starts at login; 'maestroctl status' shows it."
    return Outcome(result, text)


def _service_status(manager: ServiceManager) -> Outcome:
    from ._service import find_maestrod

    target = manager.service_file
    installed = target.exists()
    result: dict[str, Any] = {
        "manager": manager.name,
        "service_file": str(target),
        "installed": installed,
    }
    if not installed:
        return Outcome(
            result,
            f"Not installed ({target} does not exist). 'maestroctl service install' sets it up.",
        )
    runs = manager.installed_maestrod()
    current = find_maestrod()
    state = manager.query()
    result.update(
        {
            "maestrod": runs,
            "maestrod_exists": bool(runs and os.access(runs, os.X_OK)),
            "current_maestrod": str(current) if current else None,
            "up_to_date": bool(current) and runs == str(current),
            "maestro_home": manager.installed_home(),
            "state": state,
        }
    )
    pairs: list[tuple[str, Any]] = [("service file", target), ("runs", runs or "-")]
    if not result["maestrod_exists"]:
        pairs.append(
            ("problem", "that maestrod does not exist; re-run 'maestroctl service install'")
        )
    elif not result["up_to_date"]:
        pairs.append(("note", f"this installation's maestrod is {current}"))
    for key in ("enabled", "active", "state"):
        if key in state:
            pairs.append((key, state[key]))
    if state.get("detail"):
        pairs.append(("manager says", state["detail"]))
    return Outcome(result, f"Installed ({manager.name}).\n" + out.key_values(pairs))


# Commands kept in their own modules register themselves on import.
from . import _privacy  # noqa: E402, F401
