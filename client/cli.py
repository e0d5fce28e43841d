"""``maestroctl``: the command line of Maestro Memory, for people, shell hooks and services.

Every subcommand is one function registered in ``COMMANDS`` (the ``commands/`` package, one
module per group); this module parses the command line, runs the chosen one, and renders its
outcome -- for people, or as exactly one JSON document with ``--json`` (errors included).
Only argparse and json load at start; zmq, platformdirs and the memory core are imported
by the command that needs them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from . import commands
from .errors import DaemonUnavailable, MaestroError

EXIT_OK = commands.EXIT_OK
EXIT_ERROR = commands.EXIT_ERROR
EXIT_USAGE = commands.EXIT_USAGE
EXIT_UNAVAILABLE = commands.EXIT_UNAVAILABLE
PROG = "maestroctl"

EPILOG = """\
project:
  Memory commands act on the project given with -C, else on the nearest directory at or
  above the working directory that holds .maestro/ (as git finds .git), else on the
  working directory itself.

daemon and direct mode:
  When maestrod runs, commands go through it. When it does not, memory commands read and
  write the files directly, with the same locking and the same results; --require-daemon
  (or MAESTRO_REQUIRE_DAEMON=1) makes them fail instead. MAESTRO_HOME=<dir> roots the
  daemon's socket, state, config and logs in <dir>.

output:
  For people by default. With --json, exactly one JSON document on stdout, errors included:
    {"ok": true, "command": ..., "via": "daemon"|"direct"|null, "project": ..., "result": {...}}
    {"ok": false, "command": ..., "error": {"code": ..., "message": ..., "exit_code": N}}
  Without --json, an error is one line on stderr (--debug adds the traceback).

exit status:
  0  success
  1  error (the message says what failed and how to fix it)
  2  usage error (bad command line)
  3  the daemon is required but not available ('status' also exits 3 when it is not running)
"""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """Usage errors become an exception, so --json can still print one JSON document."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.prog}: {message}")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
    return value


def _global_options() -> _Parser:
    # Defaults are SUPPRESS so that the same options work before and after the subcommand
    # (`maestroctl --json context` and `maestroctl context --json`).
    common = _Parser(add_help=False)
    group = common.add_argument_group("global options")
    s = argparse.SUPPRESS
    group.add_argument(
        "-C",
        "--project",
        metavar="PATH",
        default=s,
        help="the project to act on (default: nearest ancestor with .maestro/)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=s,
        help="print exactly one JSON document on stdout, errors included",
    )
    group.add_argument("--debug", action="store_true", default=s, help="show tracebacks for errors")
    group.add_argument(
        "--require-daemon",
        action="store_true",
        default=s,
        help="fail (exit 3) instead of using the files directly when maestrod is not running",
    )
    group.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="SECONDS",
        default=s,
        help=f"how long to wait for each daemon reply (default: {commands.DEFAULT_TIMEOUT:g})",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _global_options()
    parser = _Parser(
        prog=PROG,
        parents=[common],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Control maestrod and read or write a project's Maestro Memory.",
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print maestroctl's version (the installed package's) and exit",
    )
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    for cmd in commands.COMMANDS.values():
        p = sub.add_parser(
            cmd.name, help=cmd.summary, description=cmd.description, parents=[common]
        )
        cmd.arguments(p)
    return parser


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
    as_json = _wants_json(args)
    if _wants_version(args):
        from ..common.version import package_version

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
    try:
        ns = build_parser().parse_args(args)
    except _UsageError as exc:
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


if __name__ == "__main__":
    sys.exit(main())
