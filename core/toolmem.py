"""What the agent tools remember on their own, read as notes, and the import rule (pure).

Claude Code, Gemini CLI and Codex each let their model keep a memory of its own (issue 20).
This module turns the text of those files into ``Note`` values and applies them to a
``Memory`` (``import_notes``); finding and reading the folders is the I/O edge
(``common/toolsources.py``). Nothing here writes to a tool's folder: a tool's memory is read,
never repaired.

The rule, in order, for each note (its *source* ``src`` is ``<tool>:<file>[#<item>]``):

* unchanged since the last import (same file signature, or same text): nothing;
* screened out (``_screen`` found a credential) or unusable: reported, never copied;
* an entry that came from this source exists (the ledger's id, else a line whose metadata
  names the source and whose text is the note's): updated in place, one entry, logged;
* a restatement of an entry the memory injected (a context for a session showed it): an echo
  of our own fact, kept in the ledger only (``echo``): no reinforcement, however many files or
  tools it lands in;
* otherwise saved through ``Memory.save_semantic`` (contradiction and restatement handling as
  for any save) at ``IMPORT_CONFIDENCE``; the entry it lands in records ``src`` in its
  metadata when it has no source yet.

A source a scanned tool no longer has (the tool deleted the file) flags its entry for review
(``gone=<date>`` in its metadata, shown as ``flagged``); nothing is removed.

The per-clone ledger (``State.imports`` in ``.state.json``) maps each source to its entry id,
the file's signature and the hash of what was imported: it makes a second import a no-op and
lets the session-start hook skip the whole transaction when no file changed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from .contradiction import classify
from .injected import strip_injected
from .model import IMPORT_CONFIDENCE, MemoryError_, _ToDict
from .related import may_relate
from .secrets import screen, strip_private

if TYPE_CHECKING:
    from .markdown import EntryBlock
    from .memory import Memory

TOOLS: tuple[str, ...] = ("claude", "gemini", "codex")
# Claude Code's memory types -> the spec's categories.
TYPE_CATEGORIES: dict[str, str] = {
    "feedback": "quality_rule",
    "project": "project_context",
    "user": "user_preference",
    "reference": "project_context",
}
DEFAULT_CATEGORY = "project_context"
FACT_LIMIT = 400  # characters of one imported fact (one line of semantic.md)
CLAUDE_KEY_LIMIT = 200  # Claude Code cuts a project key here and appends a hash
CLAUDE_INDEX = "MEMORY.md"
# Claude Code loads this many lines of its index (MEMORY.md) at a session's start; a memory
# file no line of them points to is one it does not know it has.
CLAUDE_INDEX_LOADED = 200
_LINK = re.compile(r"\]\(\s*<?(?:\./)?([^)<>\s]+\.md)>?\s*\)")


# -- the privacy screen ----------------------------------------------------------------------
def _screen(text: str) -> str | None:
    """Why ``text`` (a whole memory file, or one bullet) must not be imported, or None. The one
    screen (``core/secrets.py``): a file holding a secret anywhere is reported, never copied,
    not even with the secret cut out (a model that wrote a credential down may have written
    more of it than a pattern sees)."""
    screened = screen(text)
    if screened.kinds:
        return f"holds a secret ({', '.join(screened.kinds)}); not imported"
    return None


# -- locations ---------------------------------------------------------------------------------
def _java_hash(text: str) -> int:
    """Claude Code's string hash: ``h = h*31 + code unit`` over UTF-16, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def claude_project_key(root: str) -> str:
    """The folder name Claude Code (2.1.332) gives a project under ``~/.claude/projects/``:
    every UTF-16 code unit that is not an ASCII letter or digit becomes ``-``; past 200
    characters, the first 200 then ``-`` and the base-36 absolute value of its string hash."""
    units = root.encode("utf-16-le", "surrogatepass")
    key = "".join(
        chr(c) if c < 128 and chr(c).isalnum() else "-"
        for c in (int.from_bytes(units[i : i + 2], "little") for i in range(0, len(units), 2))
    )
    if len(key) <= CLAUDE_KEY_LIMIT:
        return key
    return f"{key[:CLAUDE_KEY_LIMIT]}-{_base36(abs(_java_hash(root)))}"


