"""Parse and render the three memory files, keeping every line the tool does not own.

A file is read into a ``Document``: a list of *blocks* in file order. A block is either an
``EntryBlock`` (a memory the tool understands and may rewrite) or a ``RawBlock`` (anything else:
titles, prose, unknown sections, broken lines). Rendering writes raw blocks and unchanged entries
back byte-for-byte; only entries that were created or changed are formatted anew. So a person's
notes, odd spacing, CRLF line endings and a BOM all survive a rewrite.

Operational metadata that the spec's format has no room for rides on the entry's own line as an
HTML comment, ``<!-- mm:id=s-1a2b3c4d o=0.95 u=2 -->``: invisible when rendered, carried along
when a person edits the visible text or git merges the file.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Literal

from .model import CATEGORY_HEADINGS, HAND_ENTRY_CONFIDENCE, HEADING_CATEGORIES

FileKind = Literal["semantic", "episodic", "archive"]

TITLES: dict[str, str] = {
    "semantic": "# Semantic Memory",
    "episodic": "# Episodic Memory",
    "archive": "# Memory Archive",
}
LOG_HEADING = "Maintenance Log"
ENTRIES_HEADING = "Entries"
ARCHIVED_HEADING = "Archived"

# Every pattern here runs in linear time on any line (a memory file can come from anyone's
# commit): no two adjacent quantifiers can trade characters back and forth (possessive ``*+``
# where they could), and the end-of-line parts are done with ``rstrip`` instead of a lazy
# ``(.*?)\s*$``, which is quadratic on a long run of spaces. tests/reliability/
# test_rel_file_fuzz.py checks them against the plain patterns they replace.
_DATE = r"\d{4}-\d{2}-\d{2}"
_META_OPEN = re.compile(r"<!--\s*+mm:")
_SEMANTIC = re.compile(  # matched against the line without its trailing whitespace
    r"^\s*+[-*]\s*+(?:\[(?P<date>" + _DATE + r"|date)\]\s*+)?"
    r"(?:\[(?P<conf>[^\]\s]*+)\]\s*+)?(?P<text>.*)$"
)
_EPISODIC = re.compile(  # matched against the header without its trailing whitespace
    r"^###\s*+\[salience:\s*+(?P<sal>[^\]]*+)\]\s*+\[confidence:\s*+(?P<conf>[^\]]*+)\]\s*+"
    r"\[(?P<date>[^\]]*+)\]\s*+(?:\[(?P<sid>[^\]]*+)\])?+\s*+$"
)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_HEADING_START = re.compile(r"^(#{1,6})\s")


def split_lines(text: str) -> list[str]:
    """Split keeping line endings (``\\n`` or ``\\r\\n``); a lone ``\\r`` is not a line break."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _strip_eol(line: str) -> str:
    return line.rstrip("\n").rstrip("\r")


def parse_meta(raw: str) -> dict[str, str]:
    meta: dict[str, str] = {}
    for part in raw.split():
        key, sep, value = part.partition("=")
        if sep and key:
            meta[key] = value
    return meta


def format_meta(meta: dict[str, str]) -> str:
    return "<!-- mm:" + " ".join(f"{k}={v}" for k, v in meta.items() if v != "") + " -->"


def fmt_confidence(value: float) -> str:
    """Semantic confidence: exactly two decimals, as the spec writes it."""
    return f"{value:.2f}"


def fmt_score(value: float, *, min_decimals: int) -> str:
    """Episodic scores: up to three decimals, at least ``min_decimals`` (1.0, 0.64, 0.512)."""
    text = f"{value:.3f}".rstrip("0")
    whole, _, frac = text.partition(".")
    return f"{whole}.{frac.ljust(min_decimals, '0')}"


def derived_id(prefix: str, text: str, occurrence: int) -> str:
    """Id for an entry that has no metadata yet: stable while its text is unchanged."""
    # surrogateescape: a hand-written line may hold bytes that are not UTF-8
    digest = hashlib.sha1(f"{text}\x00{occurrence}".encode("utf-8", "surrogateescape")).hexdigest()[
        :8
    ]
    return f"{prefix}-{digest}"


@dataclass
class RawBlock:
    lines: list[str]


