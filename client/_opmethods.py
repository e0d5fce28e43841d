"""``OpMethods``: one typed method per protocol op, each a thin call of ``call``.

``Client`` (``_client.py``) supplies ``call`` and the dispatch (daemon, direct mode, the timeout
policy); the MCP tools are typed against this interface.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..common.replies import (
        ContextReply,
        EntriesReply,
        EntryReply,
        ForgetReply,
        HelloReply,
        LogReply,
        MaintenanceReply,
        PingReply,
        ProjectsReply,
        RegisterReply,
        SaveSemanticReply,
        SearchReply,
        ShutdownReply,
        SignalsReply,
        StatusReply,
        UnregisterReply,
    )
    from ..core.memory import Settings

Result = dict[str, Any]


def _drop_none(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


class OpMethods:
    """One typed method per protocol op, each a thin call of ``call`` (``Client`` supplies it
    and the dispatch: daemon, direct mode, the timeout policy)."""

    project: str | None

    def call(
        self,
        op: str,
        args: Mapping[str, Any] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> Result:
        raise NotImplementedError

    def core_settings(self) -> Settings:
        """The core settings a read in this process runs with (``Client`` reads config.toml)."""
        raise NotImplementedError

    def _call_or_read(
        self, op: str, args: dict[str, Any], project: str | os.PathLike[str] | None
    ) -> Result:
        raise NotImplementedError

    def _project_path(self, project: str | os.PathLike[str] | None) -> str:
        raise NotImplementedError

    def hello(self) -> HelloReply:
        return cast("HelloReply", self.call("hello"))

    def ping(self) -> PingReply:
        return cast("PingReply", self.call("ping"))

    def status(self) -> StatusReply:
        return cast("StatusReply", self.call("status"))

    def register(self, path: str | os.PathLike[str] | None = None) -> RegisterReply:
        target = self._project_path(path)
        return cast("RegisterReply", self.call("register", {"path": target}))

    def unregister(self, path: str | os.PathLike[str] | None = None) -> UnregisterReply:
        target = self._project_path(path)
        return cast("UnregisterReply", self.call("unregister", {"path": target}, project=target))

    def projects(self, *, direct_when_down: bool = False) -> ProjectsReply:
        """The registered projects. ``direct_when_down``: when no daemon answers, read its
        registry file instead, with the function the daemon answers with (``statefiles``)."""
        if direct_when_down:
            return cast("ProjectsReply", self._call_or_read("projects", {}, None))
        return cast("ProjectsReply", self.call("projects"))

    def initialize(
        self, session_id: str | None = None, *, project: str | os.PathLike[str] | None = None
    ) -> Result:
        return self.call("initialize", _drop_none(session_id=session_id), project=project)

    def build_context(
        self,
        task: str | None = None,
        query: str | None = None,
        max_tokens: int | None = None,
        session_id: str | None = None,
        *,
        unseen_only: bool | None = None,
        for_tool: str | None = None,
        project: str | os.PathLike[str] | None = None,
    ) -> ContextReply:
        """``for_tool``: the agent tool the context is for (``claude`` …): facts imported from
        that tool's own memory are left out (it loads them itself)."""
        args = _drop_none(
            task=task,
            query=query,
            max_tokens=max_tokens,
            session_id=session_id,
            unseen_only=unseen_only,
            for_tool=for_tool,
        )
        return cast("ContextReply", self.call("build_context", args, project=project))

    def save_semantic(
        self,
        fact: str,
        category: str,
        confidence: float | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> SaveSemanticReply:
        args = _drop_none(fact=fact, category=category, confidence=confidence)
        return cast("SaveSemanticReply", self.call("save_semantic", args, project=project))

    def save_episodic(
        self,
        context: str,
        session_id: str,
        confidence: float | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> EntryReply:
        args = _drop_none(context=context, session_id=session_id, confidence=confidence)
        return cast("EntryReply", self.call("save_episodic", args, project=project))

    def save_session_note(
        self,
        note: str,
        session_id: str,
        confidence: float | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> Result:
        """The episodic note a session leaves; a second note for the same id replaces it."""
        args = _drop_none(note=note, session_id=session_id, confidence=confidence)
        return self.call("save_session_note", args, project=project)

    def detect_signals(
        self,
        user_message: str,
        assistant_response: str | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> SignalsReply:
        args = _drop_none(user_message=user_message, assistant_response=assistant_response)
        return cast("SignalsReply", self.call("detect_signals", args, project=project))

    def reinforce(
        self,
        entry_id: str,
        confirmed: bool = False,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> EntryReply:
        return cast(
            "EntryReply",
            self.call("reinforce", {"entry_id": entry_id, "confirmed": confirmed}, project=project),
        )

    def maintenance(
        self,
        dry_run: bool = False,
        decisions: Mapping[str, str] | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> MaintenanceReply:
        args: dict[str, Any] = {"dry_run": dry_run}
        if decisions is not None:
            args["decisions"] = dict(decisions)
        return cast("MaintenanceReply", self.call("maintenance", args, project=project))

    def end_session(
        self,
        session_id: str | None = None,
        transcript_path: str | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> Result:
        """Hand a session's end to the daemon: it acknowledges at once, then distils the
        transcript into the session's note and runs the project's maintenance on its writer.
        Needs the daemon (``DaemonNotRunning`` otherwise: the caller does it itself)."""
        args = _drop_none(session_id=session_id, transcript_path=transcript_path)
        return self.call("end_session", args, project=project)

    def import_tool_memories(
        self,
        tools: list[str] | None = None,
        dry_run: bool = False,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> Result:
        """Import what the agent tools' own memories hold for the project (read only there);
        the tools' folders are found under this process's home directory."""
        from pathlib import Path

        args: dict[str, Any] = {"dry_run": dry_run, "home": str(Path.home())}
        if tools is not None:
            args["tools"] = list(tools)
        return self.call("import_tool_memories", args, project=project)

    def forget(
        self,
        entry_ids: Sequence[str] | None = None,
        *,
        match: str | None = None,
        dry_run: bool = False,
        project: str | os.PathLike[str] | None = None,
    ) -> ForgetReply:
        """Remove entries (by id, or every entry whose text contains ``match``) and every copy
        of their text from the memory files; ``dry_run`` lists what would go."""
        args: dict[str, Any] = {"dry_run": dry_run}
        if entry_ids is not None:
            args["entry_ids"] = list(entry_ids)
        if match is not None:
            args["match"] = match
        return cast("ForgetReply", self.call("forget", args, project=project))

    def entries(
        self, sector: str | None = None, *, project: str | os.PathLike[str] | None = None
    ) -> EntriesReply:
        return cast(
            "EntriesReply", self.call("entries", _drop_none(sector=sector), project=project)
        )

    def search(
        self,
        query: str,
        limit: int | None = None,
        sector: str | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
    ) -> SearchReply:
        """Entries matching ``query``, best first: ``{"query", "results": [Entry + score]}``."""
        args = _drop_none(query=query, limit=limit, sector=sector)
        return cast("SearchReply", self.call("search", args, project=project))

    def log(
        self,
        limit: int | None = None,
        *,
        project: str | os.PathLike[str] | None = None,
        direct_when_down: bool = False,
    ) -> LogReply:
        """The project's journal, newest last. ``direct_when_down``: when no daemon answers
        (or it does not own the project), read the journal file instead, with the function the
        daemon answers with (``statefiles``)."""
        args = _drop_none(limit=limit)
        if direct_when_down:
            return cast("LogReply", self._call_or_read("log", args, project))
        return cast("LogReply", self.call("log", args, project=project))

    def shutdown(self) -> ShutdownReply:
        return cast("ShutdownReply", self.call("shutdown"))
