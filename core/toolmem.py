"""What the agent tools remember on their own, read as notes; the import rule (pure).

Claude Code, Gemini CLI and Codex each let their model keep a memory of its own (issue 20).
This module turns the text of those files into ``Note`` values and states the rule below;
``core/importing.py`` applies it to the memory (``import_notes``); finding and reading the
folders is the I/O edge (``common/toolsources.py``). Nothing here writes to a tool's folder: a
tool's memory is read, never repaired.

The rule, in order, for each note (its *source* ``src`` is ``<tool>:<file>[#<item>]``):

* unchanged since the last import (same file signature, or same text): nothing;
* screened out (``_screen`` found a credential) or unusable: reported, never copied;
* an entry that came from this source exists (the ledger's id, else a line whose metadata
  names the source and whose text is the note's): updated in place, one entry, logged;
* a restatement of an entry the memory injected (a context for a session showed it): an echo
  of our own fact, kept in the ledger only (``echo``): no reinforcement, however many files or
  tools it lands in;
* otherwise saved through ``saving.save_semantic`` (contradiction and restatement handling as
  for any save) at ``IMPORT_CONFIDENCE``; the entry it lands in records ``src`` in its
  metadata when it has no source yet. The entries of the sources the same file no longer
  has are the save's ``dropped``: a rewritten bullet replaces its old wording's entry
  (archived, logged) when the two are in one slot by meaning or by the patterns.

A source a scanned tool no longer has (the tool deleted the file, or the bullet, and nothing
rewrote it) flags its entry for review (``gone=<date>`` in its metadata, shown as
``flagged``); nothing is removed.

The per-clone ledger (``State.imports`` in ``.state.json``) maps each source to its entry id,
the file's signature and the hash of what was imported: it makes a second import a no-op and
lets the session-start hook skip the whole transaction when no file changed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from ..common.limits import FACT_MAX_CHARS
from .injected import strip_injected
from .model import _ToDict
from .secrets import screen, strip_private

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


def _oversized(raw: str) -> str:
    """Why a memory whose text is ``raw`` (before it is cut to one line) is not imported: over
    the cap every door holds a memory to (``common/limits.py``); '' when it is not."""
    size = len(raw.strip())
    if size <= FACT_MAX_CHARS:
        return ""
    return f"is {size:,} characters, over the {FACT_MAX_CHARS:,} a memory may hold; not imported"


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
    raw = strip_private(" ".join(paragraph) or fields.get("description", ""))
    fact = _one_line(raw)
    note = Note(
        tool="claude",
        src=f"claude:{file_name}",
        text=fact,
        category=TYPE_CATEGORIES.get(kind, DEFAULT_CATEGORY),
        sig=sig,
        name=fields.get("name", ""),
    )
    note.blocked = _screen(text) or _oversized(raw) or _usable(fact)
    return note


_BULLET = re.compile(r"^\s*[-*+]\s+(?:\[[ xX]\]\s+)?(?P<text>\S.*)$")


def bullet_notes(tool: str, file_name: str, text: str, sig: str) -> list[Note]:
    """Gemini's ``MEMORY.md`` and Codex's notes: one fact per top-level bullet. Each bullet's
    source carries a hash of its text: an edited bullet is a new source, its old wording's
    source is gone (``import_notes`` replaces the old entry by the new one when they are
    in one slot, else flags it). Our own injected block, copied in, is taken out first."""
    notes = []
    for line in strip_injected(text).splitlines():
        m = _BULLET.match(line)
        if m is None or line[:1] in " \t":
            continue
        raw = strip_private(m.group("text"))
        fact = _one_line(raw)
        digest = hashlib.sha1(fact.encode("utf-8", "surrogateescape")).hexdigest()[:8]
        note = Note(tool, f"{tool}:{file_name}#{digest}", fact, DEFAULT_CATEGORY, sig)
        note.blocked = _screen(fact) or _oversized(raw) or _usable(fact)
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


def source_file(src: str) -> str:
    """The file a source is in: ``gemini:MEMORY.md#1a2b3c4d`` -> ``gemini:MEMORY.md``."""
    return src.partition("#")[0]


# -- the import rule's report (the rule: core/importing.py) ---------------------------------------
@dataclass
class ImportReport(_ToDict):
    dry_run: bool
    tools: list[str]  # the tools whose folders were read
    imported: list[dict[str, Any]] = field(default_factory=list)  # {src, action, entry_id}
    updated: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    blocked: list[dict[str, Any]] = field(default_factory=list)  # {src, reason}: not copied
    flagged: list[dict[str, Any]] = field(default_factory=list)  # {src, entry_id}: file gone
