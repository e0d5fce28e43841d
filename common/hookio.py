"""What an agent's hook answers, built once for both doors: the command hook
(``client/integrations/hooks.py``) prints it, the daemon's HTTP door (``daemon/http_door/``)
returns it as the body of Claude Code's ``"type": "http"`` hooks.

Standard library only (every hook process loads it). The events are ours, the same for every
tool (``session-start``, ``user-prompt``, ``session-end``, ``stop``); ``TOOL_EVENT_NAMES`` says
what each tool calls them in ``hookSpecificOutput.hookEventName``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

HOOK_EVENT_NAMES: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt": "UserPromptSubmit",
    "session-end": "SessionEnd",
    "stop": "Stop",
}
# Each tool's own name for our events (what its hookSpecificOutput.hookEventName must say).
TOOL_EVENT_NAMES: dict[str, dict[str, str]] = {
    "claude": HOOK_EVENT_NAMES,
    "codex": HOOK_EVENT_NAMES,
    "gemini": {**HOOK_EVENT_NAMES, "user-prompt": "BeforeAgent", "stop": "AfterAgent"},
}
REMEMBERED_PREFIX = "Remembered: "  # the prompt hook's line (core/injected.py strips it)
REMEMBERED_LIMIT = 200  # characters of the "Remembered: …" line
PROMPT_MAX_TOKENS = 200  # a prompt's block: small, it comes with every prompt
MARK_RESERVE = 40  # tokens of a session start's budget kept for the out-of-date line


class ContextRefused(Exception):
    """A ``build_context`` reply whose block must not be shown (no count, over the budget)."""


def start_limit(budget: int) -> int:
    """The session start's block: its budget less ``MARK_RESERVE``, unless that is most of it."""
    return budget - MARK_RESERVE if budget > 2 * MARK_RESERVE else budget


def reply_context(result: Mapping[str, object], budget: int) -> str:
    """The context block of a ``build_context`` reply, or "" when there is none.

    Its size is the reply's ``tokens``, which the core counted (``core.text.estimate_tokens``)
    in the daemon or in direct mode alike: checked against ``budget`` without loading the core
    to count again. A block over the budget, or a reply without a count, is refused.
    """
    context = result.get("context")
    if not isinstance(context, str) or not context:
        return ""
    tokens = result.get("tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        raise ContextRefused(f"the context reply has no token count ({tokens!r}); not shown")
    if tokens > budget:
        raise ContextRefused(f"context of {tokens} tokens exceeds the budget {budget}")
    return context


def hook_output(tool: str, event: str, context: str) -> str:
    """The JSON a hook answers to inject ``context`` at ``event``."""
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": TOOL_EVENT_NAMES[tool][event],
                "additionalContext": context,
            }
        },
        ensure_ascii=False,
    )


PROPOSED = "Proposed (not served until you confirm: maestroctl review): "


def remembered(result: Mapping[str, Any]) -> str:
    """The line shown to the person for a ``detect_signals`` reply, so capture is never
    silent: "Remembered: A" (standing instructions), "Proposed (…): B" (kept, not served until
    confirmed), "Not remembered (reason): C" for a statement the save refused (a secret: its
    fact comes redacted), cut at ``REMEMBERED_LIMIT``; "" when there is none of them. A
    statement the door judged a one-off (verdict "refused") is only logged: see ``reasons``."""
    saved: dict[str, list[str]] = {"instruction": [], "proposal": []}
    refused = []
    for s in signals(result):
        fact = " ".join(str(s.get("fact", "")).split())
        verdict = str(s.get("verdict", "instruction"))
        if fact and s.get("action") in ("added", "replaced") and verdict in saved:
            saved[verdict].append(fact)
        elif fact and s.get("action") == "rejected" and verdict != "refused":
            why = str(s.get("reason") or "refused").split(";")[0]
            refused.append(f"Not remembered ({why}): {fact}")
    parts = [REMEMBERED_PREFIX + "; ".join(saved["instruction"])] if saved["instruction"] else []
    parts += [PROPOSED + "; ".join(saved["proposal"])] if saved["proposal"] else []
    return cut(" — ".join(parts + refused))


def reasons(result: Mapping[str, Any]) -> list[str]:
    """Why the door proposed or refused each statement (core/durable.py), for the hook log."""
    return [
        f"{s.get('verdict')}: {s.get('reason')}: {s.get('fact')}"
        for s in signals(result)
        if s.get("reason") and s.get("verdict") != "instruction"
    ]


def signals(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The signal dicts of a ``detect_signals`` reply (anything else in the list skipped)."""
    found = result.get("signals", [])
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def cut(line: str) -> str:
    """``line`` cut at ``REMEMBERED_LIMIT`` characters, with an ellipsis."""
    if len(line) > REMEMBERED_LIMIT:
        line = line[: REMEMBERED_LIMIT - 1].rstrip() + "…"
    return line


def prompt_output(tool: str, line: str, context: str) -> str:
    """A user-prompt hook's answer: the remembered ``line`` as ``systemMessage``, the prompt's
    block as ``additionalContext``; "" when there is neither."""
    out: dict[str, Any] = {}
    if line:
        out["systemMessage"] = line
    if context:
        out["hookSpecificOutput"] = {
            "hookEventName": TOOL_EVENT_NAMES[tool]["user-prompt"],
            "additionalContext": context,
        }
    return json.dumps(out, ensure_ascii=False) if out else ""
