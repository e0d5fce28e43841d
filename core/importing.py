"""Tool imports applied to the memory: the rule of ``core/toolmem.py`` (read there, in order)
over a ``MemoryState``, through its public calls and ``saving.save_semantic``.

``core/toolmem.py`` turns the tools' files into ``Note`` values; this module imports them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..common.agents import AGENTS
from .contradiction import classify
from .markdown import EntryBlock, insert_entry
from .model import CATEGORY_HEADINGS, IMPORT_CONFIDENCE, InputError
from .related import may_relate
from .saving import save_semantic
from .state import MemoryState
from .toolmem import ImportReport, Note, encode_src, source_file, source_tool


def _text_hash(note: Note) -> str:
    return hashlib.sha1(f"{note.category}\x00{note.text}".encode()).hexdigest()[:12]


def _echo_of(memory: MemoryState, note: Note, injected: frozenset[str]) -> EntryBlock | None:
    """The entry ``note`` restates when it is one the memory injected (a context for some
    session showed it): the tool's model saving what we gave it is our own fact coming back,
    not a confirmation, however many files it lands in (issue 29)."""
    if not injected:
        return None
    same = [b for b in memory.docs["semantic"].entries() if b.category == note.category]
    verdict = classify(note.text, may_relate(note.text, [(b.id, b.text) for b in same]))
    if verdict.action != "reinforced" or verdict.target not in injected:
        return None
    return next(b for b in same if b.id == verdict.target)


def import_notes(
    memory: MemoryState,
    notes: list[Note],
    tools: list[str],
    indexes: dict[str, dict[str, Any]] | None = None,
) -> ImportReport:
    """Apply ``notes`` (everything the folders of ``tools`` hold now) to ``memory``.
    ``indexes``: per tool with an index (Claude Code), its signature and the files it points
    to; kept in the ledger, so that a build for that tool leaves out only what it loads."""
    for t in tools:
        if t not in AGENTS:
            raise InputError(f"unknown tool {t!r}; expected one of: {', '.join(AGENTS)}")
    for t, seen_index in (indexes or {}).items():
        if t in tools and memory.state.indexes.get(t) != seen_index:
            memory.state.indexes[t] = seen_index
            memory.state.changed = True
            memory.generation += 1
    report = ImportReport(dry_run=False, tools=list(tools))
    ledger = memory.state.imports
    injected = frozenset(i for ids in memory.state.shown.values() for i in ids)
    seen: set[str] = set()
    # What the tools hold now stands side by side: a note never replaces another they still
    # keep (a file that lists two commands keeps both).
    held = {ledger[n.src]["id"] for n in notes if ledger.get(n.src, {}).get("id")}
    # What a file no longer holds, by file: an edited bullet is a new source beside the old
    # one gone, and the note that rewrites it replaces its entry (``save_semantic``'s
    # ``dropped``) rather than standing beside it, flagged.
    present = {n.src for n in notes}
    dropped: dict[str, set[str]] = {}
    for src, led in ledger.items():
        if src not in present and led.get("id") and source_tool(src) in tools:
            dropped.setdefault(source_file(src), set()).add(led["id"])
    for note in notes:
        seen.add(note.src)
        led = ledger.get(note.src, {})
        if "gone" in led:  # the file is back
            led = {k: v for k, v in led.items() if k != "gone"}
            ledger[note.src] = led
            memory.state.changed = True
        block = import_target(memory, note.src, led.get("id"), note.text)
        if block is not None and block.meta.get("gone"):
            block.meta.pop("gone")
            block.dirty = True
            memory.touch("semantic")
        digest = _text_hash(note)
        if note.blocked:
            report.blocked.append({"src": note.src, "reason": note.blocked})
            ledger[note.src] = {"id": led.get("id", ""), "sig": note.sig, "hash": digest}
            ledger[note.src]["blocked"] = "1"
            memory.state.changed = True
            continue
        if led and (led.get("sig") == note.sig or led.get("hash") == digest):
            # Unchanged: nothing to do, even when a review removed its entry (that decision
            # stands until the tool changes the file).
            if led.get("sig") != note.sig:
                ledger[note.src] = {**led, "sig": note.sig}
                memory.state.changed = True
            report.unchanged += 1
            continue
        if block is not None:
            update_imported(memory, block, note)
            report.updated.append({"src": note.src, "action": "updated", "entry_id": block.id})
        elif (echo := _echo_of(memory, note, injected)) is not None:
            # Kept in the ledger only: the entry is not reinforced, not tied to this file (its
            # deletion flags nothing), and a later edit of the file is weighed afresh.
            report.imported.append({"src": note.src, "action": "echoed", "entry_id": echo.id})
            ledger[note.src] = {"id": "", "sig": note.sig, "hash": digest, "echo": echo.id}
            memory.state.changed = True
            continue
        else:
            result = save_semantic(
                memory,
                note.text,
                note.category,
                IMPORT_CONFIDENCE,
                held=held,
                dropped=dropped.get(source_file(note.src), ()),
            )
            if result.entry is None:
                report.blocked.append({"src": note.src, "reason": result.reason})
                ledger[note.src] = {"id": "", "sig": note.sig, "hash": digest, "blocked": "1"}
                memory.state.changed = True
                continue
            _, block = memory.find(result.entry.id)
            if "src" not in block.meta:
                block.meta["src"] = encode_src(note.src)
                block.dirty = True
                memory.touch("semantic")
            report.imported.append({"src": note.src, "action": result.action, "entry_id": block.id})
        held.add(block.id)
        ledger[note.src] = {"id": block.id, "sig": note.sig, "hash": digest}
        memory.state.changed = True
    for src in sorted(set(ledger) - seen):
        if source_tool(src) not in tools:
            continue
        led = ledger[src]
        block = import_target(memory, src, led.get("id"), None)
        if block is None:
            del ledger[src]  # its entry is gone too (rewritten, or removed by review)
            memory.state.changed = True
            continue
        if "gone" not in led:
            ledger[src] = {**led, "gone": memory.today}
            memory.state.changed = True
        if block.meta.get("gone"):
            continue
        block.meta["gone"] = memory.today
        block.dirty = True
        memory.touch("semantic")
        memory.log("semantic", "Flagged", block.text, f"{src} was deleted by the tool")
        report.flagged.append({"src": src, "entry_id": block.id})
    return report


def import_target(
    memory: MemoryState, src: str, entry_id: str | None, text: str | None
) -> EntryBlock | None:
    """The semantic entry imported from ``src``: the ledger's id while it still names an
    entry of that source, else (a fresh clone, a lost ledger) a line naming ``src`` whose
    text is ``text``."""
    encoded = encode_src(src)
    entries = memory.docs["semantic"].entries()
    if entry_id:
        for b in entries:
            if b.id == entry_id and b.meta.get("src") in (None, encoded):
                return b
    if text is not None:
        for b in entries:
            if b.meta.get("src") == encoded and b.text == text:
                return b
    return None


def update_imported(memory: MemoryState, b: EntryBlock, note: Note) -> None:
    """The tool edited the file an entry came from: the entry follows, in place."""
    old = b.text
    b.text = note.text
    b.date = memory.today
    b.meta["src"] = encode_src(note.src)
    b.meta.pop("gone", None)
    b.dirty = True
    if note.category != b.category:
        doc = memory.docs["semantic"]
        b.removed = True
        moved = EntryBlock(
            [], b.id, b.text, b.confidence, b.date, dict(b.meta), category=note.category
        )
        insert_entry(doc, CATEGORY_HEADINGS[note.category], moved, top=False)
    memory.touch("semantic")
    memory.log("semantic", "Updated", old, f're-imported from {note.src} as "{note.text}"')
