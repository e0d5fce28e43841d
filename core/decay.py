"""The session decay (spec: the semantic -0.05 per session, the episodic sweep), applied once
per day or per session id (``Settings.decay_unit``) when a session starts.

Functions over a ``MemoryState`` (public calls only); the numbers are ``core/rules.py``'s.
"""

from __future__ import annotations

import uuid

from . import rules
from .markdown import fmt_confidence
from .model import Entry, InitReport, SweepReport
from .state import MemoryState, validate_session


def initialize(memory: MemoryState, session_id: str | None = None) -> InitReport:
    """Start (or rejoin) a session: apply the decay when it is due, exactly once.

    ``decay_unit = "day"``: due on the first session of a calendar day (``memory.today``)
    later than the last day decayed; ``"session"``: due for a session id not yet in the
    ledger. Either way the id is recorded, so switching the unit never decays twice.
    """
    sid = validate_session(session_id) if session_id is not None else uuid.uuid4().hex
    created = memory.ensure_files()
    new_session = sid not in memory.state.sessions
    if memory.settings.decay_unit == "day":
        last = memory.state.last_decay_day()
        due = last is None or memory.today > last  # a clock set back never decays again
    else:
        due = new_session
    if new_session:
        memory.state.sessions[sid] = memory.today
        memory.state.changed = True
    if not due:
        return InitReport(
            session_id=sid, created=created, applied=False, flagged=flagged_entries(memory)
        )
    semantic = semantic_decay(memory)
    sweep = decay_sweep(memory)
    if memory.state.decayed_on is None or memory.today > memory.state.decayed_on:
        memory.state.decayed_on = memory.today
    memory.state.changed = True
    return InitReport(
        session_id=sid,
        created=created,
        applied=True,
        semantic_decayed=semantic,
        episodic_decayed=sweep.decayed,
        pruned=sweep.pruned,
        flagged=flagged_entries(memory),
    )


def semantic_decay(memory: MemoryState) -> int:
    """-0.05 for every entry not reinforced since the previous session's decay."""
    decayed = 0
    for b in memory.docs["semantic"].entries():
        if b.confidence == 0.0:
            continue
        original = b.original
        if b.meta.get("r") == "1":
            b.meta.pop("r")
            b.meta["u"] = "0"
        else:
            b.confidence = rules.semantic_decayed(b.confidence)
            seen = b.meta.get("u", "0")
            b.meta["u"] = str((int(seen) if seen.isdigit() else 0) + 1)
            decayed += 1
        b.meta["o"] = fmt_confidence(original)
        b.dirty = True
        memory.reached("semantic", b)
    if memory.docs["semantic"].entries():
        memory.touch("semantic")
    return decayed


def decay_sweep(memory: MemoryState) -> SweepReport:
    """The spec's episodic sweep: x0.8 salience and confidence; prune below 0.1 salience."""
    doc = memory.docs["episodic"]
    pruned: list[Entry] = []
    decayed = 0
    for b in doc.entries():
        original = b.original
        b.salience, b.confidence = rules.episodic_decayed(b.salience or 0.0, b.confidence)
        b.meta["o"] = f"{original:.3f}".rstrip("0").rstrip(".")
        b.dirty = True
        memory.reached("episodic", b)
        decayed += 1
        if rules.pruned_by_sweep(b.salience):
            pruned.append(memory.entry(b, "episodic"))
            memory.dispose(
                "episodic",
                b,
                rules.disposal(original),
                f"episodic entry, salience {b.salience:.3f}, pruned by the session sweep",
            )
    if decayed:
        memory.touch("episodic")
    flagged = [e for e in memory.episodic_entries() if e.state == "flagged"]
    return SweepReport(decayed=decayed, pruned=pruned, flagged=flagged)


def flagged_entries(memory: MemoryState) -> list[Entry]:
    return [e for e in memory.semantic_entries() + memory.episodic_entries() if e.state != "active"]
