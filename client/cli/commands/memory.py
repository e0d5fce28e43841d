"""The memory commands: ``init``, ``context``, ``save-semantic``, ``save-episodic``, ``detect``,
``reinforce``, ``maintain``, ``review``, ``entries``, ``search``, ``log``."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ....common.agents import AGENTS
from ....common.limits import CONTEXT_MAX_TOKENS
from ...errors import DaemonNotRunning, MaestroError
from .. import output as out
from .base import (
    DECISIONS,
    DEFAULT_CATEGORY,
    DEFAULT_EPISODIC_SESSION,
    EXIT_ERROR,
    EXIT_OK,
    SESSION_ENV,
    Context,
    Outcome,
    UsageProblem,
    _category_words,
    _dict,
    _entry_line,
    command,
    memory_outcome,
)
from .projects import _project_paths

if TYPE_CHECKING:
    from ....common.replies import MaintenanceReply, ProposalInfo


# -- memory ------------------------------------------------------------------------------------
def _session_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--session", metavar="ID", help=what)


def _init_args(p: argparse.ArgumentParser) -> None:
    _session_arg(p, "the session id (default: a new one); the same id decays only once")


@command("init", "start a session: create the files, decay once, flag what fell low", _init_args)
def cmd_init(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().initialize(ns.session)
    lines = [f"Session {r.get('session_id')} started in {out.home_relative(ctx.project)}."]
    if r.get("created"):
        lines.append(f"  created: {', '.join(r['created'])}")
    if r.get("applied", True):
        semantic = out.plural(r.get("semantic_decayed", 0), "semantic entry", "semantic entries")
        episodic = out.plural(r.get("episodic_decayed", 0), "episodic entry", "episodic entries")
        lines.append(f"  decayed: {semantic}, {episodic}")
    else:
        lines.append("  decay: already applied for this session, nothing changed")
    if r.get("pruned"):
        pruned = out.plural(len(r["pruned"]), "episodic entry", "episodic entries")
        lines.append(f"  pruned: {pruned}")
    if r.get("flagged"):
        lines.append(f"  flagged for review: {len(r['flagged'])} (see 'maestroctl review')")
    return memory_outcome(ctx, r, "\n".join(lines))


def _context_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--task",
        metavar="TEXT",
        help="the task at hand (medium-confidence entries relevant to it are included)",
    )
    p.add_argument(
        "--query",
        metavar="TEXT",
        help="a search; matching entries are included even at low confidence",
    )
    p.add_argument(
        "--max-tokens", type=int, metavar="N", help=f"token budget (default: {CONTEXT_MAX_TOKENS})"
    )
    _session_arg(p, "the session id: the entries selected for relevance are reinforced")
    p.add_argument(
        "--for",
        dest="for_tool",
        choices=AGENTS,
        help="the tool the context is for: facts imported from its own memory are left out",
    )


@command(
    "context",
    "print the memory context block to inject into an agent's prompt",
    _context_args,
    description="Print the memory context block to inject into an agent's prompt; prints "
    "nothing when the memory is empty.",
)
def cmd_context(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.max_tokens is not None and ns.max_tokens < 0:  # 0 is a budget: nothing fits
        raise UsageProblem(f"--max-tokens must be 0 or more, got {ns.max_tokens}")
    r = ctx.client().build_context(
        ns.task, ns.query, ns.max_tokens, ns.session, for_tool=ns.for_tool
    )
    return memory_outcome(ctx, r, str(r.get("context") or ""))


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0.0 and 1.0, got {text}")
    return value


def _save_semantic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", metavar="TEXT", help="the fact, in one line")
    p.add_argument(
        "--category",
        metavar="C",
        default=DEFAULT_CATEGORY,
        help="user_preference, architecture_decision, quality_rule or "
        f"project_context (default: {DEFAULT_CATEGORY})",
    )
    p.add_argument(
        "--confidence",
        type=_confidence,
        metavar="X",
        help="0.0 to 1.0 (default: 0.5, the spec's default)",
    )


@command("save-semantic", "add a long-term fact (replaces one it contradicts)", _save_semantic_args)
def cmd_save_semantic(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().save_semantic(ns.text, ns.category, ns.confidence)
    entry = r.get("entry") or {}
    action = r.get("action")
    where = _category_words(entry.get("category") or ns.category)
    if action == "added":
        text = f"Saved to semantic memory ({where}) as {entry.get('id')}, {_entry_line(entry)}."
        if float(entry.get("confidence") or 0.0) >= 0.9 and entry.get("source") is None:
            # issue 35 point 5: an agent runs maestroctl too, so a CLI save never poses as
            # the person; say plainly what it became and how a person makes it theirs.
            text += (
                " It is served as a fact to weigh, not as your standing instruction: to make"
                " it one, write it in .maestro/memory/semantic.md yourself or say it in a"
                ' prompt ("from now on …").'
            )
    elif action == "replaced":
        old = r.get("replaced") or {}
        text = (
            f"Saved to semantic memory ({where}) as {entry.get('id')}, "
            f'{_entry_line(entry)}; it replaces {old.get("id")}: "{old.get("text")}".'
        )
    elif action == "reinforced":
        text = f"Already known as {entry.get('id')}; reinforced: {_entry_line(entry)}."
    else:
        text = f"Not saved: {r.get('reason') or 'the memory refused it'}."
    if r.get("removed") and action != "rejected":
        text += f" ({r['removed']}: they would show differently to a person and to the model)"
    return memory_outcome(ctx, r, text)


def _save_episodic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", metavar="TEXT", help="what happened in this session")
    _session_arg(p, f"the session id (default: ${SESSION_ENV}, else '{DEFAULT_EPISODIC_SESSION}')")
    p.add_argument(
        "--confidence",
        type=_confidence,
        metavar="X",
        help="0.0 to 1.0 (default: 0.7, the spec's default)",
    )


@command(
    "save-episodic", "add session context (salience 1.0, decays each session)", _save_episodic_args
)
def cmd_save_episodic(ctx: Context, ns: argparse.Namespace) -> Outcome:
    session = ns.session or os.environ.get(SESSION_ENV) or DEFAULT_EPISODIC_SESSION
    r = ctx.client().save_episodic(ns.text, session, ns.confidence)
    entry = r.get("entry") or {}
    text = (
        f"Saved to episodic memory as {entry.get('id')} (session "
        f"{entry.get('session_id', session)}), {_entry_line(entry)}."
    )
    if r.get("removed"):
        text += f" ({r['removed']}: they would show differently to a person and to the model)"
    return memory_outcome(ctx, r, text)


def _detect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, metavar="TEXT", help="the user's message")
    p.add_argument("--assistant", metavar="TEXT", help="the assistant's response")


@command("detect", "find preferences and corrections in a turn and save them", _detect_args)
def cmd_detect(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().detect_signals(ns.user, ns.assistant)
    signals = r.get("signals") or []
    if not signals:
        return memory_outcome(ctx, r, "No memory signal in that message; nothing saved.")
    rows = [
        [
            s.get("action"),
            s.get("confidence"),
            _category_words(s.get("category")),
            s.get("entry_id"),
            s.get("verdict", ""),
            s.get("fact"),
            s.get("reason", ""),
        ]
        for s in signals
    ]
    head = ["ACTION", "CONF", "CATEGORY", "ENTRY", "VERDICT", "FACT", "WHY"]
    return memory_outcome(ctx, r, out.table(head, rows))


def _reinforce_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("entry_id", metavar="ID", help="the entry id (see 'maestroctl entries')")
    p.add_argument(
        "--confirm",
        action="store_true",
        help="a person confirmed it (for semantic entries: confidence + 0.1)",
    )


@command("reinforce", "boost an entry that was referenced or confirmed", _reinforce_args)
def cmd_reinforce(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().reinforce(ns.entry_id, ns.confirm)
    entry = r.get("entry") or {}
    return memory_outcome(
        ctx, r, f"Reinforced {entry.get('id', ns.entry_id)}: {_entry_line(entry)}."
    )


def _maintenance_text(report: MaintenanceReply, project: str) -> str:
    where = out.home_relative(project)
    proposals = report.get("proposals") or []
    if report.get("dry_run"):
        if not proposals:
            return f"{where}: nothing to maintain (no entry is below the thresholds)."
        return (
            f"{where}: {out.plural(len(proposals), 'entry', 'entries')} would be handled "
            "(dry run, nothing changed):\n" + _proposal_table(proposals)
        )
    counts = report.get("counts") or {}
    waiting = [p for p in proposals if p.get("action") in WAITING]
    wait = (
        f"  {out.plural(len(waiting), 'entry names', 'entries name')} a path that is gone: "
        "waiting for your decision ('maestroctl review')."
    )
    if not report.get("applied"):
        done = f"{where}: nothing to maintain (no entry is below the thresholds)."
        return done + ("\n" + wait if waiting else "")
    lines = [
        f"{where}: removed {counts.get('remove', 0)}, archived {counts.get('archive', 0)}, "
        f"reinforced {counts.get('reinforce', 0)}."
    ]
    lines += [f"  {line.lstrip('-').strip()}" for line in report.get("log_lines") or []]
    if waiting:
        lines.append(wait)
    return "\n".join(lines)


def _proposal_table(proposals: list[ProposalInfo]) -> str:
    rows = []
    for p in proposals:
        e = p.get("entry") or {}
        rows.append(
            [
                e.get("id"),
                e.get("sector"),
                e.get("confidence"),
                e.get("salience"),
                p.get("action"),
                p.get("reason"),
                e.get("text"),
            ]
        )
    return out.table(["ID", "SECTOR", "CONF", "SAL", "PROPOSED", "REASON", "TEXT"], rows)


def _maintain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--all",
        action="store_true",
        help="every project registered with maestrod (needs the daemon)",
    )
    p.add_argument("--dry-run", action="store_true", help="show the proposals, change nothing")


@command(
    "maintain", "act on low-confidence entries (remove / archive), logging each", _maintain_args
)
def cmd_maintain(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if not ns.all:
        report = client.maintenance(dry_run=ns.dry_run)
        return memory_outcome(ctx, report, _maintenance_text(report, ctx.project))
    try:
        listing = client.projects()
    except DaemonNotRunning:
        raise DaemonNotRunning(
            "'maintain --all' needs maestrod, which keeps the list of "
            "registered projects; start it ('maestroctl start') or run "
            "'maintain' in one project"
        ) from None
    projects = _project_paths(listing)
    gone = {
        str(item["path"]): str(item["missing"])
        for item in listing.get("projects") or []
        if isinstance(item, dict) and item.get("missing")  # statefiles.missing, the one rule
    }
    results: list[dict[str, Any]] = []
    lines = []
    for path in projects:
        if path in gone:  # never re-created: skipped and reported
            results.append({"project": path, "ok": True, "missing": gone[path]})
            lines.append(f"{out.home_relative(path)}: MISSING, skipped: {gone[path]}")
            continue
        try:
            report = client.maintenance(dry_run=ns.dry_run, project=path)
        except MaestroError as exc:
            results.append(
                {"project": path, "ok": False, "error": {"code": exc.code, "message": exc.message}}
            )
            lines.append(f"{out.home_relative(path)}: FAILED: {exc.message}")
            continue
        results.append({"project": path, "ok": True, "report": report})
        lines.append(_maintenance_text(report, path))
    if not projects:
        lines.append("No projects registered: nothing to maintain.")
    failed = sum(1 for r in results if not r["ok"])
    return Outcome(
        {"projects": results, "failed": failed},
        "\n".join(lines),
        exit_code=EXIT_ERROR if failed else EXIT_OK,
        via="daemon",
    )


def _review_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--apply",
        nargs=2,
        metavar=("ID", "ACTION"),
        help="apply one decision: ACTION is remove, archive or reinforce (for an entry naming "
        "a path that is gone: keep it), or rewrite (put the path git saw it renamed to in the "
        "text)",
    )


_PAST = {
    "remove": "Removed",
    "archive": "Archived",
    "reinforce": "Reinforced",
    "rewrite": "Rewrote",
}
# Proposals for an entry naming a path that is gone (core/evidence.py): they wait for a person.
WAITING = ("rewrite", "review")


@command(
    "review", "list flagged entries with proposals, or --apply a decision for one", _review_args
)
def cmd_review(ctx: Context, ns: argparse.Namespace) -> Outcome:
    client = ctx.client()
    if ns.apply is None:
        report = client.maintenance(dry_run=True)
        proposals = report.get("proposals") or []
        if not proposals:
            return memory_outcome(ctx, report, "No entries need review.")
        text = (
            _proposal_table(proposals) + "\n\nApply one: maestroctl review --apply ID "
            "remove|archive|reinforce|rewrite"
        )
        return memory_outcome(ctx, report, text)
    entry_id, action = ns.apply
    if action not in DECISIONS:
        raise UsageProblem(f"ACTION must be one of {', '.join(DECISIONS)}, got {action!r}")
    report = client.maintenance(decisions={entry_id: action})
    applied = report["applied"]
    entry = applied[0]["entry"] if applied else {}
    text = f'{_PAST[action]} {entry.get("id", entry_id)}: "{entry.get("text", "")}".'
    if action == "rewrite" and report.get("log_lines"):
        text += "\n  " + str(report["log_lines"][0]).lstrip("-").strip()
    return memory_outcome(ctx, report, text)


def _entries_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sector",
        choices=("semantic", "episodic", "archive"),
        help="only this sector (default: semantic and episodic)",
    )
    _wide_arg(p)


def _wide_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--wide",
        action="store_true",
        help="one line per entry, whole texts, even in a terminal (piped output is "
        "never cut or wrapped)",
    )


def _overflow(ns: argparse.Namespace) -> str | None:
    return "none" if ns.wide else None  # None: wrap in a terminal, whole when piped


def _entry_row(e: dict[str, Any]) -> list[Any]:
    return [
        e.get("id"),
        e.get("sector"),
        _category_words(e.get("category"))
        if e.get("sector") == "semantic"
        else e.get("session_id"),
        out.score(e.get("confidence")),
        e.get("salience"),
        e.get("date"),
        e.get("state"),
        e.get("origin") or "-",  # the agent tool's memory file it was imported from
    ]


ENTRY_HEADERS = [
    "ID",
    "SECTOR",
    "CATEGORY/SESSION",
    "CONFIDENCE",
    "SAL",
    "DATE",
    "STATE",
    "ORIGIN",
]


@command(
    "entries",
    "list the memory entries with their ids and scores",
    _entries_args,
    description="List the memory entries with their ids and scores. In a terminal long "
    "texts wrap; piped or redirected, every text is printed whole (--json for scripts).",
)
def cmd_entries(ctx: Context, ns: argparse.Namespace) -> Outcome:
    r = ctx.client().entries(ns.sector)
    entries = r.get("entries") or []
    problems = _dict(r.get("problems"))
    notice = "\n".join(
        f"warning: {name}: {item}" for name, items in problems.items() for item in items
    )
    if not entries:
        return memory_outcome(ctx, r, "No entries.", notice)
    rows = [[*_entry_row(e), e.get("text")] for e in entries]
    text = out.table([*ENTRY_HEADERS, "TEXT"], rows, overflow=_overflow(ns))
    stale = [f"stale {e.get('id')}: {e['stale']}" for e in entries if e.get("stale")]
    if stale:  # out of the context until reviewed (core/evidence.py)
        stale.append("Not served as fact until reviewed: 'maestroctl review'.")
        text += "\n\n" + "\n".join(stale)
    return memory_outcome(ctx, r, text, notice)


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="words to look for (free text)")
    p.add_argument(
        "--all",
        action="store_true",
        help="search every project registered with maestrod (needs the daemon)",
    )
    p.add_argument(
        "--sector",
        choices=("semantic", "episodic", "archive"),
        help="only this sector (default: semantic and episodic)",
    )
    p.add_argument(
        "--limit", type=int, metavar="N", help="at most N results per project (default: 20)"
    )
    _wide_arg(p)


@command(
    "search",
    "find entries by relevance to a query (best first)",
    _search_args,
    description="Rank the entries by relevance to QUERY (BM25, stemmed words; "
    "the same ranking as the MCP search tool and the ui) and list the matches, best first.",
)
def cmd_search(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.limit is not None and ns.limit < 0:  # 0 is a limit: no results
        raise UsageProblem(f"--limit must be 0 or more, got {ns.limit}")
    client = ctx.client()
    if not ns.all:
        r = client.search(ns.query, ns.limit, ns.sector)
        results = r.get("results") or []
        if not results:
            return memory_outcome(ctx, r, f"No entry matches {ns.query!r}.")
        rows = [[i, *_entry_row(e), e.get("text")] for i, e in enumerate(results, 1)]
        text = out.table(["#", *ENTRY_HEADERS, "TEXT"], rows, overflow=_overflow(ns))
        return memory_outcome(ctx, r, text)
    try:
        projects = _project_paths(client.projects())
    except DaemonNotRunning:
        raise DaemonNotRunning(
            "'search --all' needs maestrod, which keeps the list of registered projects; "
            "start it ('maestroctl start') or search one project"
        ) from None
    found: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for path in projects:
        try:
            r = client.search(ns.query, ns.limit, ns.sector, project=path)
        except MaestroError as exc:
            failures.append({"project": path, "error": {"code": exc.code, "message": exc.message}})
            continue
        found += [{**e, "project": path} for e in r.get("results") or []]
    # Each project ranks in its own index; their scores are merged as they are.
    found.sort(key=lambda e: -float(e.get("score") or 0.0))
    lines = [
        f"{out.home_relative(f['project'])}: FAILED: {f['error']['message']}" for f in failures
    ]
    if found:
        rows = [
            [i, out.home_relative(e["project"]), *_entry_row(e), e.get("text")]
            for i, e in enumerate(found, 1)
        ]
        lines.insert(
            0, out.table(["#", "PROJECT", *ENTRY_HEADERS, "TEXT"], rows, overflow=_overflow(ns))
        )
    else:
        lines.insert(0, f"No entry in {out.plural(len(projects), 'project')} matches {ns.query!r}.")
    return Outcome(
        {"query": ns.query, "results": found, "failed": failures},
        "\n".join(lines),
        exit_code=EXIT_ERROR if failures else EXIT_OK,
        via="daemon",
    )


def _log_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, metavar="N", help="the N latest records")


def _changes_text(record: dict[str, Any]) -> str:
    parts = []
    for change in record.get("changes") or []:
        if not isinstance(change, dict):
            continue
        before, after = change.get("before"), change.get("after")
        if before is None:
            parts.append(f"+{change.get('id')}")
        elif after is None:
            parts.append(f"-{change.get('id')}")
        else:
            parts.append(
                f"{change.get('id')} {before.get('confidence', 0):.2f}→"
                f"{after.get('confidence', 0):.2f}"
            )
    if not parts and record.get("entries"):
        parts = [str(e) for e in record["entries"]]
    return ", ".join(parts) or "-"


@command("log", "show the project's journal: who changed what, and when", _log_args)
def cmd_log(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if ns.limit is not None and ns.limit <= 0:
        raise UsageProblem(f"--limit must be a positive number, got {ns.limit}")
    r = ctx.client().log(ns.limit)
    records = next((v for k, v in r.items() if isinstance(v, list)), [])
    if not records:
        return Outcome(r, "The journal is empty.", via="daemon", project=ctx.project)
    rows = [
        [
            out.local_time(rec.get("time")),
            rec.get("op"),
            rec.get("session_id"),
            rec.get("pid"),
            _changes_text(rec),
        ]
        for rec in records
        if isinstance(rec, dict)
    ]
    return Outcome(
        r,
        out.table(["TIME", "OP", "SESSION", "PID", "CHANGES"], rows),
        via="daemon",
        project=ctx.project,
    )
