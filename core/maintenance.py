"""Memory maintenance: the entries flagged for review, each with its proposed disposal and
reason, and the decisions applied (remove, archive, reinforce), each logged.

Functions over a ``MemoryState`` (public calls only).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import evidence, rules, toolmem
from .markdown import EntryBlock, FileKind
from .model import (
    FLAG_THRESHOLD,
    REINFORCED_BY_REVIEW,
    Entry,
    InputError,
    MaintenanceReport,
    Proposal,
    RejectedError,
    Sector,
)
from .proposals import confirm
from .secrets import screen
from .state import SECTORS, MemoryState, log_quote, validate_fact

DECISIONS: tuple[str, ...] = ("remove", "archive", "reinforce", "rewrite", "confirm")


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
                    _linked(memory, entry)
                    if entry.state == "superseded"
                    else Proposal(
                        entry=entry,
                        action="confirm"
                        if entry.state == "proposed"
                        else evidence.proposal_action(entry.moved)
                        if entry.stale is not None
                        else rules.disposal(b.original),
                        reason=f"proposed on {entry.proposed}: kept, not served until confirmed"
                        if entry.state == "proposed"
                        else entry.stale or _flag_reason(memory, kind, b),
                    ),
                )
            )
    return out


def _linked(memory: MemoryState, entry: Entry) -> Proposal:
    """A rule a newer one may replace (core/frame.py): archive it if it does, reinforce to keep
    both; it waits for that decision."""
    blocks = memory.docs["semantic"].entries()
    newer = next((b for b in blocks if b.id == entry.superseded_by), None)
    said = f' "{log_quote(newer.text)}"' if newer is not None else ""
    return Proposal(
        entry=entry,
        action="review",
        reason=f"may be replaced by {entry.superseded_by}{said}: archive it if so, reinforce "
        "to keep both",
    )


def unlink(memory: MemoryState, b: EntryBlock) -> None:
    """Resolve a "may replace" link either way: neither entry names the other any more."""
    newer = b.meta.pop("sup", "")
    b.dirty = True
    memory.reached("semantic", b)
    for other in memory.docs["semantic"].entries():
        if other.id == newer and other.meta.pop("may", None) is not None:
            other.dirty = True
            memory.reached("semantic", other)
    memory.touch("semantic")


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
    rewrites: dict[str, str] = {}
    if decisions is None:  # a stale entry waits for a person (core/evidence.py)
        chosen = [
            x for x in proposals if x[2].action not in (*evidence.WAITING, "confirm")
        ]  # a proposal waits for a yes
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
            if action == "rewrite":
                rewrites[eid] = rewritten_text(memory, b, p.entry)  # validated before any change
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
        if p.action == "confirm":
            line = confirm(memory, b, "by review") or ""
            if not line:
                raise RejectedError(f"entry {b.id!r} is not a proposal: nothing to confirm")
        elif p.action == "rewrite":
            line = rewrite(memory, b, rewrites[b.id], p.entry)
        elif p.entry.superseded_by is not None:
            unlink(memory, b)
            if p.action == "reinforce":
                line = memory.log(kind, "Kept", b.text, "user kept it beside the newer rule")
            else:
                line = memory.dispose(kind, b, p.action, f"replaced by {p.entry.superseded_by}")
        elif p.entry.stale is not None and p.action == "reinforce" and keep(memory, b):
            line = memory.log(kind, "Kept", b.text, f"user confirmed it despite: {p.reason}")
        elif p.action == "reinforce":
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


# -- a stale entry's review (core/evidence.py has the rule) ------------------------------------
def rewritten_text(memory: MemoryState, b: EntryBlock, entry: Entry) -> str:
    """The entry's text with its renamed paths replaced, checked as a save checks a fact."""
    if not entry.moved:
        raise RejectedError(f"entry {b.id!r} names no path git saw renamed: nothing to rewrite")
    text = validate_fact(
        evidence.rewritten(b.text, entry.moved, memory.state.evidence.root), name="fact"
    )
    screened = screen(text)
    if screened.empty or screened.kinds:
        raise RejectedError(f"the rewritten text of {b.id!r} would not pass the privacy screen")
    return " ".join(screened.text.split())


def rewrite(memory: MemoryState, b: EntryBlock, text: str, entry: Entry) -> str:
    old = b.text
    b.text = text
    b.dirty = True
    memory.reached("semantic", b)
    memory.touch("semantic")
    moves = ", ".join(f"`{a}` → `{n}`" for a, n in (entry.moved or {}).items())
    return memory.log("semantic", "Rewritten", old, f'renamed {moves}; now "{log_quote(text)}"')


def keep(memory: MemoryState, b: EntryBlock) -> bool:
    """A person kept a stale entry: its missing paths stop flagging it. True when that is all
    the review had to do (its scores alone would not have flagged it)."""
    found = evidence.finding(b.text, b.id, memory.state.evidence)
    if found is not None:
        memory.state.evidence = evidence.kept_after_review(memory.state.evidence, b.id, found)
        memory.state.changed = True
        memory.generation += 1
    return rules.state_of(b.confidence, b.salience) == "active" and not b.meta.get("gone")


def evidence_plan(memory: MemoryState, root: str) -> evidence.Plan:
    """What an evidence check looks at: the paths the semantic entries name."""
    return evidence.plan(((b.text, b.date) for b in memory.docs["semantic"].entries()), root)


def record_evidence(
    memory: MemoryState, checked: evidence.Plan, probe: evidence.Probe
) -> evidence.Ledger:
    """Keep what the check saw in the sidecar ledger (the entries themselves are not touched);
    the ledger as it is now."""
    ids = [b.id for b in memory.docs["semantic"].entries()]
    after = evidence.record(memory.state.evidence, checked, probe, memory.today, ids)
    if after != memory.state.evidence:
        memory.state.evidence = after
        memory.state.changed = True
        memory.generation += 1  # entries' states may have changed: caches key on it
    return memory.state.evidence
