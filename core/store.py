"""``MemoryStore``: the public, direct path to one project's memory.

Each mutation is one transaction, ``MemoryStore.run``: take the project lock, recover any
interrupted commit, read the files, apply the rule (a ``Memory`` method), commit the changed
files, release. Reads take no lock. It exists once: ``mutate`` calls it, and so does the
daemon's writer for each group commit (it only passes a ``load`` that reuses its parsed
Memory, and batches, journals and replies around it).

A person may edit the files without the lock while a transaction runs: the commit checks,
right before it renames, that the files are still the ones read (``fsio.ChangedUnderneath``
otherwise), and ``run`` then reads again and re-applies its rule, up to ``CHANGED_RETRIES``
times, instead of renaming over the edit.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from ..common import layout
from ..common.limits import CONTEXT_MAX_TOKENS
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
Signature = tuple[fsio.FileSignature | None, ...]  # of READ_NAMES, None for a missing file
READ_NAMES: tuple[str, ...] = (*FILES.values(), STATE_FILE)
CHANGED_RETRIES = 8
GITIGNORE = ".gitignore"
GITIGNORE_TEXT = (
    "# Maestro Memory bookkeeping for this clone (the .md files are the shared memory)\n"
    ".lock\n.state.json\n.commit\n.*.tmp-*\n"
)


@dataclass(frozen=True)
class Committed(Generic[T]):
    """What one transaction did: ``fn``'s result, the Memory it left (equal to the files),
    the files it wrote (name -> text; empty when nothing changed) and the signature of the
    files as it left them (what it read, with what it wrote in place)."""

    result: T
    memory: Memory
    written: dict[str, str]
    signature: Signature


class _Transaction:
    def __init__(
        self, store: MemoryStore, folder: fsio.Folder, memory: Memory, basis: Signature
    ) -> None:
        self.store = store
        self.folder = folder  # opened once for the whole transaction
        self.memory = memory
        self.basis = basis  # the files as read, then as this transaction last wrote them
        self.written: dict[str, str] = {}

    def unchanged(self) -> bool:
        return fsio.signature(self.folder, READ_NAMES) == self.basis

    def commit(self) -> dict[str, str]:
        files, signatures = self.store._write(self.folder, self.memory, self.unchanged)
        if files:
            self.basis = tuple(
                signatures.get(name, old) for name, old in zip(READ_NAMES, self.basis, strict=True)
            )
            self.written.update(files)
        return files


def session_references(result: ContextResult, session_id: str | None) -> list[str]:
    """The entries a context build reinforces afterwards (as referenced in that session): the
    relevant ones, and only when the build belongs to a session. Daemon and direct path both
    ask this; the reinforcement itself is ``Memory.reinforce_referenced``."""
    return list(result.relevant) if session_id is not None else []


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
        lock_deadline: float | None = None,
        create_project: bool = True,
    ) -> None:
        """``lock_deadline`` (``time.monotonic()``): a transaction that cannot take the
        project lock by then fails with ``fsio.LockBusy`` instead of waiting (a hook's
        bounded work); None waits. ``create_project``: the first write may make the project
        folder itself; False (the daemon, direct mode: a known project) refuses a missing one
        with ``ProjectMissing`` and never re-creates it."""
        self.root = Path(project_root)
        self.memory_dir = layout.memory_dir(self.root)
        self.settings = settings if settings is not None else Settings()
        self.clock = clock
        self._txn: _Transaction | None = None
        self.lock_deadline = lock_deadline
        self.create_project = create_project

    # -- plumbing --------------------------------------------------------------------------
    def read(self) -> Memory:
        """A lock-free snapshot of the files as they are now. If a multi-file commit was cut
        short by a crash (its intent file is there), it is completed first, under the lock, so
        a reader never sees half of one (a live commit holds the lock: this waits for it)."""
        try:
            with self.folder() as folder:
                fsio.recover_if_interrupted(folder)
                return self._read_files(folder)
        except FileNotFoundError:  # no memory yet (or no project): an empty one
            return Memory.load({}, today=self.clock(), settings=self.settings)

    def file_texts(self) -> dict[str, str | None]:
        """The files' text as it is on disk (None: missing), for the doors that show the files
        themselves (the MCP resources, the secret scan): lock-free, never through a link,
        refused for an untrusted folder, like every read."""
        try:
            with self.folder() as folder:
                fsio.recover_if_interrupted(folder)
                return fsio.read_files(folder, READ_NAMES)
        except FileNotFoundError:
            return dict.fromkeys(READ_NAMES)

    def file_signature(self) -> Signature:
        """(inode, size, mtime_ns) of each of ``READ_NAMES`` (None: missing), to notice a
        change cheaply (the viewer's live updates)."""
        try:
            with self.folder() as folder:
                return fsio.signature(folder, READ_NAMES)
        except FileNotFoundError:
            return (None,) * len(READ_NAMES)

    def folder(self, *, create: bool = False) -> contextlib.AbstractContextManager[fsio.Folder]:
        """The memory folder opened for one operation (never through a link; ``fsio``)."""
        return fsio.open_folder(
            self.memory_dir,
            create=create,
            create_project=self.create_project,
            trusted=self.settings.trusted,
        )

    def _read_files(self, folder: fsio.Folder) -> Memory:
        texts = fsio.read_files(folder, READ_NAMES)
        return Memory.load(texts, today=self.clock(), settings=self.settings)

    def run(
        self,
        fn: Callable[[Memory], T],
        *,
        load: Callable[[fsio.Folder, Signature], Memory] | None = None,
        on_changed: Callable[[], None] | None = None,
    ) -> Committed[T]:
        """THE transaction (the daemon's writer and ``mutate`` both call it): lock, recover,
        take the files' signature, load, apply ``fn``, commit what changed (last look: nothing
        is renamed over a file changed since the signature), release. On
        ``fsio.ChangedUnderneath`` it calls ``on_changed`` and starts again, up to
        ``CHANGED_RETRIES`` times. Any other exception from ``fn`` commits nothing.

        ``load(folder, signature)``: the state to apply ``fn`` to, parsed from the files in
        ``folder`` whose signature (taken before reading) is ``signature``; the default parses
        them fresh. The daemon
        passes one that reuses the Memory it kept when the signature is the one it left.
        """
        for attempt in range(1, CHANGED_RETRIES + 1):
            try:
                with self._open(load) as txn:
                    result = fn(txn.memory)
                    txn.commit()
                    return Committed(result, txn.memory, txn.written, txn.basis)
            except fsio.ChangedUnderneath:
                if attempt == CHANGED_RETRIES:
                    raise
                if on_changed is not None:
                    on_changed()
        raise AssertionError("unreachable")

    def mutate(self, fn: Callable[[Memory], T]) -> T:
        return self.run(fn).result

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Memory]:
        """``run`` as a block, without the retry: for callers that commit along the way
        (``commit``) and keep mutating the same Memory."""
        with self._open(None) as txn:
            yield txn.memory
            txn.commit()

    def commit(self, memory: Memory) -> dict[str, str]:
        """Inside ``transaction()``: write what ``memory`` changed now; returns what it wrote."""
        txn = self._txn
        if txn is None or txn.memory is not memory:
            raise RuntimeError("commit() belongs inside transaction(), on its Memory")
        return txn.commit()

    @contextlib.contextmanager
    def _open(
        self, load: Callable[[fsio.Folder, Signature], Memory] | None
    ) -> Iterator[_Transaction]:
        with (
            self.folder(create=True) as folder,
            fsio.project_lock(folder, self.lock_deadline),
        ):
            fsio.recover(folder)
            basis = fsio.signature(folder, READ_NAMES)  # before reading
            # recovered: never read()
            memory = self._read_files(folder) if load is None else load(folder, basis)
            self._txn = _Transaction(self, folder, memory, basis)
            try:
                yield self._txn
            finally:
                self._txn = None

    def _write(
        self, folder: fsio.Folder, memory: Memory, unchanged: Callable[[], bool]
    ) -> tuple[dict[str, str], dict[str, fsio.FileSignature]]:
        files = memory.changed_files()
        if not files:
            return {}, {}
        if not fsio.exists(folder, GITIGNORE):
            files[GITIGNORE] = GITIGNORE_TEXT
        signatures = fsio.commit(
            folder,
            {name: fsio.encode(text) for name, text in files.items()},
            unchanged=unchanged,
        )
        memory.mark_clean()
        return files, signatures

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

    def save_session_note(
        self, note: str, session_id: str, confidence: float | None = None
    ) -> tuple[Entry, bool]:
        return self.mutate(lambda m: m.save_session_note(note, session_id, confidence))

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
        max_tokens: int = CONTEXT_MAX_TOKENS,
        session_id: str | None = None,
    ) -> str:
        return self.build_context_result(task, query, max_tokens, session_id).context

    def build_context_result(
        self,
        task: str | None = None,
        query: str | None = None,
        max_tokens: int = CONTEXT_MAX_TOKENS,
        session_id: str | None = None,
        unseen_only: bool = False,
    ) -> ContextResult:
        result = self.read().build_context(task, query, max_tokens, session_id, unseen_only)
        ids = session_references(result, session_id)
        if session_id is not None and ids:
            self.mutate(lambda m: m.reinforce_referenced(ids, session_id))
        return result

    def semantic_entries(self) -> list[Entry]:
        return self.read().semantic_entries()

    def episodic_entries(self) -> list[Entry]:
        return self.read().episodic_entries()
