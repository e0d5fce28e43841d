"""The shapes of the op replies ``Client`` returns, as ``TypedDict``s: plain dicts on the wire
and at run time (the wire format is docs/protocol.md), typed for callers. The replies that are
a core report's ``to_dict()`` (``save_semantic``: ``SaveResult``, ``maintenance``:
``MaintenanceReport``, ``forget``: ``ForgetReport``) have their report's fields; an entry
stays ``dict[str, Any]`` (``Entry.to_dict()``). ``tests/client/test_reply_shapes.py`` holds
each against a real reply. Standard library only."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class HelloReply(TypedDict):
    versions: list[int]
    version: str
    pid: int


class PingReply(TypedDict):
    pong: bool
    time: float


class RegisterReply(TypedDict):
    path: str
    added: bool
    memory_dir: str


class UnregisterReply(TypedDict):
    path: str
    removed: bool


class ProjectInfo(TypedDict):
    path: str
    memory_dir: str
    memory_dir_exists: bool
    exists: bool
    missing: str | None  # common/statefiles.missing: why it is missing, or None


class ProjectsReply(TypedDict):
    projects: list[ProjectInfo]


class ContextReply(TypedDict):
    context: str
    tokens: int
    included: list[str]
    relevant: list[str]


class EntryReply(TypedDict):
    """``save_episodic`` and ``reinforce``: the entry as it now is (and, for a save, the
    hidden characters removed from it: "removed 1 control character (ESC)")."""

    entry: dict[str, Any]
    removed: NotRequired[str]


class SignalsReply(TypedDict):
    signals: list[dict[str, Any]]


class EntriesReply(TypedDict):
    entries: list[dict[str, Any]]
    problems: Any


class LogReply(TypedDict):
    records: list[dict[str, Any]]


class SaveSemanticReply(TypedDict):
    """``save_semantic``: what happened (added, reinforced, replaced, rejected ...) and why."""

    action: str
    entry: dict[str, Any] | None
    replaced: dict[str, Any] | None
    reason: str
    screened: bool
    may_replace: str | None  # added, linked to the older entry it may replace (both kept)
    removed: NotRequired[str]  # the hidden characters taken out of the fact, when any


class ProposalInfo(TypedDict):
    entry: dict[str, Any]
    action: str  # remove, archive, reinforce, rewrite, review
    reason: str


class MaintenanceReply(TypedDict):
    dry_run: bool
    proposals: list[ProposalInfo]
    applied: list[ProposalInfo]
    log_lines: list[str]
    counts: dict[str, int]


class ForgetReply(TypedDict):
    dry_run: bool
    forgotten: list[dict[str, Any]]
    log_lines: list[str]
    scrubbed_lines: int


class SearchReply(TypedDict):
    """``search``: the query and its results, best first (each an entry with its ``score``)."""

    query: str
    results: list[dict[str, Any]]


class StartedInfo(TypedDict):
    at: str
    by: str
    detail: str


class StatusReply(TypedDict):
    """``status`` (the daemon's): its process, traffic, writer, schedule and projects."""

    version: str
    versions: list[int]
    endpoint: str
    process: dict[str, Any]
    requests: dict[str, Any]
    write_queue_depth: int
    writer: dict[str, Any]
    maintenance: dict[str, Any]
    projects: dict[str, dict[str, Any]]
    stopping: bool
    started: StartedInfo
    log: dict[str, Any]


class ShutdownReply(TypedDict):
    stopping: bool
    pid: int
