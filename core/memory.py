"""``Memory``: one project's memory state with its operations, one call per rule.

``Memory`` is a ``MemoryState`` (``core/state.py``: the parsed documents, the ledger, the
public surface the rules use) whose methods are the operations callers run inside a
transaction (``MemoryStore.run``, the daemon's writer). Each is one line into the module that
holds its rule, so each rule exists once:

* ``core/decay.py``: ``initialize`` (the session decay), ``decay_sweep``;
* ``core/saving.py``: semantic and episodic saves, session notes, reinforcement, signals;
* ``core/forgetting.py``: ``matching``, ``forget`` (with the scrub);
* ``core/maintenance.py``: ``memory_maintenance``, and the record of an evidence check
  (``core/evidence.py`` decides, ``common/worktree.py`` looks at the tree);
* ``core/importing.py``: ``import_notes`` (the tools' own memories);
* ``core/view.py``: ``view`` and the context build over it.

No I/O here. Every operation validates all of its input before it changes anything, so a
``ValueError`` leaves the state exactly as it was.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..common.limits import CONTEXT_MAX_TOKENS
from . import decay, evidence, forgetting, importing, maintenance, saving
from . import view as read_view
from .forgetting import FORGOTTEN_MARK
from .model import (
    ContextResult,
    Entry,
    ForgetReport,
    InitReport,
    MaintenanceReport,
    SaveResult,
    Signal,
    SweepReport,
)
from .signals import DetectedSignal
from .state import (
    FILES,
    SHOWN_SESSIONS,
    STATE_FILE,
    MemoryState,
    Settings,
    State,
    log_quote,
    session_tag,
)
from .toolmem import ImportReport, Note
from .view import MemoryView

__all__ = [
    "FILES",
    "FORGOTTEN_MARK",
    "SHOWN_SESSIONS",
    "STATE_FILE",
    "Memory",
    "MemoryState",
    "MemoryView",
    "Settings",
    "State",
    "log_quote",
    "session_tag",
]


class Memory(MemoryState):
    """The operations on one project's memory; the rules are in the modules named above."""

    def initialize(self, session_id: str | None = None) -> InitReport:
        return decay.initialize(self, session_id)

    def decay_sweep(self) -> SweepReport:
        return decay.decay_sweep(self)

    def save_semantic(
        self,
        fact: object,
        category: object,
        confidence: object = None,
        *,
        held: Collection[str] = (),
        dropped: Collection[str] = (),
    ) -> SaveResult:
        return saving.save_semantic(self, fact, category, confidence, held=held, dropped=dropped)

    def save_episodic(
        self, context_text: object, session_id: object, confidence: object = None
    ) -> Entry:
        return saving.save_episodic(self, context_text, session_id, confidence)

    def save_session_note(
        self, note: object, session_id: object, confidence: object = None
    ) -> tuple[Entry, bool]:
        return saving.save_session_note(self, note, session_id, confidence)

    def reinforce(
        self, entry_id: object, confirmed: bool = False, session_id: str | None = None
    ) -> Entry:
        return saving.reinforce(self, entry_id, confirmed, session_id)

    def reinforce_referenced(self, entry_ids: Iterable[str], session_id: str) -> list[Entry]:
        return saving.reinforce_referenced(self, entry_ids, session_id)

    def detect_semantic_signals(
        self, user_message: object, assistant_response: object = ""
    ) -> list[Signal]:
        return saving.detect_semantic_signals(self, user_message, assistant_response)

    def save_signals(self, found: Iterable[DetectedSignal]) -> list[Signal]:
        return saving.save_signals(self, found)

    def import_notes(
        self,
        notes: list[Note],
        tools: list[str],
        indexes: dict[str, dict[str, Any]] | None = None,
    ) -> ImportReport:
        return importing.import_notes(self, notes, tools, indexes)

    def matching(self, needle: object) -> list[Entry]:
        return forgetting.matching(self, needle)

    def forget(self, entry_ids: object, dry_run: bool = False) -> ForgetReport:
        return forgetting.forget(self, entry_ids, dry_run)

    def memory_maintenance(
        self, decisions: Mapping[str, str] | None = None, dry_run: bool = False
    ) -> MaintenanceReport:
        return maintenance.memory_maintenance(self, decisions, dry_run)

    def evidence_plan(self, root: str) -> evidence.Plan:
        return maintenance.evidence_plan(self, root)

    def record_evidence(self, checked: evidence.Plan, probe: evidence.Probe) -> evidence.Ledger:
        return maintenance.record_evidence(self, checked, probe)

    def view(self) -> MemoryView:
        return read_view.view(self)

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = CONTEXT_MAX_TOKENS,
        session_id: object = None,
        unseen_only: bool = False,
        for_tool: object = None,
    ) -> ContextResult:
        return self.view().build_context(task, query, max_tokens, session_id, unseen_only, for_tool)

    def summary(self) -> dict[str, Any]:
        return self.view().summary()
