"""The memory ops of protocol v1: one small handler each, shared by the daemon and direct mode.

A handler validates its arguments, then calls a ``Memory`` method through a ``Backend``:

* the daemon's backend reads from its per-project cache and sends mutations to its single
  writer thread (group commit, reply after fsync);
* the direct backend (``DirectBackend``, used by the client when no daemon runs) runs each
  mutation as one ``MemoryStore`` transaction.

Both therefore give the same results for the same request, by construction. Daemon-only ops
(``status``, ``register`` …) are registered by the daemon in the same way.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..core import saving
from ..core.frame import use_meaning
from ..core.memory import Memory, MemoryView, Settings
from ..core.model import (
    Entry,
    ForgetReport,
    InitReport,
    InputError,
    MaintenanceReport,
    NotFoundError,
    RejectedError,
    TooLarge,
)
from ..core.saving import hidden_removed
from ..core.signals import DetectedSignal
from ..core.store import MemoryStore, session_references
from ..core.toolmem import ImportReport
from . import layout, worktree
from .agents import AGENTS as TOOLS
from .limits import CONTEXT_MAX_TOKENS, FACT_MAX_CHARS, TOO_LARGE
from .protocol import BAD_REQUEST, CONFLICT, INTERNAL, NOT_FOUND, REJECTED, OpError

T = TypeVar("T")
Args = dict[str, Any]


class Backend(Protocol):
    def read(self, project: Path) -> MemoryView:
        """The current state of ``project``, as an immutable view."""
        ...

    def write(self, project: Path, op: str, fn: Callable[[Memory], T]) -> T:
        """Apply ``fn`` under the project lock; return once it is durable."""
        ...

    def reinforce_later(self, project: Path, entry_ids: list[str], session_id: str) -> None:
        """Reference reinforcement after a context build (may be applied asynchronously)."""
        ...

    def import_config(self) -> dict[str, Any]:
        """The ``[import]`` table this process runs with (ValueError when it is wrong): the
        daemon's is the one it read at start or at the last reload; direct mode reads the file."""
        ...


Handler = Callable[[Backend, Path, Args], dict[str, Any]]


@dataclass(frozen=True)
class OpSpec:
    name: str
    handler: Handler
    args: frozenset[str]


MEMORY_OPS: dict[str, OpSpec] = {}


