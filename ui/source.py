"""What the page shows, read through the same paths as ``maestroctl``; no file writes here.

Every read and every write goes through ``Client``: through the daemon when it runs, else in
direct mode (the same op handlers, under the same project lock). The registry of projects (for
the switcher) and the project's journal (for the chart) are the ``projects`` and ``log`` ops;
when no daemon runs, ``Client`` reads the daemon's files with the functions the daemon answers
those ops with (``direct_when_down=True``, ``common/statefiles.py``). Review decisions are the
same ``maintenance`` op ``maestroctl review --apply`` sends.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client import Client
from ..client.errors import MaestroError, RequestError
from ..common.limits import CONTEXT_MAX_TOKENS
from ..common.replies import MaintenanceReply
from ..common.statefiles import journal_name
from ..core.context import semantic_band
from ..core.store import MemoryStore

JOURNAL_LIMIT = 1000  # journal records read for the chart: the newest, the log op's maximum


class UnknownProject(MaestroError, ValueError):
    """A project the page was not started for and the daemon does not know."""


@dataclass
class Source:
    """The memory of the projects the page may show: the start project and registered ones."""

    start_project: str
    client: Client
    context_budget: int = CONTEXT_MAX_TOKENS
    _extra: set[str] = field(default_factory=set)

    # -- projects ------------------------------------------------------------------------------
    def projects(self) -> list[str]:
        items = self.client.projects(direct_when_down=True).get("projects") or []
        found = [str(p["path"]) for p in items if isinstance(p, dict) and "path" in p]
        ordered = [self.start_project] + [p for p in sorted(found) if p != self.start_project]
        return ordered

    def check(self, project: str | None) -> str:
        """``project`` if the page may show it (default: the start project), else raise."""
        if project is None or project == "" or project == self.start_project:
            return self.start_project
        if project in self.projects():
            return project
        raise UnknownProject(f"{project!r} is neither the start project nor registered")

    def via(self) -> str:
        return "daemon" if self.client.daemon_running() else "direct"

    def capabilities(self) -> dict[str, bool]:
        # ``forget`` appears when the client grows the op (another change adds it).
        return {"forget": callable(getattr(self.client, "forget", None))}

    # -- reads ---------------------------------------------------------------------------------
    def _entries(self, project: str, sector: str | None) -> dict[str, Any]:
        return dict(self.client.entries(sector, project=project))

    def overview(self, project: str) -> dict[str, Any]:
        live = self._entries(project, None)
        archived = self._entries(project, "archive")
        review = self.client.maintenance(dry_run=True, project=project)
        context = self.client.build_context(max_tokens=self.context_budget, project=project)
        reinforced = self._last_reinforced(project)
        entries = [
            {**self._decorate(e), "last_reinforced": reinforced.get(str(e.get("id")))}
            for e in live.get("entries") or []
        ]
        return {
            "project": project,
            "via": self.client.last_via,
            "semantic": [e for e in entries if e.get("sector") == "semantic"],
            "episodic": [e for e in entries if e.get("sector") == "episodic"],
            "archive": [{**e, "band": "archived"} for e in archived.get("entries") or []],
            "problems": live.get("problems") or {},
            "review": review.get("proposals") or [],
            "context": {
                "text": context.get("context") or "",
                "tokens": context.get("tokens", 0),
                "budget": self.context_budget,
                "included": context.get("included") or [],
            },
            "version": self.version(project),
        }

    @staticmethod
    def _decorate(entry: dict[str, Any]) -> dict[str, Any]:
        if entry.get("sector") == "semantic" and entry.get("stale"):
            return {**entry, "band": "stale"}  # out of every band until reviewed
        if entry.get("sector") == "semantic" and entry.get("proposed"):
            return {**entry, "band": "proposed"}  # kept, not served until confirmed
        if entry.get("sector") == "semantic":
            return {**entry, "band": semantic_band(float(entry.get("confidence", 0.0)))}
        return entry

    def search(self, project: str, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """The ``search`` op: the ranking ``maestroctl search`` and the MCP tool show."""
        found = self.client.search(query, limit, project=project).get("results") or []
        return [
            {
                "entry": self._decorate({k: v for k, v in e.items() if k != "score"}),
                "score": round(float(e.get("score") or 0.0), 4),
            }
            for e in found
        ]

    def history(self, project: str, entry_id: str) -> list[dict[str, Any]]:
        """The (time, confidence, salience) points of one entry, oldest first, from the journal."""
        points: list[dict[str, Any]] = []
        for rec in self._journal(project):
            for change in rec.get("changes") or []:
                if not isinstance(change, dict) or change.get("id") != entry_id:
                    continue
                after = change.get("after")
                points.append(
                    {
                        "time": rec.get("time"),
                        "op": rec.get("op"),
                        "confidence": None if after is None else after.get("confidence"),
                        "salience": None if after is None else after.get("salience"),
                    }
                )
        return points

    def _last_reinforced(self, project: str) -> dict[str, str]:
        """entry id -> the time of the last journalled change that raised its scores."""
        out: dict[str, str] = {}
        for rec in self._journal(project):
            for change in rec.get("changes") or []:
                if not isinstance(change, dict):
                    continue
                before, after = change.get("before"), change.get("after")
                if not isinstance(before, dict) or not isinstance(after, dict):
                    continue
                rose = [
                    k
                    for k in ("confidence", "salience")
                    if isinstance(after.get(k), int | float)
                    and isinstance(before.get(k), int | float)
                    and after[k] > before[k]
                ]
                if rose and isinstance(rec.get("time"), str):
                    out[str(change.get("id"))] = rec["time"]
        return out

    def _journal(self, project: str) -> list[dict[str, Any]]:
        records = self.client.log(JOURNAL_LIMIT, project=project, direct_when_down=True)
        return [r for r in records.get("records") or [] if isinstance(r, dict)]

    def version(self, project: str) -> str:
        """Changes whenever a memory file (or the project's journal) changes: for live updates."""
        from ..common.ops import resolve_project

        root = resolve_project(project)
        try:  # a refused folder (a link …) is told by every read: here it only has to differ
            sig: object = MemoryStore(root, settings=self.client.core_settings()).file_signature()
        except MaestroError as exc:
            sig = exc.message
        try:
            st = os.stat(Path(self.client.paths.journal_dir) / journal_name(root))
            journal: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            journal = None
        return repr((sig, journal))

    # -- writes (the CLI's ops) -----------------------------------------------------------------
    def decide(self, project: str, entry_id: str, action: str) -> MaintenanceReply:
        # The core checks the action and that the entry is flagged (one copy of that rule).
        return self.client.maintenance(decisions={entry_id: action}, project=project)

    def forget(self, project: str, entry_id: str) -> dict[str, Any]:
        op = getattr(self.client, "forget", None)
        if not callable(op):
            raise RequestError("bad_request", "this version has no 'forget'")
        result = op(entry_id, project=project)
        return result if isinstance(result, dict) else {}
