"""``doctor``'s checks of the agent integrations: one function per tool (``claude`` now; a
``codex`` or ``gemini`` check goes beside it, returning the same ``Finding`` list).

Claude Code: the settings files parse; Maestro's hooks are present (project, local or user
settings, or the ``maestro-memory`` plugin) and point at a maestroctl that runs; the MCP server
is registered (``.mcp.json``, ``~/.claude.json`` or the plugin); the hook log's recent
failures (fail-open hooks are silent by design, so this is where a broken one shows).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import claude_settings as cs

PLUGIN = "maestro-memory"
RECENT_DAYS = 7
PROBE_TIMEOUT = 15.0
# The absolute maestroctl a command runs: at its start, after the ``test -x`` guard, or fed
# the hook's input after the door's curl (``agent_settings.door_hook_command``).
_ABSOLUTE = re.compile(r"""(?:^|&& |\| )(['"]?)(/[^'"]+?maestroctl)\1\s+hook\s""")


@dataclass(frozen=True)
class Finding:
    name: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str = ""


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the object, None), (None, None) when absent, (None, the problem) when unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read it: {exc}"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    if not isinstance(data, dict):
        return None, "does not hold a JSON object"
    return data, None


def _our_hooks(settings: dict[str, Any]) -> dict[str, list[str]]:
    """Claude event -> the commands of our hooks in it."""
    found: dict[str, list[str]] = {}
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for claude_event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if cs.is_our_hook(hook):
                    # A command, or the URL of an http hook to the daemon's door.
                    what = hook.get("command") if hook.get("type") == "command" else hook["url"]
                    found.setdefault(str(claude_event), []).append(str(what))
    return found


def _plugin_enabled(settings: dict[str, Any]) -> bool:
    enabled = settings.get("enabledPlugins")
    return isinstance(enabled, dict) and any(
        str(k).split("@")[0] == PLUGIN and v is True for k, v in enabled.items()
    )


def _program_of(command: str) -> str | None:
    """The maestroctl a hook command runs: an absolute path, or None for the PATH form."""
    found = _ABSOLUTE.search(command)
    return found.group(2) if found else None