def memory_op(name: str, *args: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        MEMORY_OPS[name] = OpSpec(name, fn, frozenset(args))
        return fn

    return register


# -- argument checks -------------------------------------------------------------------------
def check_args(spec_args: frozenset[str], args: Args) -> None:
    unknown = sorted(set(args) - spec_args)
    if unknown:
        allowed = ", ".join(sorted(spec_args)) or "none"
        raise OpError(
            BAD_REQUEST, f"unknown argument(s) {', '.join(map(repr, unknown))}; allowed: {allowed}"
        )


def opt_str(args: Args, key: str) -> str | None:
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise OpError(BAD_REQUEST, f"'{key}' must be a string, got {type(value).__name__}")
    return value


def req_str(args: Args, key: str) -> str:
    if key not in args or args[key] is None:
        raise OpError(BAD_REQUEST, f"'{key}' is required")
    value = opt_str(args, key)
    assert value is not None
    return value


def opt_number(args: Args, key: str) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OpError(BAD_REQUEST, f"'{key}' must be a number, got {type(value).__name__}")
    return float(value)


def opt_int(args: Args, key: str, default: int) -> int:
    if key not in args or args[key] is None:
        return default
    value = args[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise OpError(BAD_REQUEST, f"'{key}' must be an integer, got {type(value).__name__}")
    return value


def opt_bool(args: Args, key: str, default: bool = False) -> bool:
    value = args.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise OpError(BAD_REQUEST, f"'{key}' must be true or false, got {type(value).__name__}")
    return value


def core_errors(fn: Callable[[], T]) -> T:
    """Map the core's own errors to protocol codes."""
    try:
        return fn()
    except NotFoundError as exc:
        raise OpError(NOT_FOUND, str(exc)) from exc
    except RejectedError as exc:
        raise OpError(REJECTED, str(exc)) from exc
    except TooLarge as exc:
        raise OpError(TOO_LARGE, str(exc)) from exc
    except InputError as exc:
        raise OpError(BAD_REQUEST, str(exc)) from exc


def resolve_project(path: str) -> Path:
    """The canonical project path: absolute, symlinks resolved."""
    if "\x00" in path:
        raise OpError(BAD_REQUEST, "project path must not contain NUL characters")
    try:
        return layout.canonical_project(path)
    except UnicodeEncodeError as exc:  # a lone surrogate no file name can hold
        raise OpError(
            BAD_REQUEST,
            f"project path is not valid text (a lone surrogate at character {exc.start})",
        ) from exc


# -- handlers ----------------------------------------------------------------------------------
@memory_op("initialize", "session_id")
def op_initialize(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    session_id = opt_str(args, "session_id")

    def start(m: Memory) -> InitReport:
        worktree.check(project, m)  # first: what it finds is in the report's ``flagged``
        return m.initialize(session_id)

    return core_errors(lambda: backend.write(project, "initialize", start)).to_dict()


@memory_op("build_context", "task", "query", "max_tokens", "session_id", "unseen_only", "for_tool")
def op_build_context(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    task = opt_str(args, "task")
    query = opt_str(args, "query")
    max_tokens = opt_int(args, "max_tokens", CONTEXT_MAX_TOKENS)
    session_id = opt_str(args, "session_id")
    unseen_only = opt_bool(args, "unseen_only")
    for_tool = opt_str(args, "for_tool")
    memory = backend.read(project)
    result = core_errors(
        lambda: memory.build_context(task, query, max_tokens, session_id, unseen_only, for_tool)
    )
    ids = session_references(result, session_id)
    if session_id is not None and ids:
        backend.reinforce_later(project, ids, session_id)
    return {
        "context": result.context,
        "tokens": result.tokens,
        "included": result.included,
        "relevant": result.relevant,
    }


@memory_op("save_semantic", "fact", "category", "confidence")
def op_save_semantic(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    use_meaning()  # a save may link by meaning (core/frame.py); the hooks never come here
    fact = req_str(args, "fact")
    category = req_str(args, "category")
    confidence = opt_number(args, "confidence")
    result = core_errors(
        lambda: backend.write(
            project, "save_semantic", lambda m: m.save_semantic(fact, category, confidence)
        )
    )
    if result.screened:  # a secret: an error the caller cannot miss (CLI exit 1)
        raise OpError(REJECTED, result.reason)
    return result.to_dict()


@memory_op("save_episodic", "context", "session_id", "confidence")
def op_save_episodic(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    text = req_str(args, "context")
    session_id = req_str(args, "session_id")
    confidence = opt_number(args, "confidence")
    entry = core_errors(
        lambda: backend.write(
            project, "save_episodic", lambda m: m.save_episodic(text, session_id, confidence)
        )
    )
    removed = hidden_removed(text)
    return {"entry": entry.to_dict(), **({"removed": removed} if removed else {})}


@memory_op("save_session_note", "note", "session_id", "confidence")
def op_save_session_note(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    note = req_str(args, "note")
    session_id = req_str(args, "session_id")
    confidence = opt_number(args, "confidence")
    entry, updated = core_errors(
        lambda: backend.write(
            project,
            "save_session_note",
            lambda m: m.save_session_note(note, session_id, confidence),
        )
    )
    return {"entry": entry.to_dict(), "updated": updated}


@memory_op("detect_signals", "user_message", "assistant_response")
def op_detect_signals(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    found = read_signals(args)
    return core_errors(lambda: backend.write(project, "detect_signals", saved_signals(found)))


def read_signals(args: Args) -> list[DetectedSignal]:
    """``detect_signals``'s first half, the text alone (``core.saving.read_signals``): no
    memory, so the daemon runs it off its writer thread; ``saved_signals`` is the second."""
    user = req_str(args, "user_message")
    assistant = opt_str(args, "assistant_response") or ""
    return core_errors(lambda: saving.read_signals(user, assistant))


def saved_signals(found: list[DetectedSignal]) -> Callable[[Memory], dict[str, Any]]:
    """``detect_signals``'s second half: the transaction's step that saves ``found``."""
    return lambda m: {"signals": [s.to_dict() for s in m.save_signals(found)]}


@memory_op("reinforce", "entry_id", "confirmed")
def op_reinforce(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    entry_id = req_str(args, "entry_id")
    confirmed = opt_bool(args, "confirmed")
    entry = core_errors(
        lambda: backend.write(project, "reinforce", lambda m: m.reinforce(entry_id, confirmed))
    )
    return {"entry": entry.to_dict()}


@memory_op("maintenance", "dry_run", "decisions")
def op_maintenance(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    dry_run = opt_bool(args, "dry_run")
    decisions = args.get("decisions")
    if decisions is not None and (
        not isinstance(decisions, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in decisions.items())
    ):
        raise OpError(
            BAD_REQUEST,
            "'decisions' must map entry ids to 'remove' | 'archive' | 'reinforce' | 'rewrite'",
        )

    # A dry run changes nothing, so its transaction writes nothing; it still runs in the
    # writer so that it sees every write queued before it.
    def maintain(m: Memory) -> MaintenanceReport:
        if not dry_run:  # a dry run (the review's listing) shows what the last check found
            worktree.check(project, m, worktree.MAINTENANCE_GIT_BUDGET)
        return m.memory_maintenance(decisions, dry_run=dry_run)

    report = core_errors(lambda: backend.write(project, "maintenance", maintain))
    return report.to_dict()


@memory_op("entries", "sector")
def op_entries(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    sector = _sector(args)
    memory = backend.read(project)
    entries = _sector_entries(memory, sector)
    return {"entries": [e.to_dict() for e in entries], "problems": memory.problems()}


def _sector(args: Args) -> str | None:
    sector = opt_str(args, "sector")
    if sector not in (None, "semantic", "episodic", "archive"):
        raise OpError(BAD_REQUEST, "'sector' must be 'semantic', 'episodic' or 'archive'")
    return sector


def _sector_entries(memory: MemoryView, sector: str | None) -> list[Entry]:
    """The entries of ``sector`` (None: semantic and episodic; the archive only by name)."""
    entries: list[Entry] = []
    if sector in (None, "semantic"):
        entries += memory.semantic_entries()
    if sector in (None, "episodic"):
        entries += memory.episodic_entries()
    if sector == "archive":
        entries += memory.archived_entries()
    return entries


def forget_ids(memory: Memory, ids: list[str] | None, match: str | None) -> list[str]:
    """The entry ids a ``forget`` names, each once: ``ids``, or with ``match`` every entry
    whose text contains it (``Memory.matching``). The op and the daemon's journal scrub both
    ask this."""
    chosen = ids if match is None else [e.id for e in memory.matching(match)]
    return list(dict.fromkeys(chosen or []))


@memory_op("forget", "entry_ids", "match", "dry_run")
def op_forget(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    """Remove entries by id (or every entry whose text contains ``match``) and every copy of
    their text. ``dry_run`` lists what would go."""
    ids = args.get("entry_ids")
    match = opt_str(args, "match")
    dry_run = opt_bool(args, "dry_run")
    if (ids is None) == (match is None):
        raise OpError(BAD_REQUEST, "give exactly one of 'entry_ids' or 'match'")
    if ids is not None and (
        not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids)
    ):
        raise OpError(BAD_REQUEST, "'entry_ids' must be a non-empty list of entry ids")

    def apply(memory: Memory) -> ForgetReport:
        chosen = forget_ids(memory, ids, match)
        if not chosen:
            raise NotFoundError(f"no entry contains {match!r}")
        return memory.forget(chosen, dry_run=dry_run)

    # A dry run runs in the writer too, so it sees every write queued before it.
    report = core_errors(lambda: backend.write(project, "forget", apply)).to_dict()
    if not dry_run:
        _drop_hook_block(project)
    return report


def _drop_hook_block(project: Path) -> None:
    """The last block a session-start hook kept for the project may quote what was just
    forgotten: it goes too (the next session start keeps a new one)."""
    import json

    from . import paths

    named = paths.resolve().hook_block_path(project)
    mine = str(layout.canonical_project(project))
    try:
        named.unlink(missing_ok=True)
        # A block kept under another name (an earlier release named them by FNV-1a) that
        # names this project goes too: nothing forgotten stays quoted anywhere.
        for other in named.parent.glob("*.json") if named.parent.is_dir() else ():
            try:
                kept = json.loads(other.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(kept, dict) and kept.get("project") == mine:
                other.unlink(missing_ok=True)
    except OSError as exc:
        raise OpError(
            INTERNAL, f"forgotten, but the hooks' last block of {project} is still there: {exc}"
        ) from exc


SEARCH_LIMIT_DEFAULT = 20
SEARCH_LIMIT_MAX = 1000
# Characters (each word becomes a search term): as long as a memory may be.
SEARCH_QUERY_MAX = FACT_MAX_CHARS


@memory_op("search", "query", "sector", "limit")
def op_search(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    """The entries matching ``query``, best first (``core.search``: BM25 over ``core.text``'s
    words, the one ranking the CLI, the MCP ``search`` tool and the ui share)."""
    from ..core.search import search

    query = req_str(args, "query")
    if len(query) > SEARCH_QUERY_MAX:
        raise OpError(
            BAD_REQUEST, f"'query' is {len(query)} characters; at most {SEARCH_QUERY_MAX}"
        )
    sector = _sector(args)
    limit = opt_int(args, "limit", SEARCH_LIMIT_DEFAULT)
    if not 0 <= limit <= SEARCH_LIMIT_MAX:
        raise OpError(BAD_REQUEST, f"'limit' must be 0 to {SEARCH_LIMIT_MAX}, got {limit}")
    memory = backend.read(project)
    entries = _sector_entries(memory, sector)
    found = search(entries, query, limit=limit)
    return {
        "query": query,
        "results": [{**e.to_dict(), "score": score} for e, score in found],
    }


@memory_op("import_tool_memories", "tools", "dry_run", "home")
def op_import_tool_memories(backend: Backend, project: Path, args: Args) -> dict[str, Any]:
    """Read each tool's own memory folder for ``project`` (read only) and import it:
    ``core/toolmem.py`` has the rule, ``common/toolsources.py`` the folders. ``home`` is the
    caller's home directory (where the tools keep their folders), default this process's."""
    from . import toolsources

    use_meaning()  # one fact in three tools' words is one entry (core/frame.py)
    tools = args.get("tools")
    if tools is None:
        tools = list(TOOLS)
    if not isinstance(tools, list) or not all(isinstance(t, str) and t in TOOLS for t in tools):
        raise OpError(BAD_REQUEST, f"'tools' must be a list of: {', '.join(TOOLS)}")
    dry_run = opt_bool(args, "dry_run")
    home = opt_str(args, "home")
    if home is not None and not os.path.isabs(home):
        raise OpError(BAD_REQUEST, "'home' must be an absolute path")
    try:
        config = backend.import_config()
    except ValueError as exc:
        raise OpError(CONFLICT, f"tool memories not imported: bad configuration: {exc}") from exc
    locations = toolsources.locate(project, Path(home) if home else Path.home(), config)
    found = toolsources.scan(locations, tools)

    def apply(m: Memory) -> ImportReport:
        target = copy.deepcopy(m) if dry_run else m  # a dry run changes a copy: nothing written
        report = target.import_notes(found.notes, found.tools, found.indexes)
        report.dry_run = dry_run
        return report

    report = core_errors(lambda: backend.write(project, "import_tool_memories", apply))
    result = report.to_dict()
    result["locations"] = [locations[t].to_dict() for t in tools]
    result["index"] = found.index
    return result


TRANSCRIPT_BUDGET = 0.5  # seconds of reading a transcript for its note: then it stops


def session_note(
    project: Path, transcript_path: str, should_stop: Callable[[], bool]
) -> str | None:
    """The note a session leaves, distilled from its transcript (``core.digest``, streamed,
    stopped when ``should_stop`` says so); None when the session had no prompt. Raises
    ``OSError`` when the transcript cannot be read. The session-end hook's direct path and the
    daemon's ``end_session`` both call it, then the ``save_session_note`` and ``maintenance``
    ops: one implementation for both."""
    from ..core.digest import distil

    with open(transcript_path, "rb") as lines:
        return distil(lines, str(project), should_stop=should_stop).note()


def dispatch_memory_op(backend: Backend, op: str, project: Path, args: Args) -> dict[str, Any]:
    spec = MEMORY_OPS[op]
    check_args(spec.args, args)
    return spec.handler(backend, project, args)


# -- direct mode -------------------------------------------------------------------------------
class DirectBackend:
    """No daemon: every read is a fresh lock-free parse, every write its own transaction."""

    def __init__(
        self,
        store_factory: Callable[[Path], MemoryStore] | None = None,
        *,
        settings: Settings | None = None,
        lock_deadline: float | None = None,
    ) -> None:
        """``lock_deadline`` (``time.monotonic()``): writes give up with ``fsio.LockBusy``
        when the project lock is still held then (see ``MemoryStore``); None waits."""
        self._store_factory = (
            store_factory
            if store_factory is not None
            else (
                lambda project: MemoryStore(
                    project, settings=settings, lock_deadline=lock_deadline, create_project=False
                )
            )
        )

    def read(self, project: Path) -> MemoryView:
        return self._store_factory(project).read().view()

    def write(self, project: Path, op: str, fn: Callable[[Memory], T]) -> T:
        return self._store_factory(project).mutate(fn)

    def reinforce_later(self, project: Path, entry_ids: list[str], session_id: str) -> None:
        self._store_factory(project).mutate(lambda m: m.reinforce_referenced(entry_ids, session_id))

    def import_config(self) -> dict[str, Any]:
        """Read from config.toml at each call: a direct-mode process is one command."""
        from . import toolsources

        return toolsources.import_config()
