"""Proposals: what the prompt door kept without being sure it is meant to last (issue 35).

A proposal is a semantic entry whose ``<!-- mm:… -->`` line carries ``prop=<day>`` (the day
``core/durable.py`` judged it likely but not certain). Its state is ``proposed``: it is kept in
``semantic.md``, shown by ``review``, ``entries`` and the viewer, and **never served** in a
context block. It becomes an ordinary entry (and, when the person stated it at 0.9 or more, their
standing instruction) once it is confirmed:

* by the person: ``maestroctl review --apply ID confirm`` (or the viewer's review);
* by saying it again on a later day (``core/saving.py``);
* by the agent's model through MCP: ``memory_reinforce`` with ``confirmed: true``.

Functions over a ``MemoryState``'s blocks; each confirmation is logged.
"""

from __future__ import annotations

from typing import Protocol

from .markdown import EntryBlock, FileKind

PROPOSED_KEY = "prop"


class MemoryState(Protocol):
    """What these functions use of ``core.state.MemoryState`` (which imports this module)."""

    today: str

    def touch(self, kind: FileKind) -> None: ...
    def reached(self, kind: FileKind, *blocks: EntryBlock) -> None: ...
    def log(self, kind: FileKind, verb: str, text: str, why: str) -> str: ...


def propose(memory: MemoryState, block: EntryBlock) -> None:
    """Mark ``block`` (just saved by the prompt door) a proposal made today."""
    block.meta[PROPOSED_KEY] = memory.today
    block.dirty = True
    memory.reached("semantic", block)
    memory.touch("semantic")


def proposed_on(block: EntryBlock) -> str | None:
    """The day ``block`` was proposed, None when it is not a proposal."""
    return block.meta.get(PROPOSED_KEY) or None


def confirm(memory: MemoryState, block: EntryBlock, by: str) -> str | None:
    """Make a proposal an ordinary entry; returns the log line, None when it was no proposal."""
    if proposed_on(block) is None:
        return None
    del block.meta[PROPOSED_KEY]
    block.dirty = True
    memory.reached("semantic", block)
    memory.touch("semantic")
    return memory.log("semantic", "Confirmed", block.text, f"proposal confirmed {by}")
