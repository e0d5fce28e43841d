"""Install ``maestrod`` as a login service: a systemd user unit, or a launchd LaunchAgent.

The templates ship inside the package (``maestro_memory.systemd`` / ``maestro_memory.launchd``)
and are rendered with the absolute path of the ``maestrod`` installed beside the running Python
(a venv's own, not whatever comes first on ``PATH``). Every change is first written down as a
``Plan`` of actions, so ``--dry-run`` prints exactly what ``install`` would do.

Locations honour ``$XDG_CONFIG_HOME`` and ``$HOME`` (tests point them at a temporary dir).
When ``MAESTRO_HOME`` is set, the rendered service carries it, so the service-managed daemon
and this shell use the same socket.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ...common.atomic import write_atomic
from ..errors import MaestroError

SYSTEMD_UNIT = "maestrod.service"
LAUNCHD_LABEL = "com.maestro.memory"
LAUNCHD_TEMPLATE = f"{LAUNCHD_LABEL}.plist"
MANAGERS: tuple[str, ...] = ("systemd", "launchd")
DEFAULT_PATH_DIRS: tuple[str, ...] = (
    "/opt/homebrew/bin",
    "/usr/local/bin",
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
)
COMMAND_TIMEOUT = 30.0


class ServiceError(MaestroError):
    """A service file could not be rendered, written, or handed to the service manager."""

    code = "service_error"


def default_manager() -> str:
    return "launchd" if sys.platform == "darwin" else "systemd"


def find_maestrod() -> Path | None:
    """The ``maestrod`` of this installation: beside ``sys.executable``, else on ``PATH``."""
    # Not resolved: a venv's python is a symlink to the base interpreter, whose directory has
    # no maestrod (or another one).
    beside = Path(os.path.abspath(sys.executable)).parent / "maestrod"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("maestrod")
    return Path(os.path.abspath(found)) if found else None


def require_maestrod() -> Path:
    found = find_maestrod()
    if found is None:
        raise ServiceError(
            f"cannot find the maestrod executable (looked beside "
            f"{sys.executable} and on PATH); reinstall maestro-memory"
        )
    return found


def _maestro_home(env: Mapping[str, str]) -> str | None:
    home = env.get("MAESTRO_HOME")
    return os.path.abspath(os.path.expanduser(home)) if home else None


# -- rendering ---------------------------------------------------------------------------------
def _systemd_quote(value: str, *, exec_line: bool) -> str:
    """``value`` as one systemd word: specifiers (``%``) and, in Exec lines, ``$`` escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if exec_line:
        escaped = escaped.replace("$", "$$")
    needs_quotes = any(c.isspace() or c in "\"'\\;" for c in value)
    return f'"{escaped}"' if needs_quotes else escaped


def render_systemd(maestrod: Path, env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    template = (
        resources.files("maestro_memory.systemd").joinpath(SYSTEMD_UNIT).read_text(encoding="utf-8")
    )
    exec_placeholder = "ExecStart={maestrod}"
    if exec_placeholder not in template:
        raise ServiceError(f"the packaged {SYSTEMD_UNIT} has no '{exec_placeholder}' line")
    text = template.replace(
        exec_placeholder, "ExecStart=" + _systemd_quote(str(maestrod), exec_line=True)
    )
    home = _maestro_home(environ)
    if home is not None:
        anchor = "Environment=PYTHONUNBUFFERED=1\n"
        line = "Environment=" + _systemd_quote(f"MAESTRO_HOME={home}", exec_line=False) + "\n"
        text = text.replace(anchor, anchor + line, 1)
    return text


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, replacement in values.items():
            value = value.replace("{" + key + "}", replacement)
        return value
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    return value


def launchd_path_env(maestrod: Path) -> str:
    dirs = [str(maestrod.parent), *DEFAULT_PATH_DIRS]
    return ":".join(dict.fromkeys(dirs))


def render_launchd(maestrod: Path, log_dir: Path, env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    raw = resources.files("maestro_memory.launchd").joinpath(LAUNCHD_TEMPLATE).read_bytes()
    # plistlib does the XML escaping; the template's placeholders are plain strings in it.
    data = _fill(
        plistlib.loads(raw),
        {
            "maestrod": str(maestrod),
            "log_dir": str(log_dir),
            "path": launchd_path_env(maestrod),
        },
    )
    home = _maestro_home(environ)
    if home is not None:
        data["EnvironmentVariables"]["MAESTRO_HOME"] = home
    return plistlib.dumps(data, sort_keys=False).decode("utf-8")


# -- plans -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Action:
    kind: Literal["mkdir", "write", "remove", "run", "stop_daemon"]
    path: Path | None = None
    argv: tuple[str, ...] = ()
    content: str | None = None
    check: bool = True  # a failing command stops the plan (else its failure is only reported)

    def describe(self) -> str:
        if self.kind == "mkdir":
            return f"create directory {self.path}"
        if self.kind == "write":
            return f"write {self.path}"
        if self.kind == "remove":
            return f"remove {self.path}"
        if self.kind == "stop_daemon":
            return "stop the running maestrod, so that the service manager starts it"
        return "run: " + shlex.join(self.argv) + ("" if self.check else "   (failure ignored)")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"action": self.kind, "description": self.describe()}
        if self.path is not None:
            data["path"] = str(self.path)
        if self.argv:
            data["argv"] = list(self.argv)
        if self.content is not None:
            data["content"] = self.content
        if self.kind == "run":
            data["check"] = self.check
        return data


@dataclass
class Plan:
    manager: str
    operation: Literal["install", "uninstall"]
    service_file: Path
    actions: list[Action] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "manager": self.manager,
            "operation": self.operation,
            "service_file": str(self.service_file),
            "note": self.note,
            "actions": [a.to_dict() for a in self.actions],
        }


