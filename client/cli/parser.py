"""The argument parser of ``maestroctl``: the global options and one subparser per command.

Loaded by ``main.py`` for every command line except the hot hook one (``hook <tool> <event>``
with nothing else), which it dispatches before building this tree: argparse and the command
modules (``commands/``) are not needed there. Everything else -- ``--help``, usage errors and
their exit code 2 -- comes from here, for the hook command too.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from . import commands
from .exits import PROG

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


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """Usage errors become an exception, so --json can still print one JSON document."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


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
