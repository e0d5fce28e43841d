"""``MemoryStore``: the public, direct path to one project's memory.

Each mutation is one transaction: take the project lock, recover any interrupted commit, read
the files fresh, apply the rule (a ``Memory`` method), commit the changed files, release.
Reads take no lock. The daemon uses the same ``transaction`` for its group commits.

A person may edit the files without the lock while a transaction runs: the commit checks,
right before it renames, that the files are still the ones read (``fsio.ChangedUnderneath``
otherwise), and ``mutate`` then reads again and re-applies its rule, up to
``CHANGED_RETRIES`` times, instead of renaming over the edit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from . import fsio
from .memory import FILES, STATE_FILE, Memory, Settings
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

T = TypeVar("T")
READ_NAMES: tuple[str, ...] = (*FILES.values(), STATE_FILE)
CHANGED_RETRIES = 8
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = (
    "# Maestro Memory bookkeeping for this clone (the .md files are the shared memory)\n"
    ".lock\n.state.json\n.commit\n.*.tmp-*\n"
)


def today() -> str:
    return dt.date.today().isoformat()


class MemoryStore:
    """One project's memory, at ``<project_root>/.maestro/memory``."""

    def __init__(
        self,
        project_root: str | Path,
        *,
        settings: Settings | None = None,
        clock: Callable[[], str] = today,
    ) -> None:
        self.root = Path(project_root)
        self.memory_dir = self.root / ".maestro" / "memory"
        self.settings = settings if settings is not None else Settings()
        self.clock = clock
        self._basis: tuple[fsio.FileSignature | None, ...] | None = None
        self.written_signatures: dict[str, fsio.FileSignature] = {}

    # -- plumbing --------------------------------------------------------------------------
    def read(self) -> Memory:
        """A lock-free snapshot of the files as they are now."""
        texts = fsio.read_files(self.memory_dir, READ_NAMES)
        return Memory.load(texts, today=self.clock(), settings=self.settings)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Memory]:
        """Lock, read fresh, yield the state, then commit what changed (nothing on error)."""
        with fsio.project_lock(self.memory_dir):
            fsio.recover(self.memory_dir)
            self._basis = fsio.signature(self.memory_dir, READ_NAMES)  # before reading
            try:
                memory = self.read()
                yield memory
                self.commit(memory, unchanged=self._unchanged)
            finally:
                self._basis = None

    def _unchanged(self) -> bool:
        """Are the files still those the transaction read (or last committed itself)?"""
        return fsio.signature(self.memory_dir, READ_NAMES) == self._basis

    def commit(
        self, memory: Memory, *, unchanged: Callable[[], bool] | None = None
    ) -> dict[str, str]:
        """Write the files ``memory`` changed (caller holds the lock); returns what it wrote.
        ``unchanged``: see ``fsio.commit``. ``self.written_signatures`` is then the
        ``(inode, size, mtime_ns)`` of each file written."""
        files = memory.changed_files()
        self.written_signatures = {}
        if not files:
            return {}
        if not (self.memory_dir / GITIGNORE).exists():
            files[GITIGNORE] = GITIGNORE_TEXT
        self.written_signatures = fsio.commit(
            self.memory_dir,
            {name: fsio.encode(text) for name, text in files.items()},
            unchanged=unchanged,
        )
        if self._basis is not None:  # a commit inside a transaction: its files are the basis
            self._basis = tuple(
                self.written_signatures.get(name, old)
                for name, old in zip(READ_NAMES, self._basis, strict=True)
            )
        memory.mark_clean()
        return files

    def mutate(self, fn: Callable[[Memory], T]) -> T:
        for attempt in range(1, CHANGED_RETRIES + 1):
            try:
                with self.transaction() as memory:
                    return fn(memory)
            except fsio.ChangedUnderneath:
                if attempt == CHANGED_RETRIES:
                    raise
        raise AssertionError("unreachable")

    # -- the public API ----------------------------------------------------------------------
    def initialize(self, session_id: str | None = None) -> InitReport:
        return self.mutate(lambda m: m.initialize(session_id))

    def decay_sweep(self) -> SweepReport:
        return self.mutate(lambda m: m.decay_sweep())

    def save_semantic(
        self, fact: str, category: str, confidence: float | None = None
    ) -> SaveResult:
        return self.mutate(lambda m: m.save_semantic(fact, category, confidence))

    def save_episodic(
        self, context: str, session_id: str, confidence: float | None = None
    ) -> Entry:
        return self.mutate(lambda m: m.save_episodic(context, session_id, confidence))

    def detect_semantic_signals(
        self, user_message: str, assistant_response: str = ""
    ) -> list[Signal]:
        return self.mutate(lambda m: m.detect_semantic_signals(user_message, assistant_response))

    def reinforce(self, entry_id: str, confirmed: bool = False) -> Entry:
        return self.mutate(lambda m: m.reinforce(entry_id, confirmed))

    def memory_maintenance(
        self, decisions: Mapping[str, str] | None = None, dry_run: bool = False
    ) -> MaintenanceReport:
        if dry_run:
            return self.read().memory_maintenance(decisions, dry_run=True)
        return self.mutate(lambda m: m.memory_maintenance(decisions, dry_run=False))

    def forget(self, entry_id: str | list[str], dry_run: bool = False) -> ForgetReport:
        """Remove entries (by id) and every copy of their text from the memory files."""
        ids = [entry_id] if isinstance(entry_id, str) else entry_id
        if dry_run:
            return self.read().forget(ids, dry_run=True)
        return self.mutate(lambda m: m.forget(ids))

    def matching(self, text: str) -> list[Entry]:
        """Entries, live or archived, whose text contains ``text`` (case-insensitive)."""
        return self.read().matching(text)

    def build_context(
        self,
        task: str | None = None,
        query: str | None = None,
        max_tokens: int = 500,
        session_id: str | None = None,
    ) -> str:
        return self.build_context_result(task, query, max_tokens, session_id).context

    def build_context_result(
        self,
        task: str | None = None,
        query: str | None = None,
        max_tokens: int = 500,
        session_id: str | None = None,
    ) -> ContextResult:
        result = self.read().build_context(task, query, max_tokens, session_id)
        if session_id is not None and result.relevant:
            ids = list(result.relevant)
            self.mutate(lambda m: m.reinforce_referenced(ids, session_id))
        return result

    def semantic_entries(self) -> list[Entry]:
        return self.read().semantic_entries()

    def episodic_entries(self) -> list[Entry]:
        return self.read().episodic_entries()
