"""The agent tools Maestro Memory works with, spelled once.

``AGENTS`` is in the order memory imports and context filters list them (``import``,
``context --for``, their messages). Hooks and ``integrate`` offer the same names sorted
(``sorted(AGENTS)``: their ``--help`` order). Standard library only: the agent hook imports it.
"""

from __future__ import annotations

AGENTS: tuple[str, ...] = ("claude", "gemini", "codex")
