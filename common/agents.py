"""The agent tools Maestro Memory works with, spelled once.

``AGENTS`` is in the order memory imports and context filters list them (``import``,
``context --for``, their messages). Hooks and ``integrate`` offer the same names sorted
(``sorted(AGENTS)``: their ``--help`` order). Standard library only: the agent hook imports it.

``PROGRAM`` is the command the agents' hooks run and the name ``maestroctl`` prints: the CLI
(``client/cli/exits.PROG``) and the agent settings (``client/integrations/agent_settings``) both
need it, and the integrations may not import the CLI, so it lives here, beside the names of
the tools that run it.
"""

from __future__ import annotations

AGENTS: tuple[str, ...] = ("claude", "gemini", "codex")
PROGRAM = "maestroctl"
