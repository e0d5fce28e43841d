"""Memory maintenance: the entries flagged for review, each with its proposed disposal and
reason, and the decisions applied (remove, archive, reinforce), each logged.

Functions over a ``MemoryState`` (public calls only).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import rules, toolmem
from .markdown import EntryBlock, FileKind
from .model import (
    FLAG_THRESHOLD,
    REINFORCED_BY_REVIEW,
    InputError,
    MaintenanceReport,
    Proposal,
    RejectedError,
    Sector,
)
from .state import SECTORS, MemoryState

DECISIONS: tuple[str, ...] = ("remove", "archive", "reinforce")


def _proposals(memory: MemoryState) -> list[tuple[Sector, EntryBlock, Proposal]]:
    out = []
    for kind in SECTORS:
        for b in memory.docs[kind].entries():
            entry = memory.entry(b, kind)
            if entry.state == "active":
                continue
            out.append(
                (
                    kind,
                    b,
                    Proposal(
                        entry=entry,
                        action=rules.disposal(b.original),
                        reason=_flag_reason(memory, kind, b),
                    ),
                )
            )
    return out


def _flag_reason(memory: MemoryState, kind: FileKind, b: EntryBlock) -> str:
    if b.confidence == 0.0:
        return "explicitly contradicted (confidence 0.00)"
    if b.meta.get("gone") and b.confidence >= FLAG_THRESHOLD:
        src = toolmem.decode_src(b.meta.get("src", "")) or "its source file"
        return f"imported from {src}, which the tool deleted on {b.meta['gone']}"
    if kind == "episodic":
        return f"episodic entry, salience {b.salience or 0.0:.3f}, confidence {b.confidence:.3f}"
    u = b.meta.get("u", "0")
    return f"confidence decayed to {b.confidence:.2f}, unreinforced for {u} sessions"


def memory_maintenance(
    memory: MemoryState, decisions: Mapping[str, str] | None = None, dry_run: bool = False
) -> MaintenanceReport:
    if not isinstance(dry_run, bool):
        raise InputError(f"dry_run must be true or false, got {dry_run!r}")
    proposals = _proposals(memory)
    by_id = {b.id: (kind, b, p) for kind, b, p in proposals}
    chosen: list[tuple[Sector, EntryBlock, Proposal]]
    if decisions is None:
        chosen = proposals
    else:
        if not isinstance(decisions, Mapping):
            raise InputError("decisions must map entry ids to remove|archive|reinforce")
        chosen = []
        for eid, action in decisions.items():
            if action not in DECISIONS:
                raise InputError(
                    f"decision for {eid!r} must be one of {', '.join(DECISIONS)}, got {action!r}"
                )
            if eid not in by_id:
                memory.find(eid)  # raises NotFoundError for an unknown id
                raise RejectedError(f"entry {eid!r} is not flagged for maintenance")
            kind, b, p = by_id[eid]
            chosen.append(
                (
                    kind,
                    b,
                    Proposal(
                        entry=p.entry,
                        action=action,  # type: ignore[arg-type]
                        reason=p.reason,
                    ),
                )
            )
    report = MaintenanceReport(
        dry_run=dry_run, proposals=[p for _, _, p in proposals], applied=[], log_lines=[]
    )
    if dry_run:
        return report
    for kind, b, p in chosen:
        if p.action == "reinforce":
            before = b.confidence
            b.confidence = REINFORCED_BY_REVIEW
            if kind == "episodic" and (b.salience or 0.0) < 0.1:
                b.salience = REINFORCED_BY_REVIEW
            b.meta["r"] = "1"
            b.meta["u"] = "0"
            b.meta.pop("gone", None)  # kept by review: no longer waiting on its file
            b.dirty = True
            memory.reached(kind, b)
            line = memory.log(
                kind,
                "Reinforced",
                b.text,
                f"user confirmed, confidence {before:.2f} → {b.confidence:.2f}",
            )
        else:
            line = memory.dispose(kind, b, p.action, p.reason)
        report.applied.append(p)
        report.log_lines.append(line)
    return report
