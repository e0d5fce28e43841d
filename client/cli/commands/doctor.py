"""``doctor``: the checks, each a finding with a fix."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ....common import layout
from ...errors import DaemonTimeout, MaestroError
from .. import output as out
from .base import (
    EXIT_ERROR,
    EXIT_OK,
    Context,
    Outcome,
    _dict,
    command,
)

if TYPE_CHECKING:
    from ....common.replies import StatusReply


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
    """The findings of one run; each check below is a function that adds to them, grouped
    by area."""

    ctx: Context
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str, fix: str = "") -> None:
        self.checks.append(Check(name, status, detail, fix))


# -- this machine: the program, its folders, the daemon and its service, the watcher ----------
def _directories(doctor: _Doctor) -> None:
    p = doctor.ctx.paths
    from ....common.paths import dir_problem, home_problems, maestro_home

    home = maestro_home()
    if home is not None and not home_problems(home):  # else _unsafe_home failed it
        doctor.add("maestro home", "ok", f"{home} (and its parent) private to you")

    for label, path in (
        ("runtime dir", p.runtime_dir),
        ("state dir", p.state_dir),
        ("config dir", p.config_dir),
        ("log dir", p.log_dir),
    ):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            doctor.add(label, "ok", f"{path} does not exist yet (maestrod creates it)")
            continue
        except OSError as exc:
            doctor.add(
                label,
                "fail",
                f"{path}: {exc.strerror}",
                f"check the permissions of {path.parent}",
            )
            continue
        problem = dir_problem(path, st)
        if problem is not None:
            what, fix = problem
            doctor.add(label, "fail", f"{what}; maestrod refuses to start", fix)
        elif not os.access(path, os.W_OK | os.X_OK):
            doctor.add(label, "fail", f"{path} is not writable by you", f"chmod u+rwx {path}")
        else:
            doctor.add(label, "ok", str(path))
    if p.socket_path.parent != p.runtime_dir:
        doctor.add(
            "socket",
            "ok",
            f"{p.socket_path} (the runtime dir path is too long for a "
            "Unix socket, so the short fallback is used)",
        )


def _executable(doctor: _Doctor) -> None:
    from ...integrations.service import find_maestrod

    found = find_maestrod()
    if found is None:
        doctor.add(
            "maestrod",
            "fail",
            f"no maestrod beside {sys.executable} or on PATH",
            "reinstall: pip install maestro-agent-memory",
        )
    else:
        doctor.add("maestrod", "ok", str(found))


def _daemon(doctor: _Doctor) -> StatusReply | None:
    client = doctor.ctx.client()
    if not client.daemon_running():
        doctor.add(
            "daemon",
            "warn",
            "not running: memory commands use the files directly",
            "maestroctl start",
        )
        return None
    try:
        st = client.status()
    except DaemonTimeout as exc:
        doctor.add("daemon", "fail", exc.message, "maestroctl restart")
        return None
    doctor.add("daemon", "ok", f"running (pid {_dict(st.get('process')).get('pid', '?')})")
    return st


def _service(doctor: _Doctor) -> None:
    from ...integrations.service import find_maestrod, manager_for

    manager = manager_for()
    target = manager.service_file
    if not target.exists():
        doctor.add(
            "service",
            "warn",
            f"not installed ({target} does not exist): maestrod will not start at login",
            "maestroctl service install",
        )
        return
    runs = manager.installed_maestrod()
    current = find_maestrod()
    if not runs or not os.path.isabs(runs) or not os.access(runs, os.X_OK):
        doctor.add(
            "service",
            "fail",
            f"{target} runs {runs or 'nothing'}, which is not an executable file",
            "maestroctl service install",
        )
    elif current is not None and runs != str(current):
        doctor.add(
            "service",
            "warn",
            f"{target} runs {runs}, not this installation's {current}",
            "maestroctl service install (to use this one)",
        )
    elif not manager.serves_this_home():
        doctor.add(
            "service",
            "warn",
            f"{target} serves MAESTRO_HOME="
            f"{manager.installed_home() or '(default)'}, not this shell's",
            "unset MAESTRO_HOME, or re-run maestroctl service install with it set",
        )
    else:
        doctor.add("service", "ok", f"installed: {target}")


def _watcher_limits(doctor: _Doctor, st: StatusReply | None) -> None:
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
        doctor.add(
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
        for path, p in _dict(st["projects"] if st else None).items()
        if "poll" in str(_dict(p).get("watcher", "")).lower()
    ]
    detail = ", ".join(f"{k} = {v}" for k, v in values.items())
    if polling:
        doctor.add(
            "inotify",
            "fail",
            f"{detail}; watcher limit hit, polling for {', '.join(polling)}",
            fix,
        )
    elif (
        values.get("max_user_watches", 1 << 20) < 8192
        or values.get("max_user_instances", 1 << 20) < 128
    ):
        doctor.add("inotify", "warn", f"{detail}: low; file changes may be noticed late", fix)
    else:
        doctor.add("inotify", "ok", detail)


# -- the projects: the registered ones, this one's files, the agent tools' own memories -------
def _projects(doctor: _Doctor, st: StatusReply | None) -> None:
    if st is None:
        doctor.add(
            "projects",
            "warn",
            "not checked: maestrod holds the list of registered projects and is not running",
            "maestroctl start",
        )
        return
    listed = [_dict(p) for p in doctor.ctx.client().projects().get("projects") or []]
    missing = 0
    for item in listed:
        path = str(item.get("path"))
        if not item.get("exists", os.path.isdir(path)):
            missing += 1
            doctor.add(
                "project",
                "fail",
                f"{path} is registered but does not exist",
                f"maestroctl unregister {path}",
            )
        elif not item.get("memory_dir_exists", layout.memory_dir(path).is_dir()):
            missing += 1
            doctor.add(
                "project",
                "fail",
                f"{path} has no .maestro/memory directory",
                f"maestroctl init -C {path} (to start it afresh), or maestroctl unregister {path}",
            )
    if not missing:
        doctor.add(
            "projects",
            "ok",
            f"{out.plural(len(listed), 'registered project')}, all with a memory directory",
        )


def _tool_memories(doctor: _Doctor, st: StatusReply | None) -> None:
    """Where each agent tool keeps its own memory for this project (``maestroctl import``
    and the daemon's watcher read them; ``[import]`` in config.toml moves or turns them
    off), and who takes them in: the daemon as they change, or the session-start hook."""
    from pathlib import Path

    from ....common import toolsources

    project = Path(os.path.realpath(doctor.ctx.project))
    try:
        config = toolsources.import_config(doctor.ctx.paths.config_path)
    except ValueError as exc:
        doctor.add("tool memories", "fail", f"nothing imported: {exc}")
        return
    locations = toolsources.locate(project, Path.home(), config)
    for loc in locations.values():
        state = (
            "off in config.toml"
            if not loc.enabled
            else ("found" if loc.exists else "not there (yet)")
        )
        # named "tool memory (…)": the checks named after a tool are its integration's
        doctor.add(f"tool memory ({loc.tool})", "ok", f"{loc.folder or '-'} ({state}; {loc.how})")
    projects = _dict(st.get("projects")) if st is not None else {}
    mode = _dict(projects.get(str(project))).get("tool_watcher")
    if mode in ("inotify", "polling"):
        how = f"maestrod imports them as they change ({mode})"
    else:
        how = (
            "imported at each session start and by 'maestroctl import' "
            "(maestrod does not watch this project)"
        )
    doctor.add("tool memory import", "ok", how)


def _current_project(doctor: _Doctor) -> None:
    memory_dir = str(layout.memory_dir(doctor.ctx.project))
    if not os.path.isdir(memory_dir):
        return
    try:
        problems = doctor.ctx.client().entries().get("problems") or {}
    except MaestroError as exc:
        doctor.add("memory files", "fail", f"{doctor.ctx.project}: {exc.message}")
        return
    for name, items in problems.items():
        for item in items:
            doctor.add(
                "memory files",
                "warn",
                f"{memory_dir}/{name}: {item}",
                "edit the file by hand; the line is kept as it is until then",
            )
    if not problems:
        doctor.add("memory files", "ok", f"{memory_dir} parses cleanly")
    from ...integrations.gitmerge import git_setup_missing

    warning = git_setup_missing(doctor.ctx.project)
    if warning:
        doctor.add(
            "git merge driver", "warn", warning, f"maestroctl git-setup -C {doctor.ctx.project}"
        )


# -- agent tools: will their hooks run, is the MCP server registered? ------------------------


def _codex_tool(doctor: _Doctor) -> None:
    from ...integrations.codex_settings import status

    st = status(Path(doctor.ctx.project))
    if not st["found"] and not st.get("hooks"):
        return  # no Codex here
    if "error" in st:
        doctor.add("codex hooks", "fail", st["error"], "fix the file by hand")
        return
    fix = f"maestroctl integrate codex --trust -C {doctor.ctx.project}"
    hooks = st["hooks"]
    if not hooks:
        doctor.add("codex hooks", "warn", "not integrated: Codex sessions get no memory", fix)
    else:
        untrusted = [k for h in hooks.values() for k in h.get("untrusted", [])]
        errors = [h["error"] for h in hooks.values() if "error" in h]
        if errors:
            doctor.add("codex hooks", "fail", "; ".join(errors), "fix the file by hand")
        elif untrusted:
            doctor.add(
                "codex hooks",
                "warn",
                f"{len(untrusted)} untrusted (Codex skips them without a word): "
                + ", ".join(untrusted),
                fix,
            )
        elif "project" in hooks and not st["project_trusted"]:
            doctor.add(
                "codex hooks",
                "warn",
                f"{hooks['project']['path']} is not read: the project is not trusted in Codex",
                fix,
            )
        else:
            where = ", ".join(h["path"] for h in hooks.values())
            doctor.add("codex hooks", "ok", f"present and trusted: {where}")
    _mcp(doctor, "codex", bool(st["mcp"]), st["config"], fix)


def _gemini_tool(doctor: _Doctor) -> None:
    from ...integrations.gemini_settings import settings_path, status

    st = status(Path(doctor.ctx.project))
    if not st["found"] and not st.get("hooks"):
        return  # no Gemini CLI here
    if "error" in st:
        doctor.add("gemini hooks", "fail", st["error"], "fix the file by hand")
        return
    fix = f"maestroctl integrate gemini --trust -C {doctor.ctx.project}"
    hooks = st["hooks"]
    errors = [h["error"] for h in hooks.values() if "error" in h]
    if errors:
        doctor.add("gemini hooks", "fail", "; ".join(errors), "fix the file by hand")
    elif not hooks:
        doctor.add("gemini hooks", "warn", "not integrated: Gemini sessions get no memory", fix)
    elif not st["folder_trusted"]:
        doctor.add(
            "gemini hooks",
            "warn",
            f"{doctor.ctx.project} is not a trusted folder: Gemini will not run there",
            fix,
        )
    else:
        where = ", ".join(h["path"] for h in hooks.values())
        doctor.add("gemini hooks", "ok", f"present, folder trusted: {where}")
    _mcp(doctor, "gemini", bool(st["mcp"]), str(settings_path("user", Path("."))), fix)


def _mcp(doctor: _Doctor, tool: str, registered: bool, where: str, fix: str) -> None:
    from ...integrations.agent_checks import configured_door_urls, door_problems

    name = f"{tool} mcp"
    if not registered:
        doctor.add(name, "warn", f"the memory's MCP server is not registered in {where}", fix)
        return
    # Registered as the daemon's HTTP door: does a door of this user's daemon answer there?
    urls = configured_door_urls(tool, Path(doctor.ctx.project), Path.home())
    for status, detail, door_fix in door_problems(Path(where), urls):
        doctor.add(name, status, detail, door_fix)
        return
    doctor.add(name, "ok", f"registered in {where}" + (" (maestrod's HTTP door)" if urls else ""))


def _agents(doctor: _Doctor) -> None:
    from pathlib import Path

    from ...integrations.agent_checks import AGENT_CHECKS
    from ...integrations.hooks import LOG_NAME

    project = Path(doctor.ctx.project)
    hook_log = doctor.ctx.paths.log_dir / LOG_NAME
    for check in AGENT_CHECKS.values():
        for f in check(project, Path.home(), hook_log):
            doctor.add(f.name, f.status, f.detail, f.fix)


@command(
    "doctor",
    "check paths, permissions, the service, watcher limits, projects and Claude Code",
    description="Check paths, permissions, the service, the inotify limits, the "
    "registered projects and the Claude Code integration (settings, hooks, MCP, the hook "
    "log), and say how to fix each problem. Exits 1 if any check fails.",
)
def cmd_doctor(ctx: Context, ns: argparse.Namespace) -> Outcome:
    doctor = _Doctor(ctx)
    _executable(doctor)
    if _unsafe_home(doctor):  # nothing of that home is read: the other checks would
        return _report(doctor)
    _directories(doctor)
    st = _daemon(doctor)
    _service(doctor)
    _watcher_limits(doctor, st)
    _projects(doctor, st)
    _current_project(doctor)
    _codex_tool(doctor)
    _gemini_tool(doctor)
    _tool_memories(doctor, st)

    _privacy(doctor)
    _agents(doctor)
    return _report(doctor)


def _unsafe_home(doctor: _Doctor) -> bool:
    """An unsafe ``MAESTRO_HOME`` (``home_refusal``: every process refuses it) fails here;
    the fix names only the folders that are the problem, never a shared parent such as /tmp
    (a sticky parent is no problem: ``home_problems`` says which folder to change)."""
    from ....common.paths import home_refusal

    refusal = home_refusal()
    if refusal is None:
        return False
    doctor.add(
        "maestro home",
        "fail",
        refusal,
        "fix the folder named above (each problem says how), or choose a private "
        "MAESTRO_HOME (unset it for the default folders)",
    )
    return True


def _report(doctor: _Doctor) -> Outcome:
    ctx = doctor.ctx
    failed = [c for c in doctor.checks if c.status == "fail"]
    words = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}
    lines = []
    for c in doctor.checks:
        lines.append(f"{words[c.status]}  {c.name}: {c.detail}")
        if c.fix and c.status != "ok":
            lines.append(f"      fix: {c.fix}")
    lines.append("")
    warned = [c for c in doctor.checks if c.status == "warn"]
    lines.append(closing_line(len(failed), len(warned)))
    result = {
        "healthy": not failed,
        "warnings": len(warned),
        "checks": [c.to_dict() for c in doctor.checks],
    }
    return Outcome(
        result, "\n".join(lines), exit_code=EXIT_ERROR if failed else EXIT_OK, project=ctx.project
    )


def closing_line(failed: int, warned: int) -> str:
    """Doctor's last line: the problems and the warnings above it, both counted."""
    problems = out.plural(failed, "problem") if failed else "No problems"
    if not warned:
        return f"{problems} found."
    return f"{problems} and {out.plural(warned, 'warning')} found."


def _privacy(doctor: _Doctor) -> None:
    from .privacy import GIT_HISTORY_HELP, scan_memory_files

    project = doctor.ctx.project
    if not layout.memory_dir(project).is_dir():
        return
    try:
        found = scan_memory_files(project, doctor.ctx.client().core_settings())
    except MaestroError as exc:  # a link, an untrusted folder, a bad config.toml
        doctor.add("secrets in memory", "fail", f"not scanned: {exc.message}")
        return
    except OSError as exc:
        doctor.add("secrets in memory", "fail", f"cannot read the memory files: {exc}")
        return
    if not found:
        doctor.add("secrets in memory", "ok", "no secret found in the memory files")
        return
    for f in found:
        where = f.get("entry_id") or f"{f['file']} line {f['line']}"
        doctor.add(
            "secrets in memory",
            "fail",
            f"{where} ({f['file']}) holds what looks like a secret: {', '.join(f['kinds'])}",
            (f"maestroctl forget {f['entry_id']}" if "entry_id" in f else "edit the line out")
            + f"; {GIT_HISTORY_HELP}",
        )