@dataclass
class ServiceManager:
    """Where a manager keeps user services and the commands that drive them."""

    name: str
    env: Mapping[str, str]

    @property
    def service_file(self) -> Path:
        if self.name == "launchd":
            return self._home() / "Library" / "LaunchAgents" / LAUNCHD_TEMPLATE
        xdg = self.env.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else self._home() / ".config"
        return base / "systemd" / "user" / SYSTEMD_UNIT

    def _home(self) -> Path:
        home = self.env.get("HOME")
        return Path(home) if home else Path.home()

    @property
    def tool(self) -> str:
        return "launchctl" if self.name == "launchd" else "systemctl"

    def _domain(self) -> str:
        return f"gui/{os.getuid()}"

    def render(self, maestrod: Path, log_dir: Path) -> str:
        if self.name == "launchd":
            return render_launchd(maestrod, log_dir, self.env)
        return render_systemd(maestrod, self.env)

    def start_argv(self) -> tuple[str, ...]:
        if self.name == "launchd":
            return ("launchctl", "kickstart", f"{self._domain()}/{LAUNCHD_LABEL}")
        return ("systemctl", "--user", "start", SYSTEMD_UNIT)

    def install_plan(self, maestrod: Path, log_dir: Path, daemon_running: bool) -> Plan:
        target = self.service_file
        plan = Plan(self.name, "install", target)
        if daemon_running:
            plan.actions.append(Action("stop_daemon"))
        plan.actions.append(Action("mkdir", path=target.parent))
        if self.name == "launchd":
            plan.actions.append(Action("mkdir", path=log_dir))
        plan.actions.append(Action("write", path=target, content=self.render(maestrod, log_dir)))
        if self.name == "launchd":
            plan.actions += [
                Action(
                    "run",
                    argv=("launchctl", "bootout", f"{self._domain()}/{LAUNCHD_LABEL}"),
                    check=False,
                ),
                Action("run", argv=("launchctl", "bootstrap", self._domain(), str(target))),
            ]
        else:
            plan.actions += [
                Action("run", argv=("systemctl", "--user", "daemon-reload")),
                Action("run", argv=("systemctl", "--user", "enable", "--now", SYSTEMD_UNIT)),
            ]
        return plan

    def uninstall_plan(self) -> Plan:
        target = self.service_file
        plan = Plan(self.name, "uninstall", target)
        if not target.exists():
            plan.note = f"no service file at {target}: nothing to uninstall"
            return plan
        if self.name == "launchd":
            plan.actions += [
                Action(
                    "run",
                    argv=("launchctl", "bootout", f"{self._domain()}/{LAUNCHD_LABEL}"),
                    check=False,
                ),
                Action("remove", path=target),
            ]
        else:
            plan.actions += [
                Action(
                    "run",
                    argv=("systemctl", "--user", "disable", "--now", SYSTEMD_UNIT),
                    check=False,
                ),
                Action("remove", path=target),
                Action("run", argv=("systemctl", "--user", "daemon-reload"), check=False),
            ]
        return plan

    # -- reading back what is installed ------------------------------------------------------
    def installed_maestrod(self) -> str | None:
        """The maestrod path the installed service file runs, or None."""
        target = self.service_file
        try:
            if self.name == "launchd":
                args = plistlib.loads(target.read_bytes()).get("ProgramArguments") or []
                return str(args[0]) if args else None
            for line in target.read_text(encoding="utf-8").splitlines():
                if line.startswith("ExecStart="):
                    words = shlex.split(line.removeprefix("ExecStart="))
                    return words[0].replace("%%", "%").replace("$$", "$") if words else None
        except (OSError, ValueError, plistlib.InvalidFileException):
            return None
        return None

    def installed_home(self) -> str | None:
        """The MAESTRO_HOME the installed service sets, or None (the default paths)."""
        target = self.service_file
        try:
            if self.name == "launchd":
                envs = plistlib.loads(target.read_bytes()).get("EnvironmentVariables") or {}
                home = envs.get("MAESTRO_HOME")
                return str(home) if home else None
            for line in target.read_text(encoding="utf-8").splitlines():
                if line.startswith("Environment="):
                    for word in shlex.split(line.removeprefix("Environment=")):
                        if word.startswith("MAESTRO_HOME="):
                            return word.removeprefix("MAESTRO_HOME=").replace("%%", "%")
        except (OSError, ValueError, plistlib.InvalidFileException):
            return None
        return None

    def serves_this_home(self) -> bool:
        """Installed, and its daemon uses the same MAESTRO_HOME (or none) as this process."""
        return self.service_file.exists() and self.installed_home() == _maestro_home(self.env)

    def query(self) -> dict[str, Any]:
        """What the service manager says about the service (never raises)."""
        if self.name == "launchd":
            argv = ("launchctl", "print", f"{self._domain()}/{LAUNCHD_LABEL}")
            done = run_command(argv, check=False)
            loaded = done.returncode == 0
            return {
                "loaded": loaded,
                "state": "loaded" if loaded else "not loaded",
                "detail": _last_line(done.stderr) if not loaded else "",
            }
        enabled = run_command(("systemctl", "--user", "is-enabled", SYSTEMD_UNIT), check=False)
        active = run_command(("systemctl", "--user", "is-active", SYSTEMD_UNIT), check=False)
        return {
            "enabled": enabled.stdout.strip() or "unknown",
            "active": active.stdout.strip() or "unknown",
            "detail": _last_line(active.stderr or enabled.stderr),
        }


