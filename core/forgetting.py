"""Forgetting on request: find entries by text, remove them by id from every file, and scrub
their text out of every Maintenance Log line and archive note.

Functions over a ``MemoryState`` (public calls only).
"""

from __future__ import annotations

from .markdown import EntryBlock, FileKind, RawBlock
from .model import Entry, ForgetReport, InputError, NotFoundError, Sector, validate_text
from .secrets import redact
from .state import MemoryState, log_quote

FORGOTTEN_MARK = "[forgotten]"


def matching(memory: MemoryState, needle: object) -> list[Entry]:
    """Entries (live and archived) whose text contains ``needle``, case-insensitively."""
    probe = validate_text(needle, name="match").casefold()
    return [
        e
        for e in memory.semantic_entries() + memory.episodic_entries() + memory.archived_entries()
        if probe in e.text.casefold()
    ]


def forget(memory: MemoryState, entry_ids: object, dry_run: bool = False) -> ForgetReport:
    """Remove entries by id from every file, and their text from every Maintenance Log line
    and archive note; one log line per entry records the id and date, not the text. The one
    deletion the memory makes on request: nothing of the text is kept."""
    if not isinstance(dry_run, bool):
        raise InputError(f"dry_run must be true or false, got {dry_run!r}")
    if isinstance(entry_ids, str) or not isinstance(entry_ids, list | tuple) or not entry_ids:
        raise InputError("entry_ids must be a non-empty list of entry ids")
    found: dict[str, list[tuple[FileKind, EntryBlock]]] = {}
    for eid in entry_ids:
        if not isinstance(eid, str) or not eid:
            raise InputError(f"entry ids must be non-empty strings, got {eid!r}")
        blocks = memory.blocks_with_id(eid)
        if not blocks:
            raise NotFoundError(f"no entry with id {eid!r}")  # before anything changes
        found[eid] = blocks
    forgotten = []
    for blocks in found.values():
        kind, b = blocks[0]
        sector: Sector = (
            "episodic" if kind == "episodic" or b.meta.get("sec") == "episodic" else "semantic"
        )
        entry = memory.entry(b, sector)
        entry.text = redact(entry.text)
        forgotten.append(entry)
    report = ForgetReport(dry_run=dry_run, forgotten=forgotten, log_lines=[])
    if dry_run:
        return report
    texts: set[str] = set()
    for eid, blocks in found.items():
        for kind, b in blocks:
            texts.add(b.text)
            b.removed = True
            memory.reached(kind, b)
            memory.touch(kind)
        home = blocks[0][0]
        line = f"- [{memory.today}] Forgotten: {eid} (forgotten by request)"
        memory.docs[home].append_log(line)
        memory.touch(home)
        report.log_lines.append(line)
    report.scrubbed_lines = _scrub(memory, texts)
    return report


def _scrub(memory: MemoryState, texts: set[str]) -> int:
    """Replace every quotation of ``texts`` in log lines and archive notes by a marker."""
    forms: set[str] = set()
    for text in texts:
        flat = " ".join(text.split())
        forms |= {flat, flat.replace('"', "'"), log_quote(text)}
        if log_quote(text).endswith("…"):
            forms.add(log_quote(text)[:-1])
        forms |= {redact(f) for f in list(forms)}
    ordered = sorted((f for f in forms if len(f) >= 3), key=len, reverse=True)

    def scrub(line: str) -> str:
        # The whole quotation goes, with the reason after it: a reason such as "changed
        # value: nebula-7 -> nebula-9" quotes pieces of the text.
        if not any(form in line for form in ordered):
            return line
        eol = line[len(line.rstrip("\r\n")) :]
        head = line.split('"', 1)[0] if '"' in line else line[: len(line) - len(line.lstrip())]
        return f"{head}{FORGOTTEN_MARK}{eol}"

    count = 0
    for kind, doc in memory.docs.items():
        for section in doc.sections:
            for blk in section.blocks:
                if isinstance(blk, RawBlock):
                    new = [scrub(x) for x in blk.lines]
                    if new != blk.lines:
                        count += sum(a != b for a, b in zip(new, blk.lines, strict=True))
                        blk.lines = new
                        memory.touch(kind)
                elif not blk.removed and blk.body:
                    body = [scrub(x) for x in blk.body]
                    if body != blk.body:
                        count += sum(a != b for a, b in zip(body, blk.body, strict=True))
                        blk.body = body
                        blk.dirty = True
                        memory.touch(kind)
    return count
