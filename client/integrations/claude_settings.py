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

**Hooks without a process.** In the files of this machine (local and user scope), while the
daemon's HTTP door is open (``common/httpdoor.py``), UserPromptSubmit and SessionEnd are
``"type": "http"`` hooks to it (``http://127.0.0.1:<port>/hook/claude/<event>``; local scope
adds ``?project=<this project>``): Claude Code POSTs the event's JSON and the daemon answers
what the command would print, with no process started. SessionStart stays a command (Claude
Code runs no http hook there), but one that starts no Python while the door answers
(``agent_settings.door_hook_command``): it reads the event's JSON into ``$in``, POSTs it to
``/hook/claude/session-start`` with ``curl`` (``Content-Type: application/json``, Host
``127.0.0.1:<port>``, at most 2 s) and prints the door's answer; when curl is missing or the
door refuses, is too slow or is down, it gives ``$in`` to the Python hook, which is also what
tells a session that the daemon does not answer (``hooks._door_notice``). Measured with
``tests.e2e.measure_walltime`` (2026-12-07): the Python session start was ~50-70 ms of a
``claude -p`` session, the curl one ~15 ms. The project file stays commands: it names no port
of this machine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...common import layout
from ...common.agents import PROGRAM
from ...common.hookio import TOOL_EVENT_NAMES
from ...common.layout import find_project
from . import agent_settings as common
from .agent_settings import IntegrationError

__all__ = ["CLAUDE_HOOKS", "PROGRAM", "IntegrationError", "integrate_claude", "settings_path"]


# Claude Code event -> (our hook event, timeout in seconds); the names are hookio's.
CLAUDE_HOOKS: tuple[common.HookSpec, ...] = tuple(
    (TOOL_EVENT_NAMES["claude"][event], event, timeout)
    for event, timeout in (("session-start", 10), ("user-prompt", 10), ("session-end", 30))
)
SCOPES = ("project", "local", "user")
TOOL = "claude"


def hook_command(event: str, program: str | None = None, portable: bool = True) -> str:
    """The command Claude Code runs for ``event``; always exits 0 (``agent_settings``)."""
    return common.hook_command(TOOL, event, portable, program)


def hook_event(hook: object) -> str | None:
    """The event of one of our hooks (``None`` when ``hook`` is not ours)."""
    return common.our_event(hook, TOOL)


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


def add_hooks(
    settings: dict[str, Any],
    program: str | None = None,
    portable: bool = True,
    urls: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``settings`` with our hooks in it, once each; everything else untouched (``urls``: the
    events the daemon's HTTP door answers)."""
    common.add_hooks(settings, TOOL, CLAUDE_HOOKS, portable=portable, program=program, urls=urls)
    return settings


def door_urls(scope: str, project: Path) -> dict[str, str]:
    """The door's URLs of our hooks for ``scope`` (``add_hooks``' ``urls``): none in the
    project file (it names nothing of this machine) or while no door is open."""
    if scope == "project":
        return {}
    # The session start too: a command that asks the door with curl (Claude Code runs no http
    # hook there), the Python hook when the door does not answer.
    events = (*common.HTTP_EVENTS, "session-start")
    return common.door_urls(TOOL, events, project if scope == "local" else None)


def remove_hooks(settings: dict[str, Any]) -> bool:
    """Take our hooks out of ``settings``; returns whether there were any."""
    return common.remove_hooks(settings, TOOL)


def integrate_claude(
    scope: str = "project",
    project: Path | None = None,
    dry_run: bool = False,
    remove: bool = False,
    program: str | None = None,
) -> str:
    """Add (or remove) our hooks in Claude Code's settings; returns a report for people."""
    path = settings_path(scope, project)
    original = common.read_text(path)
    settings = common.load_json(path, original)
    urls: dict[str, str] = {}
    if remove:
        if not remove_hooks(settings):
            return f"{path}: holds no Maestro Memory hooks, nothing to remove"
    else:
        urls = door_urls(scope, path.parent.parent)
        add_hooks(settings, program, portable=scope == "project", urls=urls)
    delete = remove and not settings
    text = "" if delete else common.dump_json(settings, original)
    if original is not None and text == original:
        return f"{path}: already up to date, nothing to change"
    if dry_run:
        if delete:
            return f"would delete {path} (it holds only Maestro Memory's hooks)"
        return f"would write {path}:\n{text}"
    if delete:
        path.unlink()
        return f"deleted {path} (it held only Maestro Memory's hooks)"
    common.write_text(path, text)
    if remove:
        return f"removed Maestro Memory's hooks from {path}"
    report = f"added Maestro Memory's hooks to {path}"
    if urls:
        report += (
            "\nUserPromptSubmit and SessionEnd are answered by maestrod over HTTP (no process); "
            "SessionStart stays a command (Claude Code runs no http hook there) that asks it "
            "with curl, and runs the Python hook only when that gets no answer"
        )
    elif scope != "project":
        report += (
            "\nnote: no maestrod HTTP door is open, so every hook runs a command; start the "
            "daemon and run this again for hooks without a process"
        )
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