def _runs(program: str) -> str | None:
    """None when ``program --version`` works, else why not."""
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return f"{program} is not an executable file"
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{program} --version failed: {exc}"
    if done.returncode != 0:
        # An older maestroctl has no --version; one that answers --help still runs.
        helped = subprocess.run(
            [program, "--help"],
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        if helped.returncode != 0:
            return f"{program} exits {done.returncode}: {(done.stderr or '').strip()[:200]}"
    return None


def _mcp_servers(config: dict[str, Any] | None) -> dict[str, Any]:
    servers = (config or {}).get("mcpServers")
    return servers if isinstance(servers, dict) else {}


def _is_ours(server: Any) -> bool:
    if not isinstance(server, dict):
        return False
    from ...common.httpdoor import MCP_PATH, door_path

    door = door_path(server.get("url"))
    if door is not None and door[1] == MCP_PATH:
        return True
    command = str(server.get("command", ""))
    raw = server.get("args")
    args: list[Any] = raw if isinstance(raw, list) else []
    return os.path.basename(command) == "maestroctl" and "mcp" in [str(a) for a in args]


def hook_log_failures(
    path: Path, now: dt.datetime | None = None, days: int = RECENT_DAYS
) -> tuple[int, str]:
    """(how many hook log lines in the last ``days``, the last one's reason)."""
    moment = now or dt.datetime.now().astimezone()
    since = moment - dt.timedelta(days=days)
    count, last = 0, ""
    for name in (path.name + ".1", path.name):  # the rotated copy first: oldest to newest
        try:
            lines = (path.parent / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            stamp, _, rest = line.partition(" ")
            try:
                when = dt.datetime.fromisoformat(stamp)
            except ValueError:
                continue
            if when.tzinfo is None:
                when = when.astimezone()
            if when >= since:
                count += 1
                last = rest
    return count, last


def check_claude(project: Path, home: Path, hook_log: Path) -> list[Finding]:
    found: list[Finding] = []

    def add(name: str, status: str, detail: str, fix: str = "") -> None:
        found.append(Finding(name, status, detail, fix))

    scopes = {
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
        "user": home / ".claude" / "settings.json",
    }
    hooks_by_scope: dict[str, dict[str, list[str]]] = {}
    plugin = False
    for scope, path in scopes.items():
        settings, problem = _read_json(path)
        if problem is not None:
            add(
                "claude settings",
                "fail",
                f"{path}: {problem}; Claude Code cannot use it",
                f"fix {path} by hand",
            )
            continue
        if settings is None:
            continue
        plugin = plugin or _plugin_enabled(settings)
        ours = _our_hooks(settings)
        if ours:
            hooks_by_scope[scope] = ours
    wanted = {claude_event for claude_event, _, _ in cs.CLAUDE_HOOKS}
    if not hooks_by_scope and not plugin:
        add(
            "claude hooks",
            "warn",
            "no Maestro Memory hooks in Claude Code's settings and no maestro-memory plugin: "
            "sessions get no memory",
            f"maestroctl integrate claude -C {project} (or install the plugin, see README)",
        )
    for scope, ours in hooks_by_scope.items():
        missing = sorted(wanted - set(ours))
        if missing:
            add(
                "claude hooks",
                "warn",
                f"{scopes[scope]}: no hook for {', '.join(missing)}",
                f"maestroctl integrate claude --scope {scope}",
            )
        doubled = [e for e, cmds in ours.items() if len(cmds) > 1]
        if doubled:
            add(
                "claude hooks",
                "warn",
                f"{scopes[scope]}: more than one Maestro hook for {', '.join(doubled)}",
                f"maestroctl integrate claude --scope {scope} --remove, then add them again",
            )
        problems = _hook_program_problems(scope, scopes[scope], ours)
        for status, detail, fix in problems:
            add("claude hooks", status, detail, fix)
        if not missing and not problems:
            add("claude hooks", "ok", f"{scope} scope: {scopes[scope]}")
    if hooks_by_scope and plugin:
        add(
            "claude hooks",
            "warn",
            "both the maestro-memory plugin and settings hooks are enabled: each hook runs twice",
            "keep one: claude plugin disable maestro-memory, or maestroctl integrate claude "
            "--remove",
        )
    elif plugin:
        add("claude hooks", "ok", "from the maestro-memory plugin")
    found += _check_claude_mcp(project, home, plugin)
    count, last = hook_log_failures(hook_log)
    if count:
        add(
            "claude hook log",
            "warn",
            f"{count} hook problem(s) in the last {RECENT_DAYS} days; the last: {last}",
            f"read {hook_log} (hooks fail open: this log is where their problems show)",
        )
    else:
        add("claude hook log", "ok", f"no hook problems in the last {RECENT_DAYS} days")
    return found


def _hook_program_problems(
    scope: str, path: Path, ours: dict[str, list[str]]
) -> list[tuple[str, str, str]]:
    """(status, detail, fix) for each hook program that does not run, or is not portable."""
    from ...common.httpdoor import door_path

    problems = door_problems(path, [c for cmds in ours.values() for c in cmds if door_path(c)])
    commands = [c for cmds in ours.values() for c in cmds if door_path(c) is None]
    programs = {_program_of(c) for c in commands}
    for program in sorted(programs, key=lambda p: p or ""):
        if program is None:
            on_path = shutil.which("maestroctl")
            why = "maestroctl is not on PATH" if on_path is None else _runs(on_path)
            if why is not None:
                problems.append(
                    (
                        "fail",
                        f"{path}: the hooks run maestroctl from PATH, but {why}: they do nothing",
                        "pipx install maestro-agent-memory (or put this venv's bin on PATH)",
                    )
                )
            continue
        why = _runs(program)
        if why is not None:
            problems.append(
                (
                    "fail",
                    f"{path}: the hooks run {program}, which does not work ({why})",
                    f"maestroctl integrate claude --scope {scope}",
                )
            )
        elif scope == "project":
            problems.append(
                (
                    "warn",
                    f"{path} names {program}, a path of this machine: teammates get "
                    "'command not found'",
                    "maestroctl integrate claude (rewrites them to find maestroctl on PATH)",
                )
            )
    return problems


def door_problems(path: Path, urls: list[str]) -> list[tuple[str, str, str]]:
    """(status, detail, fix) when the daemon's HTTP door does not answer where ``urls`` (our
    settings' http hooks or MCP server) point: no daemon, no door, or another port."""
    from ...common import httpdoor, paths
    from ...common.errors import MaestroError

    ports = sorted({p[0] for p in map(httpdoor.door_path, urls) if p is not None})
    if not ports:
        return []
    try:
        open_port = httpdoor.recorded_port(paths.resolve_safe())
    except MaestroError:
        open_port = None
    if open_port is not None and ports == [open_port]:
        return []
    where = ", ".join(str(p) for p in ports)
    why = (
        "no maestrod HTTP door is open (the daemon is not running, or [http] is off)"
        if open_port is None
        else f"maestrod's door listens on port {open_port}"
    )
    return [
        (
            "fail",
            f"{path}: Maestro's settings send requests to 127.0.0.1:{where}, but {why}: "
            "those requests get no answer",
            "maestroctl start (then maestroctl integrate again if the port changed)",
        )
    ]


def _check_claude_mcp(project: Path, home: Path, plugin: bool) -> list[Finding]:
    where: list[str] = []
    problems: list[Finding] = []
    mcp_json, problem = _read_json(project / ".mcp.json")
    if problem is not None:
        problems.append(
            Finding("claude mcp", "fail", f"{project / '.mcp.json'}: {problem}", "fix it by hand")
        )
    if any(_is_ours(s) for s in _mcp_servers(mcp_json).values()):
        where.append(f"{project / '.mcp.json'} (each person approves it once)")
    config, problem = _read_json(home / ".claude.json")
    if problem is not None:
        problems.append(Finding("claude mcp", "warn", f"{home / '.claude.json'}: {problem}", ""))
    if any(_is_ours(s) for s in _mcp_servers(config).values()):
        where.append(f"{home / '.claude.json'} (user scope)")
    projects = (config or {}).get("projects")
    entry = projects.get(str(project)) if isinstance(projects, dict) else None
    if isinstance(entry, dict) and any(_is_ours(s) for s in _mcp_servers(entry).values()):
        where.append(f"{home / '.claude.json'} (this project)")
    if plugin:
        where.append("the maestro-memory plugin")
    if where:
        return [*problems, Finding("claude mcp", "ok", "registered in " + "; ".join(where))]
    return [
        *problems,
        Finding(
            "claude mcp",
            "warn",
            "maestroctl mcp is not registered with Claude Code: no memory tools in sessions",
            "claude mcp add maestro -- maestroctl mcp (or a .mcp.json, or the plugin)",
        ),
    ]


def configured_door_urls(tool: str, project: Path, home: Path) -> list[str]:
    """The URLs of the daemon's HTTP door that ``tool``'s settings for ``project`` use: our
    http hooks (Claude Code) and our MCP server (Codex ``url``, Gemini ``httpUrl``). Unreadable
    files count as none (doctor reports them elsewhere)."""
    from ...common.httpdoor import door_path

    urls: list[str] = []
    if tool == "claude":
        for path in (
            project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json",
            home / ".claude" / "settings.json",
        ):
            settings, _ = _read_json(path)
            urls += [u for us in _our_hooks(settings or {}).values() for u in us if door_path(u)]
    elif tool == "gemini":
        settings, _ = _read_json(home / ".gemini" / "settings.json")
        server = _mcp_servers(settings).get("maestro")
        urls += [server["httpUrl"]] if isinstance(server, dict) and "httpUrl" in server else []
    elif tool == "codex":
        from .codex_settings import mcp_url

        url = mcp_url()
        urls += [url] if url is not None else []
    return [u for u in urls if isinstance(u, str) and door_path(u) is not None]


DOOR_DOWN = (
    "Maestro Memory's daemon does not answer on 127.0.0.1 (no HTTP door open): this session's "
    "{what} get no answer. Start it with 'maestroctl start'."
)


def door_down_notice(tool: str, project: Path, home: Path) -> str | None:
    """What a session start says when ``tool``'s settings send prompts or MCP calls to the
    daemon's HTTP door (``integrate`` wrote them while it ran) and no door is open; None when
    they send none."""
    from ...common.httpdoor import HOOK_PATH, MCP_PATH, door_path

    urls = configured_door_urls(tool, project, home)
    paths = [p[1] for p in map(door_path, urls) if p is not None]
    parts = [
        what
        for what, on in (
            ("prompts (nothing is remembered)", any(p.startswith(HOOK_PATH + "/") for p in paths)),
            ("memory tools", MCP_PATH in paths),
        )
        if on
    ]
    return DOOR_DOWN.format(what=" and ".join(parts)) if parts else None


# One entry per agent tool: name -> check(project, home, hook_log).
AGENT_CHECKS: dict[str, Callable[[Path, Path, Path], list[Finding]]] = {
    "claude": check_claude,
}