@dataclass
class EntryBlock:
    """One entry. ``lines`` is what was read; ``dirty`` entries are rendered from the fields."""

    lines: list[str]
    id: str
    text: str
    confidence: float
    date: str
    meta: dict[str, str]
    category: str | None = None  # semantic, archive
    salience: float | None = None  # episodic
    session_id: str = ""  # episodic
    body: list[str] = field(default_factory=list)  # episodic body lines, without line endings
    dirty: bool = False
    removed: bool = False

    @property
    def original(self) -> float:
        try:
            value = float(self.meta.get("o", ""))
        except ValueError:
            value = self.confidence
        return max(value, self.confidence)


@dataclass
class Section:
    """A ``##`` section: its heading line (None for the preamble) and its blocks."""

    heading: str | None
    title: str  # heading text, "" for the preamble
    blocks: list[RawBlock | EntryBlock]

    @property
    def key(self) -> str:
        return self.title.strip().lower()


@dataclass
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Document:
    kind: FileKind
    sections: list[Section]
    newline: str = "\n"
    bom: bool = False
    problems: list[Problem] = field(default_factory=list)
    # (line, heading, text) of each entry under a heading the format does not know
    unfiled: list[tuple[int, str, str]] = field(default_factory=list)
    exists: bool = True
    changed: bool = False

    # -- queries ---------------------------------------------------------------------------
    def entries(self) -> list[EntryBlock]:
        return [
            b
            for s in self.sections
            for b in s.blocks
            if isinstance(b, EntryBlock) and not b.removed
        ]

    def category_entries(self, category: str) -> list[EntryBlock]:
        """``entries()`` of one category, in one pass (a save reads its category's)."""
        return [
            b
            for s in self.sections
            for b in s.blocks
            if isinstance(b, EntryBlock) and not b.removed and b.category == category
        ]

    def section(self, title: str) -> Section | None:
        for s in self.sections:
            if s.heading is not None and s.key == title.lower():
                return s
        return None

    def log_lines(self) -> list[str]:
        log = self.section(LOG_HEADING)
        if log is None:
            return []
        return [
            _strip_eol(line) for b in log.blocks for line in b.lines if _strip_eol(line).strip()
        ]

    # -- edits -----------------------------------------------------------------------------
    def ensure_section(self, title: str) -> Section:
        """Return the section ``title``, creating it above the Maintenance Log if missing."""
        found = self.section(title)
        if found is not None:
            return found
        nl = self.newline
        self._ensure_trailing_newline()
        new = Section(heading=f"## {title}{nl}", title=title, blocks=[])
        log_at = next(
            (i for i, s in enumerate(self.sections) if s.heading and s.key == "maintenance log"),
            None,
        )
        self._separate_before(log_at if log_at is not None else len(self.sections))
        if log_at is None or title == LOG_HEADING:
            self.sections.append(new)
        else:
            self.sections.insert(log_at, new)
            new.blocks.append(RawBlock([nl]))
        self.changed = True
        return new

    def _ensure_trailing_newline(self) -> None:
        for s in reversed(self.sections):
            for b in reversed(s.blocks):
                if b.lines and not (isinstance(b, EntryBlock) and b.removed):
                    if not b.lines[-1].endswith("\n"):
                        b.lines[-1] += self.newline
                    return
            if s.heading is not None:
                if not s.heading.endswith("\n"):
                    s.heading += self.newline
                return

    def _separate_before(self, index: int) -> None:
        """Make sure the section before ``index`` ends with a blank line."""
        if index == 0:
            return
        prev = self.sections[index - 1]
        last_line = None
        for b in reversed(prev.blocks):
            if isinstance(b, EntryBlock) and b.removed:
                continue
            if b.lines:
                last_line = b.lines[-1]
                break
        if last_line is None and prev.heading is None:
            return
        if last_line is None or _strip_eol(last_line).strip():
            prev.blocks.append(RawBlock([self.newline]))

    def append_log(self, line: str) -> None:
        log = self.ensure_section(LOG_HEADING)
        self._ensure_trailing_newline()
        # Log lines go after the last non-blank line of the log section.
        insert_at = len(log.blocks)
        while insert_at > 0:
            b = log.blocks[insert_at - 1]
            if isinstance(b, RawBlock) and all(not _strip_eol(x).strip() for x in b.lines):
                insert_at -= 1
                continue
            break
        log.blocks.insert(insert_at, RawBlock([line + self.newline]))
        self.changed = True

    # -- output ----------------------------------------------------------------------------
    def render(self) -> str:
        out: list[str] = []
        for s in self.sections:
            if s.heading is not None:
                out.append(s.heading)
            for b in s.blocks:
                if isinstance(b, RawBlock):
                    out.extend(b.lines)
                elif b.removed:
                    continue
                elif b.dirty:
                    out.extend(render_entry(self.kind, b, self.newline))
                else:
                    out.extend(b.lines)
        text = "".join(out)
        return ("\ufeff" + text) if self.bom else text


