"""``maestroctl``'s commands, one module per group, all under the contract of ``base.py``.

=============  ==============================================================
lifecycle      start, stop, restart
status         status, paths
doctor         doctor
projects       register, unregister, projects
memory         init, context, save-semantic, save-episodic, detect, reinforce,
               maintain, review, entries, log
privacy        forget, trust
toolimport     import [claude|gemini|codex]
service        service install | uninstall | status
hook           hook claude <event>
integrations   integrate claude, mcp, merge-driver, git-setup
=============  ==============================================================

Importing this package registers them all in ``COMMANDS``, in this order (``GROUPS``: the
order of ``maestroctl --help``); each module loads its heavy dependencies only when its
command runs.
"""

from __future__ import annotations

from . import (
    doctor,
    hook,
    integrations,
    lifecycle,
    memory,
    privacy,
    projects,
    service,
    status,
    toolimport,
)
from .base import (
    COMMANDS,
    DEFAULT_TIMEOUT,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    Command,
    Context,
    Outcome,
    UsageProblem,
)

# The groups in --help order; each registered its commands when imported.
GROUPS = (
    lifecycle,
    status,
    doctor,
    projects,
    memory,
    privacy,
    toolimport,
    service,
    hook,
    integrations,
)
_ordered = {
    name: cmd
    for group in GROUPS
    for name, cmd in COMMANDS.items()
    if cmd.run.__module__ == group.__name__
}
assert _ordered.keys() == COMMANDS.keys(), "a command registered outside the groups"
COMMANDS.clear()
COMMANDS.update(_ordered)

__all__ = [
    "COMMANDS",
    "DEFAULT_TIMEOUT",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "Command",
    "Context",
    "Outcome",
    "UsageProblem",
]
