"""``hook <tool> <event>``: one agent hook (the runtime is ``client/integrations/hooks.py``).

``<tool>`` is ``claude``, ``codex`` or ``gemini``; ``<event>`` is ours, the same for every
tool (the tool's settings map its own events onto it). Fail-open: it always exits 0 and prints
only the hook's JSON for the tool (or nothing).
"""

from __future__ import annotations

import argparse

from .base import Context, Outcome, command


def _hook_args(p: argparse.ArgumentParser) -> None:
    from ...integrations.hooks import EVENTS, TOOLS

    p.add_argument("agent", choices=TOOLS)
    p.add_argument("event", choices=EVENTS)


@command(
    "hook",
    "run an agent tool's hook (claude, codex, gemini; reads the hook's JSON on stdin)",
    _hook_args,
    description="Run one hook event for Claude Code, Codex CLI or Gemini CLI. Fail-open: "
    "whatever goes wrong, it exits 0 and prints nothing; the reason goes to the log directory.",
)
def cmd_hook(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ...integrations.hooks import run_hook

    return Outcome.already_printed(run_hook(ns.agent, ns.event))