def render_entry(kind: FileKind, e: EntryBlock, nl: str) -> list[str]:
    meta = format_meta(e.meta)
    if kind == "episodic":
        sal = fmt_score(e.salience if e.salience is not None else 1.0, min_decimals=1)
        conf = fmt_score(e.confidence, min_decimals=2)
        header = f"### [salience: {sal}] [confidence: {conf}] [{e.date}] [{e.session_id}] {meta}"
        body = [line + nl for line in e.body] or [e.text + nl]
        return [header + nl, *body, nl]
    # A hand-written line without a date keeps having none ("- [] [0.95]" would not parse).
    date = f"[{e.date}] " if e.date else ""
    lines = [f"- {date}[{fmt_confidence(e.confidence)}] {e.text} {meta}{nl}"]
    if kind == "archive":
        lines.extend(f"  {line}{nl}" for line in e.body)
    return lines


# -------------------------------------------------------------------------------------------
# Parsing
# -------------------------------------------------------------------------------------------


def parse(kind: FileKind, text: str | None) -> Document:
    """Parse one memory file. Never raises on content: what it cannot read it keeps as raw."""
    if text is None:
        return new_document(kind)
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    lines = split_lines(text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    doc = Document(kind=kind, sections=[Section(None, "", [])], newline=newline, bom=bom)
    seen_ids: dict[str, int] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        bare = _strip_eol(line)
        heading = _heading(bare)
        if heading is not None and heading[0] == 2:
            doc.sections.append(Section(line, heading[1], []))
            i += 1
            continue
        section = doc.sections[-1]
        if kind == "episodic" and section.key == ENTRIES_HEADING.lower() and bare.startswith("###"):
            i = _parse_episodic(doc, lines, i, seen_ids)
            continue
        if section.heading is not None and section.key not in _KNOWN_SECTIONS[kind]:
            _note_unfiled(doc, section, bare, i)  # kept raw, not served: listed, warned
        if kind == "semantic" and section.key in HEADING_CATEGORIES:
            block = _parse_semantic_line(doc, line, i, HEADING_CATEGORIES[section.key], seen_ids)
        elif kind == "archive" and section.key == ARCHIVED_HEADING.lower():
            block = _parse_archive_line(doc, lines, i, seen_ids)
            if isinstance(block, EntryBlock):
                i += len(block.lines)
                section.blocks.append(block)
                continue
        else:
            block = RawBlock([line])
        section.blocks.append(block)
        i += 1
    return doc


# The ``##`` sections each file's format knows; an entry under any other heading is *unfiled*.
_KNOWN_SECTIONS: dict[FileKind, frozenset[str]] = {
    "semantic": frozenset([*HEADING_CATEGORIES, LOG_HEADING.lower()]),
    "episodic": frozenset([ENTRIES_HEADING.lower(), LOG_HEADING.lower()]),
    "archive": frozenset([ARCHIVED_HEADING.lower(), LOG_HEADING.lower()]),
}
_ENTRY_HEADINGS: dict[FileKind, list[str]] = {
    "semantic": [f"## {h}" for h in CATEGORY_HEADINGS.values()],
    "episodic": [f"## {ENTRIES_HEADING}"],
    "archive": [f"## {ARCHIVED_HEADING}"],
}
_BULLET = re.compile(r"^\s*+[-*]\s++\S")
_MARKED = re.compile(r"^\s*+[-*]\s*+\[(?:" + _DATE + r"|date|[0-9.]++)\]|<!--\s*+mm:")


def _note_unfiled(doc: Document, section: Section, bare: str, index: int) -> None:
    """An entry-shaped line under a heading the format does not know ("## Quality Rule"):
    a problem naming its line and the heading it was probably meant for. Entry-shaped: an
    episodic ``###`` header, or a bullet that carries a date, a confidence or our metadata;
    under a heading close to a known one, any bullet."""
    if doc.kind == "episodic":
        if not _EPISODIC.match(_split_meta(bare)[0].rstrip()):
            return
    elif not _BULLET.match(bare):
        return
    close = _meant_heading(doc.kind, section.title[:200])
    if not close and not _MARKED.search(bare):
        return  # a person's list under their own heading ("## Notes"): not a memory
    hint = f" (did you mean '{close}'?)" if close else ""
    text = _split_meta(bare)[0].strip()
    m = _SEMANTIC.match(text)
    quoted = " ".join((m.group("text") if m else text).split())
    quoted = quoted[:59] + "…" if len(quoted) > 60 else quoted
    doc.problems.append(
        Problem(
            index + 1,
            f"unfiled entry \"{quoted}\" under '## {section.title}', a heading {doc.kind}.md "
            f"does not know{hint}: kept, not served, until the heading is fixed",
        )
    )
    doc.unfiled.append((index + 1, section.title, text))


@functools.lru_cache(maxsize=64)
def _meant_heading(kind: FileKind, title: str) -> str:
    """The known heading ``title`` is probably a misspelling of, or ""."""
    close = difflib.get_close_matches(f"## {title}", _ENTRY_HEADINGS[kind], n=1, cutoff=0.75)
    return close[0] if close else ""


def _heading(bare: str) -> tuple[int, str] | None:
    """``(level, title)`` of an ATX heading (``## Title ##``), else None."""
    m = _HEADING_START.match(bare)
    if m is None:
        return None
    # The title without the surrounding spaces and an optional closing run of '#'.
    return len(m.group(1)), bare[m.end() :].rstrip().rstrip("#").rstrip().lstrip()


def _split_meta(bare: str) -> tuple[str, dict[str, str]]:
    """Split ``text <!-- mm:k=v ... -->`` (the comment last on the line) into the text before
    the comment and the metadata. The comment holds no '>', so it opens after the last '>'
    before the closing ``-->``; the leftmost ``<!-- mm:`` there is the one."""
    tail = bare.rstrip()
    if not tail.endswith("-->"):
        return bare, {}
    close = len(tail) - 3
    at = tail.rfind(">", 0, close) + 1
    while True:
        q = tail.find("<!--", at, close)
        if q < 0:
            return bare, {}
        m = _META_OPEN.match(tail, q)
        if m is not None and m.end() <= close:
            break
        at = q + 1
    return tail[:q].rstrip(), parse_meta(tail[m.end() : close])


def _entry_id(
    meta: dict[str, str], prefix: str, text: str, seen: dict[str, int]
) -> tuple[str, dict[str, str]]:
    eid = meta.get("id", "")
    if not re.fullmatch(r"[se]-[0-9a-f]{8,32}", eid) or eid in seen:
        key = f"{prefix}:{text}"
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        eid = derived_id(prefix, text, occurrence)
        while eid in seen:
            occurrence += 1
            eid = derived_id(prefix, text, occurrence)
        meta = {k: v for k, v in meta.items() if k != "id"}
    seen[eid] = 1
    return eid, meta


def _number(value: str | None) -> float | None:
    if value is None or not _NUMBER.match(value.strip()):
        return None
    return float(value)


def _parse_semantic_line(
    doc: Document, line: str, index: int, category: str, seen: dict[str, int]
) -> RawBlock | EntryBlock:
    bare, meta = _split_meta(_strip_eol(line))
    if not re.match(r"^\s*+[-*]", bare):
        return RawBlock([line])
    m = _SEMANTIC.match(bare.rstrip())
    if not m or not m.group("text"):
        return RawBlock([line])
    conf_raw = m.group("conf")
    if conf_raw is None:
        confidence = HAND_ENTRY_CONFIDENCE
    else:
        number = _number(conf_raw)
        if number is None or number > 1.0:
            doc.problems.append(
                Problem(
                    index + 1,
                    f"confidence {conf_raw!r} is not a number in 0.0-1.0; "
                    "line kept as written and not used",
                )
            )
            return RawBlock([line])
        confidence = number
    text = m.group("text").strip()
    eid, meta = _entry_id(meta, "s", text, seen)
    date = m.group("date") or ""
    return EntryBlock(
        [line], eid, text, confidence, "" if date == "date" else date, meta, category=category
    )


def _parse_archive_line(
    doc: Document, lines: list[str], index: int, seen: dict[str, int]
) -> RawBlock | EntryBlock:
    block = _parse_semantic_line(doc, lines[index], index, "", seen)
    if not isinstance(block, EntryBlock):
        return block
    block.category = block.meta.get("cat") or None
    # Indented sub-bullets that follow are the archive note (why and when it was archived).
    j = index + 1
    while j < len(lines) and re.match(r"^\s{2,}\S", _strip_eol(lines[j])):
        block.body.append(_strip_eol(lines[j]).strip())
        block.lines.append(lines[j])
        j += 1
    return block


def _parse_episodic(doc: Document, lines: list[str], i: int, seen: dict[str, int]) -> int:
    """Parse one ``###`` block starting at ``i``; return the index after it."""
    section = doc.sections[-1]
    j = i + 1
    while j < len(lines):
        bare = _strip_eol(lines[j])
        if bare.startswith("### ") or bare == "###" or _is_h2(bare):
            break
        j += 1
    block_lines = lines[i:j]
    header, meta = _split_meta(_strip_eol(lines[i]))
    m = _EPISODIC.match(header.rstrip())
    sal = _number(m.group("sal")) if m else None
    conf = _number(m.group("conf")) if m else None
    if m is None or sal is None or conf is None or conf > 1.0:
        if m is not None:
            doc.problems.append(
                Problem(
                    i + 1,
                    "episodic header has an invalid salience or confidence; "
                    "block kept as written and not used",
                )
            )
        section.blocks.append(RawBlock(block_lines))
        return j
    body = [_strip_eol(x).rstrip() for x in block_lines[1:]]
    while body and not body[-1].strip():
        body.pop()
    text = " ".join(_unescape(x.strip()) for x in body if x.strip())
    eid, meta = _entry_id(meta, "e", text + "\x00" + m.group("date"), seen)
    section.blocks.append(
        EntryBlock(
            block_lines,
            eid,
            text,
            conf,
            m.group("date").strip(),
            meta,
            salience=sal,
            session_id=(m.group("sid") or "").strip(),
            body=body,
        )
    )
    return j


def _unescape(line: str) -> str:
    """Body lines that start with ``#`` are written as ``\\#`` so they cannot end the entry."""
    return line[1:] if line.startswith("\\#") else line


def _is_h2(bare: str) -> bool:
    h = _heading(bare)
    return h is not None and h[0] == 2


def new_document(kind: FileKind) -> Document:
    """A fresh file with the spec's skeleton."""
    nl = "\n"
    sections = [Section(None, "", [RawBlock([TITLES[kind] + nl, nl])])]
    if kind == "semantic":
        titles = [*CATEGORY_HEADINGS.values()]
    elif kind == "episodic":
        titles = [ENTRIES_HEADING]
    else:
        sections[0].blocks.append(
            RawBlock(
                [
                    "Entries moved out of active memory: kept for reference, never injected "
                    "into context." + nl,
                    nl,
                ]
            )
        )
        titles = [ARCHIVED_HEADING]
    for title in titles:
        sections.append(Section(f"## {title}{nl}", title, [RawBlock([nl])]))
    sections.append(Section(f"## {LOG_HEADING}{nl}", LOG_HEADING, []))
    return Document(kind=kind, sections=sections, exists=False, changed=True)


def insert_entry(doc: Document, section_title: str, entry: EntryBlock, *, top: bool) -> None:
    """Place a new entry in its section: at the top (episodic) or after the last entry."""
    section = doc.ensure_section(section_title)
    doc._ensure_trailing_newline()  # a last line without one must not run into the new entry
    entry.dirty = True
    blocks = section.blocks
    if top:
        at = 0
        while (
            at < len(blocks)
            and isinstance(blocks[at], RawBlock)
            and all(not _strip_eol(x).strip() for x in blocks[at].lines)
        ):
            at += 1
        if at == len(blocks):
            at = min(1, len(blocks))  # after the blank line that follows the heading
        blocks.insert(at, entry)
    else:
        # The last entry, looked for from the end: O(trailing blocks), not O(section).
        last = next(
            (k for k in range(len(blocks) - 1, -1, -1) if isinstance(blocks[k], EntryBlock)), -1
        )
        if last >= 0:
            blocks.insert(last + 1, entry)
        else:
            # First entry: straight under the heading, before any trailing blank lines.
            at = len(blocks)
            while (
                at > 0
                and isinstance(blocks[at - 1], RawBlock)
                and all(not _strip_eol(x).strip() for x in blocks[at - 1].lines)
            ):
                at -= 1
            blocks.insert(at, entry)
            if at == len(blocks) - 1:
                blocks.append(RawBlock([doc.newline]))
    doc.changed = True
