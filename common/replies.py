"""The shapes of the op replies ``Client`` returns, as ``TypedDict``s: plain dicts on the wire
and at run time (the wire format is docs/protocol.md), typed for callers. Replies whose shape
is a core report's ``to_dict()`` (``status``, ``initialize``, ``save_semantic``,
``maintenance``) stay ``dict[str, Any]``. Standard library only."""

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


class ShutdownReply(TypedDict):
    stopping: bool
    pid: int