# -- parsing -----------------------------------------------------------------------------------
@dataclass
class Note:
    """One fact a tool's model chose to keep, ready to import (or the reason it is not)."""

    tool: str
    src: str  # "<tool>:<file>[#<item>]", relative to the tool's memory folder
    text: str
    category: str
    sig: str  # the file's signature ("<mtime_ns>:<size>") when read
    name: str = ""
    blocked: str = ""  # why it is not imported (a credential, unusable text)


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """``(fields, body)`` of a file that may open with ``---`` frontmatter: simple ``key:
    value`` lines and one level of nesting (``metadata:`` then indented ``type: …``, read as
    ``metadata.type``). Anything else is ignored; never raises."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    fields: dict[str, str] = {}
    parent = ""
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return fields, "\n".join(lines[i + 1 :])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.strip().partition(":")
        if not sep or not key:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if line[:1] in " \t" and parent:
            fields[f"{parent}.{key.strip()}"] = value
        else:
            parent = key.strip() if not value else ""
            fields[key.strip()] = value
    return {}, text  # no closing ---: not frontmatter


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= FACT_LIMIT else flat[: FACT_LIMIT - 1].rstrip() + "…"


def _usable(text: str) -> str:
    """Why ``text`` cannot be one line of semantic.md, or ''."""
    if not text:
        return "no text to import (empty, or all <private>)"
    if "<!--" in text or "-->" in text:
        return "holds an HTML comment marker"
    return ""


def claude_note(file_name: str, text: str, sig: str) -> Note:
    """One Claude Code memory file: the fact is the body's first paragraph (the lines after it
    are its **Why:** / **How to apply:**), else the description. A copy of our own injected
    block in it is not the model's fact (``core/injected.py``): taken out first."""
    fields, body = parse_frontmatter(text)
    body = strip_injected(body)
    kind = (fields.get("metadata.type") or fields.get("type") or "").strip().lower()
    paragraph: list[str] = []
    for line in body.strip().splitlines():
        if not line.strip() or line.lstrip().startswith(("**Why", "**How to apply")):
            if paragraph:
                break
            continue
        paragraph.append(line)
    fact = _one_line(strip_private(" ".join(paragraph) or fields.get("description", "")))
    note = Note(
        tool="claude",
        src=f"claude:{file_name}",
        text=fact,
        category=TYPE_CATEGORIES.get(kind, DEFAULT_CATEGORY),
        sig=sig,
        name=fields.get("name", ""),
    )
    note.blocked = _screen(text) or _usable(fact)
    return note


_BULLET = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?(?P<text>\S.*)$")


