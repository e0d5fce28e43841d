"""What ``integrate codex`` and ``integrate gemini`` share: the hook command, our hook groups in
a Claude-Code-shaped ``hooks`` object, JSON files read and written in their own indent, and the
report of one run (what changed, what the person still has to do).

``hook_command(tool, event, scope)`` gives Codex and Gemini the command string that
``claude_settings.hook_command`` makes for every tool (team, issue 13): a file that may be
committed (project scope) names no path of this machine and calls ``maestroctl`` from PATH; a
file of this machine (user scope) names this ``maestroctl`` by its absolute path. Either way the
command exits 0 when maestroctl is missing, so a teammate without it sees nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import claude_settings
from .claude_settings import IntegrationError


def maestroctl_path() -> str:
    from .gitmerge import maestroctl_program

    return maestroctl_program()


def hook_command(tool: str, event: str, scope: str = "project") -> str:
    """The shell command a tool runs for our ``event`` (always exits 0): the project scope's
    portable form, else this maestroctl by its absolute path."""
    return claude_settings.hook_command(event, portable=scope == "project", tool=tool)


def _ours_pattern(tool: str) -> re.Pattern[str]:
    return re.compile(
        r"""(?:^|[\s/'"])(?:maestroctl|maestro_memory\.client\.cli\w*)['"]?"""
        rf"""\s+hook\s+(?:{re.escape(tool)}|claude)\s+"""
        r"""(session-start|user-prompt|session-end|stop)\s*(?:\|\|\s*true\s*)?$"""
    )


def our_event(hook: object, tool: str) -> str | None:
    """Our event when ``hook`` is one of our hooks for ``tool`` (or a hand-wired ``hook
    claude`` one, which ``integrate`` replaces), else None."""
    if isinstance(hook, dict) and hook.get("type") == "command":
        command = hook.get("command")
        if isinstance(command, str):
            found = _ours_pattern(tool).search(command)
            if found:
                return found.group(1)
    return None


def add_hooks(
    settings: dict[str, Any], tool: str, specs: tuple[tuple[str, str, int], ...], scope: str
) -> None:
    """Our hooks into ``settings["hooks"]``, once each (an older one of ours is rewritten in
    place); everything else untouched. ``specs``: (tool event, our event, timeout)."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise IntegrationError("'hooks' is not an object")
    for tool_event, event, timeout in specs:
        wanted = {
            "type": "command",
            "command": hook_command(tool, event, scope),
            "timeout": timeout,
        }
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
                        group["hooks"][i] = {**hook, **wanted}
                    found = True
        if not found:
            groups.append({"hooks": [wanted]})


def remove_hooks(settings: dict[str, Any], tool: str) -> bool:
    """Our hooks out of ``settings`` (groups and events that held only ours go too)."""
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
        raise IntegrationError(f"{path} is not valid JSON ({exc}); fix it first") from exc
    if not isinstance(data, dict):
        raise IntegrationError(f"{path} does not hold a JSON object; nothing was changed")
    return data


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
        from ..core import fsio

        if self.dry_run:
            return
        for change in self.changes:
            if change.action == "unchanged":
                continue
            try:
                if change.after is None:
                    change.path.unlink(missing_ok=True)
                else:
                    change.path.parent.mkdir(parents=True, exist_ok=True)
                    fsio.write_atomic(change.path, change.after.encode("utf-8"))
            except OSError as exc:
                raise IntegrationError(f"cannot write {change.path}: {exc}") from exc

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
