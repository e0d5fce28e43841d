"""``maestroctl`` subcommands that connect the memory to other tools.

* ``hook claude <event>``      -- a Claude Code hook (``client/hooks.py``); always exits 0.
* ``integrate claude``         -- add (or ``--remove``) those hooks in Claude Code's settings.
* ``mcp``                      -- the MCP server over stdio (``client/mcp_server.py``).
* ``merge-driver %O %A %B [%P]`` -- git's merge driver for the memory files (``gitmerge.py``).
* ``git-setup``                -- register that driver in the current clone.
* ``ui``                       -- the memory in a browser (``maestro_memory.ui``).

``add_integration_commands(subparsers)`` registers them on ``maestroctl``'s parser; each sets
``func``, which takes the parsed namespace and returns the exit status. The modules behind the
commands are imported only by the command that runs (a hook must start fast).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MCP_INSTALL_HINT = (
    "maestroctl mcp needs the MCP Python SDK, an optional extra: pip install 'maestro-memory[mcp]'"
)


def _project_arg(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a -C given to maestroctl itself (before the subcommand) is not overwritten.
    parser.add_argument(
        "-C",
        "--project",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="the project (default: nearest ancestor with .maestro/, else the working directory)",
    )


def _project_of(ns: argparse.Namespace) -> Path | None:
    value = getattr(ns, "project", None)
    return None if value is None else Path(value)


def add_integration_commands(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Register ``hook``, ``integrate``, ``mcp``, ``merge-driver`` and ``git-setup``."""
    from .hooks import EVENTS

    p = subparsers.add_parser(
        "hook",
        help="run a Claude Code hook (reads the hook's JSON on stdin)",
        description="Run one Claude Code hook event. Fail-open: whatever goes wrong, it exits "
        "0 and prints nothing; the reason goes to the log directory.",
    )
    p.add_argument("agent", choices=["claude"])
    p.add_argument("event", choices=EVENTS)
    p.set_defaults(func=_run_hook)

    p = subparsers.add_parser(
        "integrate",
        help="add Maestro Memory's hooks to Claude Code's settings",
        description="Add the session-start, user-prompt and session-end hooks to "
        ".claude/settings.json (or ~/.claude/settings.json with --scope user). "
        "Other tools' hooks and settings are kept; running it again adds nothing.",
    )
    p.add_argument("agent", choices=["claude"])
    p.add_argument("--scope", choices=["project", "user"], default="project")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the settings that would be written; write nothing",
    )
    p.add_argument("--remove", action="store_true", help="take out only Maestro's own hooks")
    _project_arg(p)
    p.set_defaults(func=_run_integrate)

    p = subparsers.add_parser(
        "mcp",
        help="serve the project's memory to MCP clients over stdio",
        description=f"An MCP server over stdio. {MCP_INSTALL_HINT}.",
    )
    _project_arg(p)
    p.set_defaults(func=_run_mcp)

    p = subparsers.add_parser(
        "merge-driver",
        help="git merge driver for .maestro/memory/*.md (see git-setup)",
        description="Merge a memory file entry by entry. git runs it as "
        "'maestroctl merge-driver %O %A %B %P'; the result is written to %A. "
        "Exit 0 when clean, 1 when conflict markers were left.",
    )
    p.add_argument("base", metavar="O", help="the common ancestor's version (%%O)")
    p.add_argument("ours", metavar="A", help="our version; receives the result (%%A)")
    p.add_argument("theirs", metavar="B", help="their version (%%B)")
    p.add_argument(
        "path", metavar="P", nargs="?", default=None, help="the file's path in the repository (%%P)"
    )
    p.set_defaults(func=_run_merge_driver)

    p = subparsers.add_parser(
        "git-setup",
        help="register the memory merge driver in this git clone",
        description="Configure merge.maestro-memory in the clone holding the project and add "
        "'.maestro/memory/*.md merge=maestro-memory' to its .gitattributes.",
    )
    _project_arg(p)
    p.add_argument(
        "--driver-program",
        metavar="COMMAND",
        default=None,
        help="the command git runs before 'merge-driver ...' (default: the "
        "absolute path of this maestroctl)",
    )
    p.set_defaults(func=_run_git_setup)

    p = subparsers.add_parser(
        "ui",
        help="look at the memory in a browser (a local page on 127.0.0.1)",
        description="Serve a page showing the project's memory on 127.0.0.1 and print its URL "
        "(with a one-time access token) on the first line; serve until Ctrl-C. Needs "
        "'pip install maestro-memory[ui]'.",
    )
    _project_arg(p)
    from ..ui import add_arguments as _ui_arguments

    _ui_arguments(p)
    p.set_defaults(func=_run_ui)


# -- the commands ------------------------------------------------------------------------------
def _run_hook(ns: argparse.Namespace) -> int:
    from .hooks import run_claude_hook

    return run_claude_hook(ns.event)


def _run_integrate(ns: argparse.Namespace) -> int:
    from .hooks import IntegrationError, integrate_claude

    try:
        report = integrate_claude(
            scope=ns.scope, project=_project_of(ns), dry_run=ns.dry_run, remove=ns.remove
        )
    except IntegrationError as exc:
        sys.stderr.write(f"maestroctl integrate: {exc}\n")
        return 1
    sys.stdout.write(report if report.endswith("\n") else report + "\n")
    return 0


def _run_mcp(ns: argparse.Namespace) -> int:
    try:
        from .mcp_server import serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        sys.stderr.write(MCP_INSTALL_HINT + "\n")
        return 1
    return serve(_project_of(ns))


def _run_ui(ns: argparse.Namespace) -> int:
    from ..ui import run_ui

    return run_ui(ns)


def _run_merge_driver(ns: argparse.Namespace) -> int:
    from .gitmerge import run_merge_driver

    return run_merge_driver(ns.base, ns.ours, ns.theirs, ns.path)


def _run_git_setup(ns: argparse.Namespace) -> int:
    from .gitmerge import GitError, git_setup

    target = _project_of(ns) or Path(os.getcwd())
    try:
        done = git_setup(target, program=ns.driver_program)
    except (GitError, OSError) as exc:
        sys.stderr.write(f"maestroctl git-setup: {exc}\n")
        return 1
    sys.stdout.write("".join(line + "\n" for line in done))
    return 0


# -- standalone entry point (until maestroctl wires these in) ----------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="maestroctl", description="Maestro Memory integrations.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_integration_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    code: int = ns.func(ns)
    return code


if __name__ == "__main__":
    sys.exit(main())