def bullet_notes(tool: str, file_name: str, text: str, sig: str) -> list[Note]:
    """Gemini's ``MEMORY.md`` and Codex's notes: one fact per top-level bullet. Each bullet's
    source carries a hash of its text: an edited bullet is a new fact, and the old one is
    flagged as gone. Our own injected block, copied in, is taken out first."""
    notes = []
    for line in strip_injected(text).splitlines():
        m = _BULLET.match(line)
        if m is None or line[:1] in " \t":
            continue
        fact = _one_line(strip_private(m.group("text")))
        digest = hashlib.sha1(fact.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        note = Note(tool, f"{tool}:{file_name}#{digest}", fact, DEFAULT_CATEGORY, sig)
        note.blocked = _screen(fact) or _usable(fact)
        notes.append(note)
    return notes


def index_targets(text: str) -> list[str]:
    """The memory files the loaded part of Claude Code's index links to (``[t](file.md)``)."""
    lines = text.splitlines()[:CLAUDE_INDEX_LOADED]
    return sorted({m.group(1) for line in lines for m in _LINK.finditer(line)})


def index_lines(text: str) -> int:
    """How many pointer lines an index (``MEMORY.md``) holds."""
    return sum(1 for line in text.splitlines() if _BULLET.match(line))


# -- provenance on the entry's line ------------------------------------------------------------
def encode_src(src: str) -> str:
    """A source as a metadata value: no spaces, no '>' (it rides in an HTML comment)."""
    return quote(src, safe=":/#@+,")


def decode_src(value: str) -> str:
    return unquote(value)


def source_tool(src: str | None) -> str | None:
    return src.partition(":")[0] if src else None


# -- the rule ----------------------------------------------------------------------------------
@dataclass
class ImportReport(_ToDict):
    dry_run: bool
    tools: list[str]  # the tools whose folders were read
    imported: list[dict[str, Any]] = field(default_factory=list)  # {src, action, entry_id}
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    blocked: list[dict[str, Any]] = field(default_factory=list)  # {src, reason}: not copied
    flagged: list[dict[str, Any]] = field(default_factory=list)  # {src, entry_id}: file gone


def _text_hash(note: Note) -> str:
    return hashlib.sha1(f"{note.category}\x00{note.text}".encode()).hexdigest()[:12]


def _echo_of(memory: Memory, note: Note, injected: frozenset[str]) -> EntryBlock | None:
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
    memory: Memory,
    notes: list[Note],
    tools: list[str],
    indexes: dict[str, dict[str, Any]] | None = None,
) -> ImportReport:
    """Apply ``notes`` (everything the folders of ``tools`` hold now) to ``memory``.
    ``indexes``: per tool with an index (Claude Code), its signature and the files it points
    to; kept in the ledger, so that a build for that tool leaves out only what it loads."""
    for t in tools:
        if t not in TOOLS:
            raise MemoryError_(f"unknown tool {t!r}; expected one of: {', '.join(TOOLS)}")
    for t, seen_index in (indexes or {}).items():
        if t in tools and memory.state.indexes.get(t) != seen_index:
            memory.state.indexes[t] = seen_index
            memory.state.changed = True
            memory.generation += 1
    report = ImportReport(dry_run=False, tools=list(tools))
    ledger = memory.state.imports
    injected = frozenset(i for ids in memory.state.shown.values() for i in ids)
    seen: set[str] = set()
    for note in notes:
        seen.add(note.src)
        led = ledger.get(note.src, {})
        if "gone" in led:  # the file is back
            led = {k: v for k, v in led.items() if k != "gone"}
            ledger[note.src] = led
            memory.state.changed = True
        block = memory._import_target(note.src, led.get("id"), note.text)
        if block is not None and block.meta.get("gone"):
            block.meta.pop("gone")
            block.dirty = True
            memory._touch("semantic")
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
            memory._update_imported(block, note)
            report.updated.append({"src": note.src, "action": "updated", "entry_id": block.id})
        elif (echo := _echo_of(memory, note, injected)) is not None:
            # Kept in the ledger only: the entry is not reinforced, not tied to this file (its
            # deletion flags nothing), and a later edit of the file is weighed afresh.
            report.imported.append({"src": note.src, "action": "echoed", "entry_id": echo.id})
            ledger[note.src] = {"id": "", "sig": note.sig, "hash": digest, "echo": echo.id}
            memory.state.changed = True
            continue
        else:
            result = memory.save_semantic(note.text, note.category, IMPORT_CONFIDENCE)
            if result.entry is None:
                report.blocked.append({"src": note.src, "reason": result.reason})
                ledger[note.src] = {"id": "", "sig": note.sig, "hash": digest, "blocked": "1"}
                memory.state.changed = True
                continue
            _, block = memory.find(result.entry.id)
            if "src" not in block.meta:
                block.meta["src"] = encode_src(note.src)
                block.dirty = True
                memory._touch("semantic")
            report.imported.append({"src": note.src, "action": result.action, "entry_id": block.id})
        ledger[note.src] = {"id": block.id, "sig": note.sig, "hash": digest}
        memory.state.changed = True
    for src in sorted(set(ledger) - seen):
        if source_tool(src) not in tools:
            continue
        led = ledger[src]
        block = memory._import_target(src, led.get("id"), None)
        if block is None:
            del ledger[src]  # its entry is gone too (removed or archived by review)
            memory.state.changed = True
            continue
        if "gone" not in led:
            ledger[src] = {**led, "gone": memory.today}
            memory.state.changed = True
        if block.meta.get("gone"):
            continue
        block.meta["gone"] = memory.today
        block.dirty = True
        memory._touch("semantic")
        memory._log("semantic", "Flagged", block.text, f"{src} was deleted by the tool")
        report.flagged.append({"src": src, "entry_id": block.id})
    return report
