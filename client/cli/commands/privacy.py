"""``maestroctl forget``, ``maestroctl trust`` and the doctor's secret scan (issue 11)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ...errors import MaestroError
from .. import output as out
from .base import Context, Outcome, UsageProblem, command, memory_outcome

if TYPE_CHECKING:
    from ....common.replies import ForgetReply
    from ....core.memory import Settings

GIT_HISTORY_HELP = (
    "if the files were committed, the value is still in git history: rewrite it with "
    "'git filter-repo' (see GitHub's guide 'Removing sensitive data from a repository'), "
    "and rotate the secret"
)


class ForgetRefused(MaestroError):
    code = "rejected"


def _forget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("entry_ids", nargs="*", metavar="ENTRY_ID", help="ids to forget")
    p.add_argument(
        "--match", metavar="TEXT", help="forget every entry whose text contains TEXT (any case)"
    )
    p.add_argument("--dry-run", action="store_true", help="show what would go, change nothing")
    p.add_argument(
        "--yes", "-y", action="store_true", help="no confirmation when --match finds several"
    )


def _listing(report: ForgetReply) -> str:
    rows = [[e.get("id"), e.get("sector"), e.get("text")] for e in report.get("forgotten") or []]
    return out.table(["ID", "SECTOR", "TEXT"], rows)


def _confirmed(ctx: Context, preview: ForgetReply, count: int) -> bool:
    """Ask a person at a terminal; anything else (a script, --json) must pass --yes."""
    if ctx.json or not sys.stdin.isatty():
        return False
    print(_listing(preview), file=sys.stderr)
    try:
        answer = input(f"Forget these {count} entries for good? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


@command(
    "forget",
    "remove entries and every copy of their text (ids, or --match TEXT)",
    _forget_args,
    description="Remove entries by id, or every entry whose text contains --match TEXT, from "
    "semantic.md, episodic.md and archive.md, and their text from every Maintenance Log line "
    "and the daemon's journal. The log keeps one line with the id and the date. Git history "
    "is not rewritten: see 'maestroctl doctor'.",
)
def cmd_forget(ctx: Context, ns: argparse.Namespace) -> Outcome:
    if bool(ns.entry_ids) == (ns.match is not None):
        raise UsageProblem("give entry ids or --match TEXT (not both)")
    client = ctx.client()
    if ns.entry_ids:
        report = client.forget(ns.entry_ids, dry_run=ns.dry_run)
    else:
        preview = client.forget(match=ns.match, dry_run=True)
        found = preview.get("forgotten") or []
        if ns.dry_run:
            report = preview
        else:
            if len(found) > 1 and not ns.yes and not _confirmed(ctx, preview, len(found)):
                raise ForgetRefused(
                    f"--match {ns.match!r} finds {len(found)} entries; nothing forgotten. "
                    "Check the list and re-run with --yes, or forget by id"
                )
            # Exactly the entries that were shown (and confirmed) go.
            report = client.forget([str(e.get("id")) for e in found])
    entries = report.get("forgotten") or []
    if report.get("dry_run"):
        text = f"Would forget {out.plural(len(entries), 'entry', 'entries')}:\n{_listing(report)}"
    else:
        text = (
            f"Forgot {out.plural(len(entries), 'entry', 'entries')}: "
            f"{', '.join(str(e.get('id')) for e in entries)}. "
            f"The git history of the memory files is not rewritten; see 'maestroctl doctor'."
        )
    return memory_outcome(ctx, report, text)


# -- doctor ------------------------------------------------------------------------------------
def scan_memory_files(project: str, settings: Settings) -> list[dict[str, Any]]:
    """Secrets already in the memory files (written before the screen, or by hand): where
    they are and of which kind, never their value. Read like every read (never through a
    link; ``settings.trusted`` for a folder another user owns), so it raises
    ``UnsafeMemory`` where the memory is refused."""
    from ....core.memory import FILES
    from ....core.secrets import find_secrets
    from ....core.store import MemoryStore

    store = MemoryStore(project, settings=settings)
    memory = store.read()
    found: list[dict[str, Any]] = []
    ids_with_secrets: set[str] = set()
    texts_with_secrets: set[str] = set()
    for kind, doc in memory.docs.items():
        for b in doc.entries():
            text = "\n".join([b.text, *b.body])
            kinds = sorted({f.kind for f in find_secrets(text)})
            if kinds:
                ids_with_secrets.add(b.id)
                texts_with_secrets.add(b.text)
                found.append({"file": FILES[kind], "entry_id": b.id, "kinds": kinds})
    texts = store.file_texts()  # never through a link, like every read
    for name in FILES.values():
        raw = texts.get(name)
        if raw is None:
            continue
        lines = raw.splitlines()
        for number, line in enumerate(lines, 1):
            if any(f"mm:id={i}" in line for i in ids_with_secrets) or any(
                t in line for t in texts_with_secrets
            ):
                continue  # reported above, by entry id
            kinds = sorted({f.kind for f in find_secrets(line)})
            if kinds:
                found.append({"file": name, "line": number, "kinds": kinds})
    return found


def _trust_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", metavar="PATH", help="the project folder whose memory to trust")


@command(
    "trust",
    "trust a project's memory that another user owns or can write, on purpose",
    _trust_args,
    description="Add PATH (a project folder) to [trust] directories in maestrod's config.toml, "
    "like git's safe.directory: its .maestro/ memory is then read and written although "
    "another user owns it or it is writable by others. Links are never followed, trusted or "
    "not. maestrod reads it at its next start (or 'kill -HUP' it); direct mode and the hooks "
    "at once.",
)
def cmd_trust(ctx: Context, ns: argparse.Namespace) -> Outcome:
    from ....common.layout import canonical_project
    from ....common.settings import add_trusted

    folder = canonical_project(ns.folder)
    if not folder.is_dir():
        raise UsageProblem(f"{folder} is not a folder")
    config = ctx.paths.config_path  # a safe MAESTRO_HOME only (resolve_safe)
    added = add_trusted(config, str(folder))
    text = (
        f"Trusted {folder} (in {config}); maestrod reads it at its next start or reload."
        if added
        else f"{folder} is trusted already (in {config})."
    )
    return Outcome({"folder": str(folder), "added": added, "config": str(config)}, text)
