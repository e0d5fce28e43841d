"""The name ``maestroctl`` prints in its messages, and its exit statuses.

One home for both: the entry point (``main.py``), the parser (``parser.py``: ``--help``'s
epilog explains the statuses) and the commands (``commands/base.py`` re-exports them) import
them from here, so none of them imports another for a constant. The name itself is
``common/agents.PROGRAM`` (the agent settings write it into the hooks too).
"""

from __future__ import annotations

from ...common.agents import PROGRAM

PROG = PROGRAM  # for the CLI's modules; the one home is common/agents.py

EXIT_OK = 0
EXIT_ERROR = 1  # an error; the message says what failed and how to fix it
EXIT_USAGE = 2  # a bad command line
EXIT_UNAVAILABLE = 3  # the daemon is required but not available