def manager_for(name: str | None = None, env: Mapping[str, str] | None = None) -> ServiceManager:
    chosen = name or default_manager()
    if chosen not in MANAGERS:
        raise ServiceError(
            f"unknown service manager {chosen!r}; expected one of {', '.join(MANAGERS)}"
        )
    return ServiceManager(chosen, os.environ if env is None else env)


# -- running -----------------------------------------------------------------------------------
def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_command(argv: tuple[str, ...], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a service-manager command; a missing tool or a failure becomes ``ServiceError``."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        if check:
            raise ServiceError(
                f"{argv[0]} not found: is this system using "
                f"{'launchd' if argv[0] == 'launchctl' else 'systemd'}?"
            ) from None
        return subprocess.CompletedProcess(list(argv), 127, "", f"{argv[0]} not found")
    except subprocess.TimeoutExpired:
        raise ServiceError(
            f"'{shlex.join(argv)}' did not finish within {COMMAND_TIMEOUT:g} s"
        ) from None
    if check and done.returncode != 0:
        why = _last_line(done.stderr) or _last_line(done.stdout) or "no message"
        raise ServiceError(f"'{shlex.join(argv)}' failed (exit {done.returncode}): {why}")
    return done


def write_file(path: Path, content: str) -> None:

    write_atomic(path, content.encode("utf-8"), mode=0o644)


def execute(plan: Plan, stop_daemon: Callable[[], None]) -> list[dict[str, Any]]:
    """Carry out ``plan`` in order; returns what each action did. Stops at a failing check."""
    done: list[dict[str, Any]] = []
    for action in plan.actions:
        record = action.to_dict()
        record.pop("content", None)
        try:
            if action.kind == "mkdir" and action.path is not None:
                action.path.mkdir(parents=True, exist_ok=True)
            elif action.kind == "write" and action.path is not None:
                write_file(action.path, action.content or "")
            elif action.kind == "remove" and action.path is not None:
                action.path.unlink(missing_ok=True)
            elif action.kind == "stop_daemon":
                stop_daemon()
            elif action.kind == "run":
                result = run_command(action.argv, check=action.check)
                record["exit_code"] = result.returncode
                if result.returncode != 0:
                    record["message"] = _last_line(result.stderr) or _last_line(result.stdout)
        except OSError as exc:
            raise ServiceError(f"could not {action.describe()}: {exc.strerror or exc}") from exc
        done.append(record)
    return done
