"""``maestroctl``: the command line of Maestro Memory, for people, shell hooks and services.

Every subcommand is one function registered in ``COMMANDS`` (the ``commands/`` package, one
module per group); this module parses the command line, runs the chosen one, and renders its
outcome -- for people, or as exactly one JSON document with ``--json`` (errors included).
Only json loads at start; argparse and the command modules load when a command line is
parsed (``parser.py``), and zmq, platformdirs and the memory core in the command that needs
them. ``hook <tool> <event>``, which agents run at every session start and prompt, is
dispatched before any of that (``_hook_fast_path``), and so is a bare ``mcp``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...common.hidden import show_hidden
from ..errors import DaemonUnavailable, MaestroError
from .exits import EXIT_ERROR, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE, PROG

if TYPE_CHECKING:
    import argparse

    from . import commands


def build_parser() -> argparse.ArgumentParser:
    """The whole argument parser (``parser.py``: argparse and every command module)."""
    from .parser import build_parser as build

    return build()


def _hook_fast_path(args: Sequence[str]) -> int | None:
    """``hook <tool> <event>`` (or ``mcp``) and nothing else: run it without the parser.

    Agents run this at every session start and prompt, so it skips argparse and the command
    modules. Any other spelling (``--help``, an unknown tool or event, an extra option) returns
    None and goes through the parser, which gives the same help, errors and exit codes as
    before; the parsed path runs the same ``run_hook``.
    """
    if args == ["mcp"]:  # an MCP server each agent session starts: the same fast path
        from ..integrations.mcp_server import serve

        return serve()
    if len(args) != 3 or args[0] != "hook":
        return None
    from ..integrations.hooks import EVENTS, TOOLS, run_hook

    if args[1] not in TOOLS or args[2] not in EVENTS:
        return None
    return run_hook(args[1], args[2])


def _wants_json(argv: Sequence[str]) -> bool:
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _emit_json(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc, ensure_ascii=False, default=str) + "\n")


def _emit_text(text: str) -> None:
    if text:
        # A character a terminal would act on (ESC, a bidi override) from a hand-edited file
        # is shown as an escape: what the person reads is what the model is served.
        text = show_hidden(text)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _fail(command: str | None, code: str, message: str, exit_code: int, as_json: bool) -> int:
    if as_json:
        _emit_json(
            {
                "ok": False,
                "command": command,
                "error": {"code": code, "message": message, "exit_code": exit_code},
            }
        )
    else:
        sys.stderr.write(f"{PROG}: {message}\n")
    return exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``maestroctl`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()
    except BrokenPipeError:  # `maestroctl entries | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_ERROR
    return code


def _wants_version(argv: Sequence[str]) -> bool:
    """``--version`` before any subcommand (``maestroctl --version [--json]``)."""
    takes_value = {"-C", "--project", "--timeout"}
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--version":
            return True
        elif arg in takes_value:
            skip = True
        elif not arg.startswith("-"):
            return False
    return False


def _main(args: list[str]) -> int:
    hook = _hook_fast_path(args)
    if hook is not None:
        return hook
    as_json = _wants_json(args)
    if _wants_version(args):
        from ...common.version import package_version

        version = package_version()
        if as_json:
            _emit_json(
                {
                    "ok": True,
                    "command": "version",
                    "via": None,
                    "project": None,
                    "result": {"version": version},
                }
            )
        else:
            _emit_text(f"{PROG} {version}")
        return EXIT_OK
    from . import commands
    from .parser import UsageError

    try:
        ns = build_parser().parse_args(args)
    except UsageError as exc:
        if not as_json:
            sys.stderr.write(f"{exc}\n(run '{PROG} --help' for the commands)\n")
            return EXIT_USAGE
        return _fail(None, "usage", str(exc), EXIT_USAGE, True)
    name: str = ns.command
    ctx = commands.Context.from_namespace(ns)
    try:
        outcome = commands.COMMANDS[name].run(ctx, ns)
    except commands.UsageProblem as exc:
        return _fail(name, "usage", str(exc), EXIT_USAGE, ctx.json)
    except MaestroError as exc:
        _traceback(ctx, exc)
        exit_code = EXIT_UNAVAILABLE if isinstance(exc, DaemonUnavailable) else EXIT_ERROR
        return _fail(name, exc.code, exc.message, exit_code, ctx.json)
    except KeyboardInterrupt:
        return _fail(name, "interrupted", "interrupted", 130, ctx.json)
    except Exception as exc:  # a bug: one line, and the traceback with --debug
        _traceback(ctx, exc)
        return _fail(
            name,
            "internal",
            f"unexpected error: {type(exc).__name__}: {exc} (run with --debug for the traceback)",
            EXIT_ERROR,
            ctx.json,
        )
    finally:
        ctx.close()
    if outcome.printed:  # it spoke another program's protocol on stdout itself
        return outcome.exit_code
    if ctx.json:
        _emit_json(
            {
                "ok": True,
                "command": name,
                "via": outcome.via,
                "project": outcome.project,
                "result": outcome.result,
            }
        )
    else:
        _emit_text(outcome.text)
        if outcome.notice:
            sys.stderr.write(outcome.notice.rstrip("\n") + "\n")
    return outcome.exit_code


def _traceback(ctx: commands.Context, exc: BaseException) -> None:
    if ctx.debug:
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
