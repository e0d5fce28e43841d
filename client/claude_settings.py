"""``maestroctl integrate claude``: add (or remove) Maestro Memory's hooks in Claude Code's
settings: ``.claude/settings.json`` (``--scope project``, committed, shared by the team),
``.claude/settings.local.json`` (``--scope local``, this clone only) or
``~/.claude/settings.json`` (``--scope user``, every project of this account).

Other tools' hooks and settings are kept byte for byte where possible (the file's own indent
is reused); running it twice adds nothing. The hooks themselves run ``maestroctl hook claude
<event>`` (``hooks.py``, the runtime), wrapped so that they always exit 0 (Claude Code runs a
hook's command with ``/bin/sh -c`` whatever ``$SHELL`` is -- seen with 2.1.332, where /bin/sh
was dash -- so the wrapper is plain POSIX ``sh``):

* **project** scope names no path of this machine: ``command -v maestroctl >/dev/null 2>&1 &&
  maestroctl hook claude <event> || true``. A teammate without maestroctl on PATH gets exit 0
  and no output; one with it gets the hook.
* **local** and **user** scope live on this machine only, so they name this maestroctl by its
  absolute path (it works even where PATH lacks the virtualenv, e.g. an editor started from a
  desktop menu): ``test -x /abs/maestroctl && /abs/maestroctl hook claude <event> || true``.
  A venv deleted later makes the hook silent, and ``maestroctl doctor`` says so.

Re-running ``integrate`` rewrites an older Maestro hook (a bare absolute path, another
maestroctl) in place instead of adding a second one.
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
SCOPES = ("project", "local", "user")
# Ours: `<…maestroctl> hook claude <event>`, bare (older versions) or in the fail-open wrapper.
_OURS = re.compile(
    r"""(?:^|[\s/'"])(?:maestroctl|maestro_memory\.client\.cli\w*)['"]?"""
    r"""\s+hook\s+claude\s+(session-start|user-prompt|session-end|stop)"""
    r"""\s*(?:\|\|\s*true\s*)?$"""
)
PROGRAM = "maestroctl"


def hook_command(event: str, program: str | None = None, portable: bool = True) -> str:
    """The command Claude Code runs for ``event``; always exits 0 (see the module doc).

    ``program`` (already shell-quoted) replaces the absolute path in the non-portable form."""
    if portable and program is None:
        return f"command -v {PROGRAM} >/dev/null 2>&1 && {PROGRAM} hook claude {event} || true"
    if program is None:
        from .gitmerge import maestroctl_program

        prog = shlex.quote(maestroctl_program())
        return f"test -x {prog} && {prog} hook claude {event} || true"
    return f"{program} hook claude {event} || true"


def hook_event(hook: object) -> str | None:
    """The event of one of our hooks (``None`` when ``hook`` is not ours)."""
    if (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
    ):
        found = _OURS.search(hook["command"])
        if found:
            return found.group(1)
    return None


def is_our_hook(hook: object) -> bool:
    return hook_event(hook) is not None


def settings_path(scope: str, project: Path | None = None) -> Path:
    if scope == "user":
        return Path.home() / ".claude" / "settings.json"
    if scope not in SCOPES:
        raise IntegrationError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    root = project if project is not None else (find_project(os.getcwd()) or Path.cwd())
    name = "settings.local.json" if scope == "local" else "settings.json"
    return Path(os.path.abspath(root)) / ".claude" / name


def _groups(hooks: dict[str, Any], event: str) -> list[Any]:
    groups = hooks.setdefault(event, [])
    if not isinstance(groups, list):
        raise IntegrationError(f"'hooks.{event}' is not a list")
    return groups


def add_hooks(
    settings: dict[str, Any], program: str | None = None, portable: bool = True
) -> dict[str, Any]:
    """``settings`` with our hooks in it, once each; everything else untouched."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise IntegrationError("'hooks' is not an object")
    for claude_event, event, timeout in CLAUDE_HOOKS:
        wanted = {
            "type": "command",
            "command": hook_command(event, program, portable),
            "timeout": timeout,
        }
        groups = _groups(hooks, claude_event)
        found = False
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for i, hook in enumerate(group["hooks"]):
                if hook_event(hook) == event:
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
        add_hooks(settings, program, portable=scope == "project")
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
    if scope == "local" and _git_tracks(path):
        report += (
            f"\nnote: git does not ignore {path.name}; it names this machine's maestroctl, so "
            "add '.claude/settings.local.json' to .gitignore"
        )
    if scope == "project" and not (path.parent.parent / layout.MAESTRO_DIR).is_dir():
        report += (
            f"\nnote: {path.parent.parent} has no .maestro/ yet; the hooks stay silent "
            "until it exists (mkdir it, or save a first memory with maestroctl)"
        )
    return report


def _git_tracks(path: Path) -> bool:
    """Whether ``path`` is in a git work tree and not ignored there (False when unsure)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "check-ignore", "-q", str(path)],
            cwd=path.parent,
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 1  # 0: ignored; 128: not a work tree


def _write_atomic(path: Path, text: str) -> None:
    from ..core import fsio

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fsio.write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise IntegrationError(f"cannot write {path}: {exc}") from exc
