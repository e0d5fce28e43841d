"""``import [claude|gemini|codex] [--dry-run]``: take in what the agent tools remember.

Reads each tool's own memory folder for the project (never writes there) and imports its facts
as semantic entries through the op ``import_tool_memories`` (the rule: ``core/toolmem.py``;
the folders: ``common/toolsources.py``). Run it again and nothing doubles.
"""

from __future__ import annotations

import argparse
from typing import Any

from ....common.agents import AGENTS
from .base import Context, Outcome, UsageProblem, command, memory_outcome

TOOLS = AGENTS


def _import_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "tools",
        nargs="*",
        metavar="TOOL",
        help=f"only these tools ({', '.join(TOOLS)}; default: all)",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")


def _rows(title: str, items: list[Any], key: str) -> list[str]:
    if not items:
        return []
    lines = [f"{title}:"]
    lines += [f"  {i.get('src')}: {i.get(key)}" for i in items if isinstance(i, dict)]
    return lines


@command(
    "import",
    "import the facts the agent tools saved in their own memories (read only there)",
    _import_args,
    description="Import the facts Claude Code, Gemini CLI and Codex saved in their own memory "
    "folders for this project as semantic entries (screened, weighed, with their source). "
    "Idempotent: an unchanged file changes nothing, an edited one updates its entry, a deleted "
    "one flags it for review. The tools' folders are only read.",
)
def cmd_import(ctx: Context, ns: argparse.Namespace) -> Outcome:
    unknown = [t for t in ns.tools if t not in TOOLS]
    if unknown:
        raise UsageProblem(f"unknown tool {unknown[0]!r}; expected one of: {', '.join(TOOLS)}")
    tools = list(dict.fromkeys(ns.tools)) or None
    r = ctx.client().import_tool_memories(tools, dry_run=ns.dry_run)
    lines = []
    for loc in r.get("locations") or []:
        state = "off" if not loc.get("enabled") else "found" if loc.get("exists") else "none"
        lines.append(f"{loc.get('tool')}: {loc.get('folder') or '-'} ({state})")
    prefix = "would be " if ns.dry_run else ""
    lines += _rows(f"{prefix}imported", r.get("imported") or [], "action")
    lines += _rows(f"{prefix}updated", r.get("updated") or [], "entry_id")
    lines += _rows("not imported", r.get("blocked") or [], "reason")
    lines += _rows(f"{prefix}flagged (file deleted)", r.get("flagged") or [], "entry_id")
    lines.append(f"unchanged: {r.get('unchanged', 0)}")
    return memory_outcome(ctx, r, "\n".join(lines))
