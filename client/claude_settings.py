"""``maestroctl integrate claude``: add (or remove) Maestro Memory's hooks in Claude Code's
settings (``.claude/settings.json``, or ``~/.claude/settings.json`` with ``--scope user``).

Other tools' hooks and settings are kept byte for byte where possible (the file's own indent
is reused); running it twice adds nothing. The hooks themselves run ``maestroctl hook claude
<event>`` (``hooks.py``, the runtime).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from ..common import layout
from ..common.layout import find_project


class IntegrationError(Exception):
    """The settings file cannot be edited safely (unreadable, not the expected shape)."""


# Claude Code event -> (our hook event, timeout in seconds).
CLAUDE_HOOKS: tuple[tuple[str, str, int], ...] = (
    ("SessionStart", "session-start", 10),
    ("UserPromptSubmit", "user-prompt", 10),
    ("SessionEnd", "session-end", 30),
)
_OURS = re.compile(
    r"""(?:^|[\s/'"])(?:maestroctl|maestro_memory\.client\.cli\w*)['"]?"""
    r"""\s+hook\s+claude\s+(?:session-start|user-prompt|session-end|stop)\s*$"""
)


def hook_command(event: str, program: str | None = None) -> str:
    from .gitmerge import maestroctl_program

    prog = program if program is not None else shlex.quote(maestroctl_program())
    return f"{prog} hook claude {event}"


def is_our_hook(hook: object) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and bool(_OURS.search(hook["command"]))
    )


def settings_path(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    root = project if project is not None else (find_project(os.getcwd()) or Path.cwd())
    return Path(os.path.abspath(root)) / ".claude" / "settings.json"


def _groups(hooks: dict[str, Any], event: str) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise IntegrationError(f"'hooks.{event}' is not a list")
    return groups


def add_hooks(settings: dict[str, Any], program: str | None = None) -> dict[str, Any]:
    """``settings`` with our hooks in it, once each; everything else untouched."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise IntegrationError("'hooks' is not an object")
    for claude_event, event, timeout in CLAUDE_HOOKS:
        wanted = {"type": "command", "command": hook_command(event, program), "timeout": timeout}
        groups = _groups(hooks, claude_event)
        found = False
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for i, hook in enumerate(group["hooks"]):
                if is_our_hook(hook) and hook["command"].split()[-1] == event:
                    if not found and hook != wanted:
                        group["hooks"][i] = {**hook, **wanted}  # a moved maestroctl: update
                    found = True
        if not found:
            groups.append({"hooks": [wanted]})
    return settings


def remove_hooks(settings: dict[str, Any]) -> bool:
    """Take our hooks out of ``settings`` (groups and events that held only ours go too);
    returns whether there were any."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    removed = False
    for claude_event in list(hooks):
        groups = hooks[claude_event]
        if not isinstance(groups, list):
            continue
        kept = []
        removed_any = False
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                mine = [h for h in group["hooks"] if is_our_hook(h)]
                if mine:
                    removed_any = True
                    rest = [h for h in group["hooks"] if not is_our_hook(h)]
                    if not rest:
                        continue
                    group = {**group, "hooks": rest}
            kept.append(group)
        if removed_any:
            removed = True
            if kept:
                hooks[claude_event] = kept
            else:
                del hooks[claude_event]
    if removed and not hooks:
        del settings["hooks"]
    return removed


def _indent_of(text: str) -> str | int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def _dump(settings: dict[str, Any], like: str | None) -> str:
    indent = _indent_of(like) if like else 2
    text = json.dumps(settings, indent=indent, ensure_ascii=False)
    return text + "\n" if like is None or like.endswith("\n") else text


def integrate_claude(
    scope: str = "project",
    project: Path | None = None,
    dry_run: bool = False,
    remove: bool = False,
    program: str | None = None,
) -> str:
    """Add (or remove) our hooks in Claude Code's settings; returns a report for people."""
    path = settings_path(scope, project)
    try:
        original: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        original = None
    except (OSError, UnicodeDecodeError) as exc:
        raise IntegrationError(f"cannot read {path}: {exc}") from exc
    if original is not None and original.strip():
        try:
            settings = json.loads(original)
        except ValueError as exc:
            raise IntegrationError(
                f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
            ) from exc
        if not isinstance(settings, dict):
            raise IntegrationError(f"{path} does not hold a JSON object; nothing was changed")
    else:
        settings = {}
    if remove:
        if not remove_hooks(settings):
            return f"{path}: holds no Maestro Memory hooks, nothing to remove"
    else:
        add_hooks(settings, program)
    delete = remove and not settings
    text = "" if delete else _dump(settings, original)
    if original is not None and text == original:
        return f"{path}: already up to date, nothing to change"
    if dry_run:
        if delete:
            return f"would delete {path} (it holds only Maestro Memory's hooks)"
        return f"would write {path}:\n{text}"
    if delete:
        path.unlink()
        return f"deleted {path} (it held only Maestro Memory's hooks)"
    _write_atomic(path, text)
    if remove:
        return f"removed Maestro Memory's hooks from {path}"
    report = f"added Maestro Memory's hooks to {path}"
    if scope == "project" and not (path.parent.parent / layout.MAESTRO_DIR).is_dir():
        report += (
            f"\nnote: {path.parent.parent} has no .maestro/ yet; the hooks stay silent "
            "until it exists (mkdir it, or save a first memory with maestroctl)"
        )
    return report


def _write_atomic(path: Path, text: str) -> None:
    from ..core import fsio

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fsio.write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise IntegrationError(f"cannot write {path}: {exc}") from exc
