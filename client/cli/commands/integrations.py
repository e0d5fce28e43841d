"""Connecting the memory to other tools: ``integrate claude``, ``mcp``, ``merge-driver``,
``git-setup``, ``ui``. The modules behind them load only when the command runs."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ....common import layout
from ....common.agents import AGENTS
from ...errors import MaestroError
from .base import Context, Outcome, command


def _project_of(ctx: Context) -> Path | None:
    """The -C project as given (these commands resolve it themselves)."""
    return None if ctx.project_arg is None else Path(ctx.project_arg)


def _integrate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", choices=sorted(AGENTS))
    p.add_argument(
        "--scope",
        choices=["project", "local", "user"],
        default="project",
        help="project: the project's settings file, committed, no path of this machine in it "
        "(default); local (Claude Code only): .claude/settings.local.json, this clone only; "
        "user: the tool's settings in your home, every project",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the settings that would be written; write nothing",
    )
    p.add_argument("--remove", action="store_true", help="take out only Maestro's own hooks")
    p.add_argument(
        "--no-mcp",
        action="store_true",
        help="codex, gemini: hooks only, no MCP server (each session then starts no server)",
    )
    p.add_argument(
        "--trust",
        action="store_true",
        help="codex, gemini: also write the trust entries the tool needs before it runs the "
        "hooks (your decision; without it the report says what is missing)",
    )


@command(
    "integrate",
    "add Maestro Memory's hooks to Claude Code's, Codex's or Gemini CLI's settings",
    _integrate_args,
    description="Add the session-start, user-prompt and session-end hooks to "
    ".claude/settings.json (--scope local: .claude/settings.local.json; --scope user: "
    "~/.claude/settings.json). The project-scope hooks find maestroctl on PATH and do "
    "nothing, silently, where it is not installed. Other tools' hooks and settings are "
    "kept; running it again adds nothing (and updates an older Maestro hook in place). "
    "'integrate codex' and 'integrate gemini' also register the MCP server; with --trust "
    "they write the trust entries the tool needs (else they print what is missing).",
)
def cmd_integrate(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.agent in ("codex", "gemini"):
        return _integrate_other(ctx, ns)
    from ...integrations.claude_settings import IntegrationError, integrate_claude

    try:
        report = integrate_claude(
            scope=ns.scope, project=_project_of(ctx), dry_run=ns.dry_run, remove=ns.remove
        )
    except IntegrationError as exc:
        raise MaestroError(f"integrate: {exc}") from exc
    from ...integrations.claude_settings import settings_path

    path = settings_path(ns.scope, _project_of(ctx))
    result: dict[str, Any] = {
        "agent": ns.agent,
        "scope": ns.scope,
        "settings": str(path),
        "report": report,
    }
    return _with_registration(ctx, ns, result, report)


def _with_registration(
    ctx: Context, ns: argparse.Namespace, result: dict[str, Any], report: str
) -> Outcome:
    """The integrate outcome, and the project registered with a running daemon (the fast
    path: its hooks are then served by the daemon, not the files). Starts nothing: with no
    daemon running it says so, and the first session start with one running registers the
    project (``hooks._registers``). Only a project that holds ``.maestro/``."""
    if ns.dry_run or ns.remove:
        return Outcome(result, report, project=ctx.project)
    project = Path(ctx.project)
    if not (project / layout.MAESTRO_DIR).is_dir():
        line = f"not registered with maestrod: {project} has no .maestro/ yet"
        registered: bool | None = None
    else:
        client = ctx.client()
        if not client.daemon_running():
            line = (
                "maestrod is not running (nothing started): the first session start with it "
                "running registers the project, or run 'maestroctl register'"
            )
            registered = None
        else:
            try:
                added = client.register(project).get("added") is not False
            except MaestroError as exc:  # the settings stand; the session start tries again
                registered, line = False, f"not registered with maestrod: {exc}"
            else:
                registered = True
                line = (
                    f"registered {project} with maestrod: its sessions are served by the daemon"
                    if added
                    else f"{project} was already registered with maestrod"
                )
    result["registered"] = registered
    return Outcome(result, f"{report}\n{line}", project=ctx.project)


@command(
    "mcp",
    "serve the project's memory to MCP clients over stdio",
    description="An MCP server over stdio (what an agent tool starts for each session): "
    "its tool calls are answered by the daemon when it runs, from the files otherwise.",
)
def cmd_mcp(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ...integrations.mcp_server import serve

    return Outcome.already_printed(serve(_project_of(ctx)))


def _ui_args(p: argparse.ArgumentParser) -> None:
    from ....ui import add_arguments

    add_arguments(p)


@command(
    "ui",
    "look at the memory in a browser (a local page on 127.0.0.1)",
    _ui_args,
    description="Serve a page showing the project's memory on 127.0.0.1 and print its URL "
    "(with a one-time access token) on the first line; serve until Ctrl-C. Needs "
    "'pip install maestro-agent-memory[ui]'.",
)
def cmd_ui(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ....ui import run_ui

    return Outcome.already_printed(run_ui(ns))


def _merge_driver_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", metavar="O", help="the common ancestor's version (%%O)")
    p.add_argument("ours", metavar="A", help="our version; receives the result (%%A)")
    p.add_argument("theirs", metavar="B", help="their version (%%B)")
    p.add_argument(
        "path", metavar="P", nargs="?", default=None, help="the file's path in the repository (%%P)"
    )


@command(
    "merge-driver",
    "git merge driver for .maestro/memory/*.md (see git-setup)",
    _merge_driver_args,
    description="Merge a memory file entry by entry. git runs it as "
    "'maestroctl merge-driver %O %A %B %P'; the result is written to %A. "
    "Exit 0 when clean, 1 when conflict markers were left, 2 when it could not merge at all.",
)
def cmd_merge_driver(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ...integrations.gitmerge import DRIVER_FAILED, run_merge_driver

    if not ctx.json:  # what git runs: the result in %A, notes on stderr
        return Outcome.already_printed(run_merge_driver(ns.base, ns.ours, ns.theirs, ns.path))
    import contextlib
    import io

    notes = io.StringIO()
    with contextlib.redirect_stderr(notes):
        code = run_merge_driver(ns.base, ns.ours, ns.theirs, ns.path)
    lines = notes.getvalue().splitlines()
    if code == DRIVER_FAILED:
        raise MaestroError("; ".join(lines) or "merge-driver failed")
    result = {"clean": code == 0, "result_file": ns.ours, "notes": lines}
    return Outcome(result, "\n".join(lines), exit_code=code)


def _git_setup_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--driver-program",
        metavar="COMMAND",
        default=None,
        help="the command git runs before 'merge-driver ...' (default: the "
        "absolute path of this maestroctl)",
    )


@command(
    "git-setup",
    "register the memory merge driver in this git clone",
    _git_setup_args,
    description="Configure merge.maestro-memory in the clone holding the project and add "
    "'.maestro/memory/*.md merge=maestro-memory' to its .gitattributes.",
)
def cmd_git_setup(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ...integrations.gitmerge import GitError, git_setup

    target = _project_of(ctx) or Path(os.getcwd())
    try:
        done = git_setup(target, program=ns.driver_program)
    except (GitError, OSError) as exc:
        raise MaestroError(f"git-setup: {exc}") from exc
    return Outcome({"done": done}, "".join(line + "\n" for line in done).rstrip("\n"))


def _integrate_other(ctx: Context, ns: argparse.Namespace) -> Outcome:
    """``integrate codex`` / ``integrate gemini`` (``codex_settings``, ``gemini_settings``)."""
    from ...integrations.claude_settings import IntegrationError

    if ns.agent == "codex":
        from ...integrations.codex_settings import integrate_codex as integrate
    else:
        from ...integrations.gemini_settings import integrate_gemini as integrate
    try:
        report = integrate(
            Path(ctx.project),
            scope=ns.scope,
            dry_run=ns.dry_run,
            remove=ns.remove,
            trust=ns.trust,
            mcp=not ns.no_mcp,
        )
    except IntegrationError as exc:
        raise MaestroError(f"integrate {ns.agent}: {exc}") from exc
    return _with_registration(ctx, ns, dict(report.to_dict()), report.text())
