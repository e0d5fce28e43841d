"""``hook claude <event>``: one Claude Code hook (the runtime is ``client/hooks.py``).

Fail-open: it always exits 0 and prints only the hook's JSON for Claude Code (or nothing).
"""

from __future__ import annotations

import argparse

from .base import Context, Outcome, command


def _hook_args(p: argparse.ArgumentParser) -> None:
    from ..hooks import EVENTS

    p.add_argument("agent", choices=["claude"])
    p.add_argument("event", choices=EVENTS)


@command(
    "hook",
    "run a Claude Code hook (reads the hook's JSON on stdin)",
    _hook_args,
    description="Run one Claude Code hook event. Fail-open: whatever goes wrong, it exits "
    "0 and prints nothing; the reason goes to the log directory.",
)
def cmd_hook(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ..hooks import run_claude_hook

    return Outcome.already_printed(run_claude_hook(ns.event))
