"""What the memory and the agent tools put *into* a prompt, taken back out before detection.

A memory must never learn from its own output. The context block a hook injects comes back in
several ways: Gemini CLI hands its ``BeforeAgent`` hook the prompt with the session-start
context already in front of it (``<hook_context>[Project Memory]…</hook_context>\\n\\n<the
person's words>``), Claude Code wraps hook output in ``<system-reminder>`` or
``<user-prompt-submit-hook>`` tags when it shows up in a later message, and a person may paste
a previous answer that quotes the block or the prompt hook's own ``Remembered: …`` line.
Mined as if the person had said it, a rule in the block would reinforce itself on every run.

``strip_injected(text)`` removes, in this order:

* every tool wrapper around injected context, with its content (``<hook_context>``,
  ``<system-reminder>``, ``<user-prompt-submit-hook>``, ``<session-start-hook>``), tag names
  matched case-insensitively; an opening tag with no closing tag removes to the end of the text
  (a truncated wrapper is still not the person's words);
* every memory block, ``[Project Memory]`` … ``[End Project Memory]`` (``core/context.py``'s
  header and footer), unterminated ones to the end of the text;
* every line the prompt hook itself prints (``Remembered: …``).

What is left is the person's own words, whitespace around them trimmed. A pure function: the
one detection path (``Memory.detect_semantic_signals``) calls it, so every door (hooks, the CLI's
``detect``, MCP, the Python API, the daemon and direct mode) gets it.
"""

from __future__ import annotations

import re

from ..common.hookio import REMEMBERED_PREFIX
from .context import FOOTER, HEADER

__all__ = ["REMEMBERED_PREFIX", "WRAPPER_TAGS", "strip_injected"]

# The tags agent tools wrap injected context in (what they put around a hook's output).
WRAPPER_TAGS = ("hook_context", "system-reminder", "user-prompt-submit-hook", "session-start-hook")

_WRAPPERS = re.compile(
    r"<(?P<tag>" + "|".join(re.escape(t) for t in WRAPPER_TAGS) + r")(?:\s[^>]*)?>"
    r".*?(?:</(?P=tag)\s*>|\Z)",
    re.S | re.I,
)
_BLOCKS = re.compile(re.escape(HEADER) + r".*?(?:" + re.escape(FOOTER) + r"|\Z)", re.S)
_REMEMBERED = re.compile(r"^[ \t]*" + re.escape(REMEMBERED_PREFIX) + r".*(?:\n|\Z)", re.M)


def strip_injected(text: str) -> str:
    """``text`` without injected memory and the wrappers around it (see the module doc)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    out = _WRAPPERS.sub("\n", text)
    out = _BLOCKS.sub("\n", out)
    out = _REMEMBERED.sub("", out)
    return out.strip()
