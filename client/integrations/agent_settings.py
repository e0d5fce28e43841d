"""What every tool's ``integrate`` shares (Claude Code, Codex, Gemini): the one hook command,
our hook groups in a Claude-Code-shaped ``hooks`` object, JSON files read and written in their
own indent, and the report of one run (what changed, what the person still has to do).

``hook_command`` is the one place the command string is made, for every tool: a file that may
be committed (project scope) names no path of this machine and calls ``maestroctl`` from PATH
(``command -v maestroctl >/dev/null 2>&1 && maestroctl hook <tool> <event> || true``); a file
of this machine (local/user scope) names this ``maestroctl`` by its absolute path, guarded by
``test -x``. Either way the command exits 0 when maestroctl is missing, so a teammate without it
sees nothing. The tools run it with ``/bin/sh -c`` (dash on Debian), so it is plain POSIX sh.
``door_hook_command`` wraps that local form for a hook the daemon's HTTP door can answer but
the tool runs only as a command (Claude Code's session start, every hook of Codex and Gemini
in their user scope): ``curl`` to the door first, the command with the same input when the
door does not answer. ``door_urls`` names the door's URLs for a file of this machine.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...common.agents import PROGRAM
from ...common.atomic import write_atomic
from ...common.errors import MaestroError

# (tool's event name, our hook event, timeout in the tool's unit)
HookSpec = tuple[str, str, int]
# Our events a tool may send to the daemon's HTTP door instead of running a command (Claude
# Code refuses an http hook at SessionStart, so the session start stays a command).
HTTP_EVENTS = ("user-prompt", "session-end")
# Seconds the door gets to answer a command that asks it first (``door_hook_command``) before
# the Python hook runs instead: a door that answers does so in milliseconds, and the fallback
# (its own deadline about 1 s) still fits the tool's hook timeout (10 s at the session start).
DOOR_CURL_SECONDS = 2
# The door answers a hook inside the daemon: there its calls wait for the daemon's own writer
# (busy, not gone) this long, never fall back to the files (that would write past the
# writer), and give up in time for the curl above to hand the event to the Python hook.
DOOR_DAEMON_TIMEOUT = 0.75 * DOOR_CURL_SECONDS


class IntegrationError(MaestroError):
    """A settings file cannot be edited safely (unreadable, not the expected shape)."""


def maestroctl_path() -> str:
    from .gitmerge import maestroctl_program

    return maestroctl_program()


def door_port() -> int | None:
    """The port of the running daemon's HTTP door (its record), None when none is open: the
    settings that use the door are written only while it answers."""
    from ...common import httpdoor, paths

    try:
        return httpdoor.recorded_port(paths.resolve_safe())
    except MaestroError:  # an unsafe MAESTRO_HOME: no door to name
        return None


def door_urls(tool: str, events: tuple[str, ...], project: Path | None = None) -> dict[str, str]:
    """``add_hooks``' ``urls`` for ``tool``'s ``events`` while the daemon's HTTP door is open
    (``?project=`` when ``project`` is given), none while it is not; only for files of this
    machine, as they name the port."""
    port = door_port()
    if port is None:
        return {}
    from ...common.httpdoor import hook_url

    return {event: hook_url(port, tool, event, project) for event in events}


def door_hooks(
    tool: str, scope: str, specs: tuple[HookSpec, ...], report: Report
) -> dict[str, str]:
    """For a tool that runs command hooks only (Codex, Gemini): in its user scope (a file of
    this machine) while the door is open, every hook asks the door first (``urls``); the
    project file names no port, so its hooks run the command, and the report says so."""
    urls = door_urls(tool, tuple(event for _, event, _ in specs))
    if not urls:
        return {}
    if scope == "project":
        report.notes.append(
            "maestrod's HTTP door is open: with --scope user the hooks ask it first with curl "
            "(no Python process per hook); the project file names no port of this machine"
        )
        return {}
    report.notes.append(
        "the hooks ask maestrod's HTTP door with curl first and run the Python hook only when "
        "that gets no answer"
    )
    return urls


def hook_command(tool: str, event: str, portable: bool = True, program: str | None = None) -> str:
    """The command ``tool`` runs for our ``event``; always exits 0 (see the module doc).

    ``program`` (already shell-quoted) replaces the absolute path in the non-portable form."""
    if portable and program is None:
        return f"command -v {PROGRAM} >/dev/null 2>&1 && {PROGRAM} hook {tool} {event} || true"
    if program is None:
        prog = shlex.quote(maestroctl_path())
        return f"test -x {prog} && {prog} hook {tool} {event} || true"
    return f"{program} hook {tool} {event} || true"


def door_hook_command(tool: str, event: str, url: str, program: str | None = None) -> str:
    """The command for ``event`` that asks the daemon's HTTP door at ``url`` with ``curl``
    (no Python started) and runs the usual hook (``hook_command``'s non-portable form) when
    that gets no answer: curl missing, the door refusing (an HTTP error), too slow
    (``DOOR_CURL_SECONDS``) or down. The hook's JSON comes once on stdin, so it is read into
    ``$in`` and given to whichever runs; the door's answer is printed only when it came whole.
    ``curl -q`` reads no ``~/.curlrc``, ``--noproxy '*'`` keeps the request on loopback, and
    the door's checks are met: ``Content-Type: application/json``, ``Host`` from the URL
    (``127.0.0.1:<port>``), no ``Origin``. Always exits 0. Only for files of this machine:
    it names the port."""
    prog = shlex.quote(maestroctl_path()) if program is None else program
    guard = f"test -x {prog} && " if program is None else ""
    ask = (
        f"curl -q -sf --noproxy '*' --max-time {DOOR_CURL_SECONDS}"
        " -H 'Content-Type: application/json' -H 'Expect:' --data-binary @-"
        f" {shlex.quote(url)} 2>/dev/null"
    )
    return (
        f"""in=$(cat); out=$(printf '%s' "$in" | {ask}) && printf '%s\\n' "$out" || """
        f"""{{ {guard}printf '%s' "$in" | {prog} hook {tool} {event}; }} || true"""
    )


def _ours_pattern(tool: str) -> re.Pattern[str]:
    # Ours: `<…maestroctl> hook <tool> <event>`, bare (older versions), in the fail-open
    # wrapper or as the fallback of the door's curl (`…; } || true`); a hand-wired `hook
    # claude` line in another tool's file is ours to replace too.
    return re.compile(
        r"""(?:^|[\s/'"])(?:maestroctl|maestro_memory\.client\.cli\w*)['"]?"""
        rf"""\s+hook\s+(?:{re.escape(tool)}|claude)\s+"""
        r"""(session-start|user-prompt|session-end|stop)\s*(?:;\s*\}\s*)?"""
        r"""(?:\|\|\s*true\s*)?$"""
    )


def our_event(hook: object, tool: str) -> str | None:
    """Our event when ``hook`` is one of our hooks for ``tool`` (a command, or an ``http``
    hook to the daemon's door), else None."""
    if isinstance(hook, dict) and hook.get("type") == "command":
        command = hook.get("command")
        if isinstance(command, str):
            found = _ours_pattern(tool).search(command)
            if found:
                return found.group(1)
    if isinstance(hook, dict) and hook.get("type") == "http":
        from ...common.httpdoor import HOOK_PATH, door_path

        door = door_path(hook.get("url"))
        parts = door[1].split("/") if door is not None else []
        if len(parts) == 4 and "/" + parts[1] == HOOK_PATH and parts[2] in (tool, "claude"):
            return parts[3]
    return None


def add_hooks(
    settings: dict[str, Any],
    tool: str,
    specs: tuple[HookSpec, ...],
    *,
    portable: bool,
    program: str | None = None,
    urls: dict[str, str] | None = None,
    http_events: tuple[str, ...] = HTTP_EVENTS,
) -> None:
    """Our hooks into ``settings["hooks"]``, once each (an older one of ours -- a moved
    maestroctl, a bare path, a command where an http hook is wanted or the other way round --
    is rewritten in place); everything else untouched. ``urls``: our events answered by the
    daemon's HTTP door: ``type: http`` for ``http_events`` (the events the tool runs http
    hooks for: Claude Code's ``HTTP_EVENTS``, none for Codex and Gemini), a command that asks
    the door first (``door_hook_command``) for the others; events without a URL run the
    command."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise IntegrationError("'hooks' is not an object")
    for tool_event, event, timeout in specs:
        url = (urls or {}).get(event)
        wanted: dict[str, Any] = (
            {"type": "http", "url": url, "timeout": timeout}
            if url is not None and event in http_events
            else {
                "type": "command",
                "command": (
                    hook_command(tool, event, portable, program)
                    if url is None
                    else door_hook_command(tool, event, url, program)
                ),
                "timeout": timeout,
            }
        )
        groups = hooks.setdefault(tool_event, [])
        if not isinstance(groups, list):
            raise IntegrationError(f"'hooks.{tool_event}' is not a list")
        found = False
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for i, hook in enumerate(group["hooks"]):
                if our_event(hook, tool) == event:
                    if not found and hook != wanted:
                        kept = hook if hook.get("type") == wanted["type"] else {}
                        group["hooks"][i] = {**kept, **wanted}
                    found = True
        if not found:
            groups.append({"hooks": [wanted]})


def remove_hooks(settings: dict[str, Any], tool: str) -> bool:
    """Our hooks out of ``settings`` (groups and events that held only ours go too); whether
    there were any."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    removed = False
    for tool_event in list(hooks):
        groups = hooks[tool_event]
        if not isinstance(groups, list):
            continue
        kept = []
        touched = False
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                rest = [h for h in group["hooks"] if our_event(h, tool) is None]
                if len(rest) != len(group["hooks"]):
                    touched = True
                    if not rest:
                        continue
                    group = {**group, "hooks": rest}
            kept.append(group)
        if touched:
            removed = True
            if kept:
                hooks[tool_event] = kept
            else:
                del hooks[tool_event]
    if removed and not hooks:
        del settings["hooks"]
    return removed


# -- files ---------------------------------------------------------------------------------------
def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrationError(f"cannot read {path}: {exc}") from exc


def load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise IntegrationError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from exc
    if not isinstance(data, dict):
        raise IntegrationError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def write_text(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically (the folder is made if missing)."""

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise IntegrationError(f"cannot write {path}: {exc}") from exc


def _indent_of(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dump_json(data: dict[str, Any], like: str | None) -> str:
    indent = _indent_of(like) if like else 2
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return text + "\n" if like is None or like.endswith("\n") else text


@dataclass
class FileChange:
    path: Path
    before: str | None  # None: the file does not exist
    after: str | None  # None: delete it

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.after is None:
            return "delete"
        return "create" if self.before is None else "update"


@dataclass
class Report:
    """One ``integrate`` run: the files, what is still to do, and notes."""

    agent: str
    scope: str
    trust: bool
    remove: bool
    dry_run: bool
    changes: list[FileChange] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def apply(self) -> None:
        if self.dry_run:
            return
        for change in self.changes:
            if change.action == "unchanged":
                continue
            if change.after is not None:
                write_text(change.path, change.after)
                continue
            try:
                change.path.unlink(missing_ok=True)
            except OSError as exc:
                raise IntegrationError(f"cannot delete {change.path}: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "scope": self.scope,
            "trust": self.trust,
            "remove": self.remove,
            "dry_run": self.dry_run,
            "files": [{"path": str(c.path), "action": c.action} for c in self.changes],
            "todo": list(self.todo),
            "notes": list(self.notes),
            "report": self.text(),
        }

    def text(self) -> str:
        lines = []
        verb = {"create": "create", "update": "update", "delete": "delete"}
        for c in self.changes:
            if c.action == "unchanged":
                lines.append(f"{c.path}: already up to date, nothing to change")
            elif self.dry_run:
                lines.append(f"would {verb[c.action]} {c.path}" + (":" if c.after else ""))
                if c.after:
                    lines.append(c.after.rstrip("\n"))
            else:
                lines.append(
                    f"{c.action}d {c.path}" if c.action != "update" else f"updated {c.path}"
                )
        lines += [f"note: {n}" for n in self.notes]
        if self.todo:
            lines.append("")
            lines.append("Still to do (your decision; nothing runs until then):")
            lines += [f"  {t}" for t in self.todo]
        return "\n".join(lines)
