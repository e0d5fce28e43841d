"""The read side of the memory: ``MemoryView``, an immutable snapshot of the entries, and the
context build over it (``core/context.py`` ranks; the daemon serves reads from a view).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..common.agents import AGENTS
from ..common.limits import CONTEXT_MAX_TOKENS
from . import context as ctx
from . import toolmem
from .injected import strip_injected
from .model import ContextResult, Entry, InputError
from .state import MemoryState, session_tag, validate_session

RESULT_CACHE = 256  # context results kept per snapshot


def view(memory: MemoryState) -> MemoryView:
    """An immutable snapshot for readers (the daemon serves reads from it)."""
    return MemoryView(
        semantic=tuple(memory.semantic_entries()),
        episodic=tuple(memory.episodic_entries()),
        archived=tuple(memory.archived_entries()),
        problem_map=memory.problems(),
        reinforce_on=memory.settings.reinforce_on,
        shown={k: frozenset(v) for k, v in memory.state.shown.items()},
        indexed={
            tool: frozenset(f"{tool}:{name}" for name in info.get("files", ()))
            for tool, info in memory.state.indexes.items()
        },
    )


@dataclass(frozen=True)
class MemoryView:
    """Read side of a ``Memory``: entries as values, and the context build over them."""

    semantic: tuple[Entry, ...]
    episodic: tuple[Entry, ...]
    archived: tuple[Entry, ...]
    problem_map: dict[str, list[str]]
    reinforce_on: str = "injected"
    shown: Mapping[str, frozenset[str]] = field(default_factory=dict)  # session tag -> ids
    # tool -> the sources its own index points to (what it loads); absent: no index known
    indexed: Mapping[str, frozenset[str]] = field(default_factory=dict)
    _index: list[ctx.ContextIndex] = field(default_factory=list, compare=False, repr=False)
    _results: dict[tuple[Any, ...], ContextResult] = field(
        default_factory=dict, compare=False, repr=False
    )

    def semantic_entries(self) -> list[Entry]:
        return list(self.semantic)

    def episodic_entries(self) -> list[Entry]:
        return list(self.episodic)

    def archived_entries(self) -> list[Entry]:
        return list(self.archived)

    def problems(self) -> dict[str, list[str]]:
        return self.problem_map

    def origin_ids(self, tool: str) -> frozenset[str]:
        """The ids of the facts imported from ``tool``'s own memory that it loads itself: for a
        tool with an index (Claude Code's MEMORY.md), only the files the index points to; a
        fact whose index line it lost is one it no longer sees, so it is served (issue 29)."""
        pointed = self.indexed.get(tool)
        return frozenset(
            e.id
            for e in self.semantic
            if toolmem.source_tool(e.origin) == tool and (pointed is None or e.origin in pointed)
        )

    def index(self) -> ctx.ContextIndex:
        if not self._index:  # built once per view, on first use (a race builds it twice: fine)
            self._index.append(
                ctx.ContextIndex(
                    [
                        ctx.Candidate(
                            e.id,
                            e.text,
                            e.confidence,
                            last_referenced=e.last_referenced or "",
                            stated=e.source is not None
                            and e.original_confidence >= ctx.INSTRUCTION_MIN,
                        )
                        for e in self.semantic
                        # a path it names is gone, or a proposal: not served (yet)
                        if e.stale is None and e.proposed is None
                    ],
                    [
                        ctx.Candidate(
                            e.id,
                            e.text,
                            e.confidence,
                            e.salience,
                            last_referenced=e.last_referenced or "",
                            date=e.date,
                        )
                        for e in self.episodic
                    ],
                )
            )
        return self._index[0]

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = CONTEXT_MAX_TOKENS,
        session_id: object = None,
        unseen_only: bool = False,
        for_tool: object = None,
    ) -> ContextResult:
        """``unseen_only`` (a prompt's block; needs ``session_id``): only entries relevant to
        the task or query that no earlier build for this session has shown. ``for_tool`` (an
        agent tool, ``common/agents.AGENTS``): leave out the facts imported from that tool's own
        memory, which it loads itself (issue 20: served back without doubling)."""
        if for_tool is not None and for_tool not in AGENTS:
            raise InputError(f"for_tool must be one of {', '.join(AGENTS)}, got {for_tool!r}")
        for name, value in (("task", task), ("query", query)):
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name} must be a string, got {type(value).__name__}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise InputError(f"max_tokens must be a whole number >= 0, got {max_tokens!r}")
        if session_id is not None:
            validate_session(session_id)
        if not isinstance(unseen_only, bool):
            raise InputError(f"unseen_only must be true or false, got {unseen_only!r}")
        if unseen_only and session_id is None:
            raise InputError("unseen_only needs a session_id")
        if isinstance(task, str):
            # A prompt as the task may carry the memory's own block (Gemini's BeforeAgent):
            # relevance to it would reference every injected entry. The person's words only.
            task = strip_injected(task) or None
        exclude: frozenset[str] = frozenset()
        if unseen_only:
            exclude = self.shown.get(session_tag(str(session_id)), frozenset())
        if for_tool is not None:
            exclude = exclude | self.origin_ids(str(for_tool))
        # A view never changes, so the same question always has the same answer.
        key = (task, query, max_tokens, unseen_only, exclude)
        cached = self._results.get(key)
        if cached is None:
            cached = self.index().build(
                task,  # type: ignore[arg-type]
                query,  # type: ignore[arg-type]
                max_tokens,
                self.reinforce_on,
                relevant_only=unseen_only,
                exclude=exclude,
            )
            if len(self._results) >= RESULT_CACHE:
                self._results.clear()
            self._results[key] = cached
        return cached

    def summary(self) -> dict[str, Any]:
        return {
            "semantic": len(self.semantic),
            "episodic": len(self.episodic),
            "archived": len(self.archived),
            "flagged": sum(1 for e in self.semantic + self.episodic if e.state != "active"),
            "problems": self.problem_map,
        }
