"""Entry-level three-way merge of one memory file (what ``maestroctl merge-driver`` runs).

Git merges text line by line; two branches that both learned something collide in the same
category even though nothing truly conflicts. ``merge`` merges by entry instead:

* **Entries** are keyed by id (the ``mm:id`` comment, or the id ``markdown.parse`` derives for
  a hand-written entry). Per id: unchanged on one side -> the other side's version; changed on
  both -> the later date wins, ties by higher confidence (then ours); added on either side ->
  kept once; deleted on one side -> deleted, even when the other side changed it.
* **Across branches**: two semantic entries added on different branches in one category that
  state the same rule (``same_rule``) are kept once (the higher confidence); two that contradict
  each other (``classify`` says ``replaced``) keep the later / more confident one and mark the
  other contradicted (confidence 0.00), so the next maintenance archives it. The merge writes
  only the file it merges: it never touches ``archive.md`` on the side.
* **Layout**: every line the tool does not own is merged by an injected line merge (``git
  merge-file --diff3``) over a *skeleton* of each file, where each entry is one placeholder line
  and the Maintenance Log is left out. A conflict that only places entries is resolved (both
  sides' entries, ours first); a conflict in a person's own lines is a true conflict and keeps
  ordinary conflict markers.
* **The Maintenance Logs** of both sides are united (each line once, deletions on one side
  honoured), ordered by date (stable), and stay the last section. The merge's own decisions are
  logged there too.
* **Episodic cap**: at most ``episodic_cap`` entries survive (lowest salience, then oldest,
  go first), each removal logged with the entry's full text.

Pure apart from ``line_merge``: texts in, text out.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .contradiction import classify, same_rule
from .markdown import (
    ARCHIVED_HEADING,
    ENTRIES_HEADING,
    LOG_HEADING,
    TITLES,
    Document,
    EntryBlock,
    FileKind,
    fmt_confidence,
    insert_entry,
    parse,
    render_entry,
    split_lines,
)
from .model import CATEGORY_HEADINGS, EPISODIC_CAP

# (base, ours, theirs, marker_size) -> the merged text in ``git merge-file -p --diff3`` form,
# conflicts marked with markers of ``marker_size`` characters.
LineMerge = Callable[[str, str, str, int], str]

# Markers this long do not occur in a person's notes; the output uses ordinary ones.
INTERNAL_MARKER_SIZE = 41
CONFLICT_MARKER_SIZE = 7

_H2 = re.compile(r"^##(?!#)\s+(.*?)\s*#*\s*$")
_LOG_DATE = re.compile(r"^\s*[-*]?\s*\[(\d{4}-\d{2}-\d{2})\]")


@dataclass
class MergeResult:
    text: str
    conflicted: bool
    notes: list[str] = field(default_factory=list)


def detect_kind(text: str) -> FileKind | None:
    """The file kind named by the title line (``# Semantic Memory`` …), or None."""
    for line in split_lines(text.lstrip("\ufeff")):
        bare = line.strip()
        if not bare:
            continue
        for kind, title in TITLES.items():
            if bare == title:
                return kind  # type: ignore[return-value]
        return None
    return None


# -------------------------------------------------------------------------------------------
# One side, read
# -------------------------------------------------------------------------------------------


@dataclass
class _Item:
    """An entry as one side has it: the block, the section it sits in, and who it came from."""

    block: EntryBlock
    section: str
    side: str  # "base" | "ours" | "theirs"
    modified: bool = False  # changed by the merge itself: rendered anew

    @property
    def signature(self) -> tuple[str, tuple[str, ...]]:
        lines = [_bare(x) for x in self.block.lines]
        while lines and not lines[-1].strip():
            lines.pop()
        return self.section.strip().lower(), tuple(lines)


@dataclass
class _Side:
    doc: Document
    items: dict[str, _Item]
    skeleton: list[str]  # "\n"-terminated lines
    log: list[str]  # the Maintenance Log's non-blank lines, without line endings
    log_raw: list[str] | None  # the log section as written (heading included), or None


def _bare(line: str) -> str:
    return line.rstrip("\n").rstrip("\r")


def _read_side(kind: FileKind, text: str, side: str, placeholder: Callable[[str], str]) -> _Side:
    doc = parse(kind, text)
    items: dict[str, _Item] = {}
    skeleton: list[str] = []
    log_raw: list[str] | None = None
    for section in doc.sections:
        lines: list[str] = []
        if section.heading is not None:
            lines.append(_bare(section.heading) + "\n")
        for block in section.blocks:
            if isinstance(block, EntryBlock):
                items[block.id] = _Item(block, section.title, side)
                lines.append(placeholder(block.id))
            else:
                lines.extend(_bare(x) + "\n" for x in block.lines)
        if section.heading is not None and section.key == LOG_HEADING.lower():
            log_raw = (log_raw or []) + lines
            continue
        skeleton.extend(lines)
    return _Side(doc, items, skeleton, doc.log_lines(), log_raw)


# -------------------------------------------------------------------------------------------
# The skeleton's line merge, and its conflicts
# -------------------------------------------------------------------------------------------


@dataclass
class _Hunk:
    ours: list[str]
    base: list[str]
    theirs: list[str]


def _parse_merged(text: str, size: int) -> list[str | _Hunk]:
    """Split ``git merge-file --diff3`` output into clean lines and conflict hunks."""
    start, mid, sep, end = "<" * size, "|" * size, "=" * size, ">" * size

    def is_marker(line: str, marker: str) -> bool:
        bare = _bare(line)
        return bare == marker or bare.startswith(marker + " ")

    out: list[str | _Hunk] = []
    hunk: _Hunk | None = None
    part = ""
    for line in split_lines(text):
        if not line.endswith("\n"):
            line += "\n"
        if hunk is None:
            if is_marker(line, start):
                hunk, part = _Hunk([], [], []), "ours"
            else:
                out.append(line)
            continue
        if part == "ours" and is_marker(line, mid):
            part = "base"
        elif part in ("ours", "base") and _bare(line) == sep:
            part = "theirs"
        elif part == "theirs" and is_marker(line, end):
            out.append(hunk)
            hunk = None
        else:
            getattr(hunk, part).append(line)
    if hunk is not None:  # an unterminated hunk cannot come from git; keep every line
        out.extend(hunk.ours + hunk.base + hunk.theirs)
    return out


class _Resolver:
    def __init__(self, is_placeholder: Callable[[str], bool], labels: tuple[str, str]) -> None:
        self.is_ph = is_placeholder
        self.labels = labels
        self.conflicts = 0

    def _anchors(self, lines: Sequence[str]) -> list[str]:
        return [x for x in lines if not self.is_ph(x) and x.strip()]

    def _gaps(self, lines: Sequence[str]) -> list[list[str]]:
        """The runs of placeholder and blank lines between anchors (len = anchors + 1)."""
        gaps: list[list[str]] = [[]]
        for x in lines:
            if not self.is_ph(x) and x.strip():
                gaps.append([])
            else:
                gaps[-1].append(x)
        return gaps

    def _union(self, ours: list[str], theirs: list[str]) -> list[str]:
        ours_ph = [x for x in ours if self.is_ph(x)]
        if not ours_ph:
            return list(theirs)
        extra = [x for x in theirs if self.is_ph(x) and x not in ours_ph]
        last = max(i for i, x in enumerate(ours) if self.is_ph(x))
        return ours[: last + 1] + extra + ours[last + 1 :]

    def resolve(self, hunk: _Hunk) -> list[str]:
        a, o, b = self._anchors(hunk.ours), self._anchors(hunk.base), self._anchors(hunk.theirs)
        if a == b:
            # Same unowned lines on both sides: only entries are placed differently.
            out: list[str] = []
            for i, (ga, gb) in enumerate(
                zip(self._gaps(hunk.ours), self._gaps(hunk.theirs), strict=True)
            ):
                if i:
                    out.append(a[i - 1])
                out.extend(self._union(ga, gb))
            return out
        if a == o:
            return list(hunk.theirs)  # only theirs changed unowned lines (ours' entries re-placed)
        if b == o:
            return list(hunk.ours)
        # A person's lines changed differently on both sides: a true conflict. The entries
        # in the hunk stay outside the markers, once.
        self.conflicts += 1
        placed: list[str] = []
        for x in hunk.ours + hunk.theirs:
            if self.is_ph(x) and x not in placed:
                placed.append(x)
        n = CONFLICT_MARKER_SIZE
        return [
            *placed,
            "<" * n + f" {self.labels[0]}\n",
            *[x for x in hunk.ours if not self.is_ph(x)],
            "=" * n + "\n",
            *[x for x in hunk.theirs if not self.is_ph(x)],
            ">" * n + f" {self.labels[1]}\n",
        ]


# -------------------------------------------------------------------------------------------
# Entries
# -------------------------------------------------------------------------------------------


def _newer(a: _Item, b: _Item) -> _Item:
    """Changed on both sides: the later date wins, ties by higher confidence, then ``a``."""
    ka = (a.block.date or "", a.block.confidence)
    kb = (b.block.date or "", b.block.confidence)
    return b if kb > ka else a


def _more_confident(a: _Item, b: _Item) -> _Item:
    ka = (a.block.confidence, a.block.date or "")
    kb = (b.block.confidence, b.block.date or "")
    return b if kb > ka else a


def _quote(text: str, limit: int | None = 120) -> str:
    quoted = " ".join(text.split()).replace('"', "'")
    if limit is not None and len(quoted) > limit:
        quoted = quoted[: limit - 1] + "…"
    return quoted


def _choose(ids: list[str], base: _Side, ours: _Side, theirs: _Side) -> dict[str, _Item]:
    chosen: dict[str, _Item] = {}
    for eid in ids:
        o, a, b = base.items.get(eid), ours.items.get(eid), theirs.items.get(eid)
        if o is not None:
            if a is None or b is None:
                continue  # deleted on one side: honoured
            if b.signature == o.signature:
                chosen[eid] = a
            elif a.signature == o.signature:
                chosen[eid] = b
            else:
                chosen[eid] = _newer(a, b)
        elif a is not None and b is not None:
            chosen[eid] = a if a.signature == b.signature else _newer(a, b)
        elif a is not None:
            chosen[eid] = a
        elif b is not None:
            chosen[eid] = b
    return chosen


def _with_id(block: EntryBlock) -> None:
    """Give an entry that is about to be re-rendered its id and original confidence."""
    rest = {k: v for k, v in block.meta.items() if k != "id"}
    original = block.original
    block.meta = {"id": block.id, **rest, "o": fmt_confidence(original)}


def _cross_branch(
    chosen: dict[str, _Item],
    base: _Side,
    ours: _Side,
    theirs: _Side,
    today: str,
) -> list[str]:
    """Semantic entries added on both branches: duplicates kept once, contradictions settled."""
    logs: list[str] = []

    def added(side: _Side, other: _Side) -> list[_Item]:
        return [
            chosen[i]
            for i in side.items
            if i in chosen and i not in base.items and i not in other.items
        ]

    new_ours, new_theirs = added(ours, theirs), added(theirs, ours)
    for category in CATEGORY_HEADINGS:
        candidates = [x for x in new_ours if x.block.category == category]
        for item in (x for x in new_theirs if x.block.category == category):
            if not candidates:
                break
            twin = next((c for c in candidates if same_rule(c.block.text, item.block.text)), None)
            reason = "same rule"
            if twin is None:
                verdict = classify(
                    item.block.text, [(c.block.id, c.block.text) for c in candidates]
                )
                if verdict.action == "added" or verdict.target is None:
                    continue
                twin = next(c for c in candidates if c.block.id == verdict.target)
                reason = verdict.reason
                if verdict.action == "replaced":
                    winner = _newer(twin, item)
                    loser = item if winner is twin else twin
                    loser = copy.deepcopy(loser)
                    _with_id(loser.block)
                    loser.block.confidence = 0.0
                    loser.modified = True
                    chosen[loser.block.id] = loser
                    logs.append(
                        f'- [{today}] Contradicted (merge): "{_quote(loser.block.text)}" '
                        f'(by "{_quote(winner.block.text)}": {reason})'
                    )
                    candidates.remove(twin)
                    continue
            winner = _more_confident(twin, item)
            loser = item if winner is twin else twin
            del chosen[loser.block.id]
            logs.append(
                f'- [{today}] Merged: "{_quote(loser.block.text)}" (added on both '
                f'branches; kept "{_quote(winner.block.text)}": {reason})'
            )
            candidates.remove(twin)
    return logs


def _enforce_cap(chosen: dict[str, _Item], order: list[str], cap: int, today: str) -> list[str]:
    episodic = [(pos, chosen[i]) for pos, i in enumerate(order) if i in chosen]
    excess = len(episodic) - cap
    if excess <= 0:
        return []
    ranked = sorted(episodic, key=lambda p: (p[1].block.salience or 0.0, p[1].block.date, -p[0]))
    logs = []
    for _, item in ranked[:excess]:
        del chosen[item.block.id]
        logs.append(
            f'- [{today}] Removed (merge): "{_quote(item.block.text, None)}" '
            f"(episodic cap of {cap} entries after the merge, salience "
            f"{item.block.salience or 0.0:.3f})"
        )
    return logs


# -------------------------------------------------------------------------------------------
# The Maintenance Log
# -------------------------------------------------------------------------------------------


def _united_log(base: _Side, ours: _Side, theirs: _Side, extra: list[str]) -> list[str]:
    a, b = [x.rstrip() for x in ours.log], [x.rstrip() for x in theirs.log]
    in_a, in_b = set(a), set(b)
    deleted = {x.rstrip() for x in base.log} - (in_a & in_b)
    lines: list[str] = []
    for line in [*a, *b, *extra]:
        if line not in deleted and line not in lines:
            lines.append(line)
    keyed: list[tuple[str, str]] = []
    key = ""
    for line in lines:
        m = _LOG_DATE.match(line)
        key = m.group(1) if m else key  # an undated line stays with the line above it
        keyed.append((key, line))
    return [line for _, line in sorted(keyed, key=lambda p: p[0])]


# -------------------------------------------------------------------------------------------
# The merge
# -------------------------------------------------------------------------------------------


def _home_section(kind: FileKind, item: _Item) -> str:
    if kind == "semantic" and item.block.category in CATEGORY_HEADINGS:
        return CATEGORY_HEADINGS[item.block.category]
    if kind == "episodic":
        return ENTRIES_HEADING
    if kind == "archive":
        return ARCHIVED_HEADING
    return item.section


def merge(
    kind: FileKind,
    base: str,
    ours: str,
    theirs: str,
    *,
    line_merge: LineMerge,
    today: str,
    episodic_cap: int = EPISODIC_CAP,
    labels: tuple[str, str] = ("ours", "theirs"),
) -> MergeResult:
    """Merge ``ours`` and ``theirs`` (both descended from ``base``) entry by entry."""
    nonce = hashlib.sha1("\x00".join((base, ours, theirs)).encode("utf-8", "surrogateescape"))
    prefix = f"@@maestro-memory-merge-{nonce.hexdigest()[:12]}:"

    def placeholder(eid: str) -> str:
        return f"{prefix}{eid}@@\n"

    def placeholder_id(line: str) -> str | None:
        if line.startswith(prefix):
            return line[len(prefix) :].rstrip("\n").removesuffix("@@")
        return None

    sides = {
        name: _read_side(kind, text, name, placeholder)
        for name, text in (("base", base), ("ours", ours), ("theirs", theirs))
    }
    b0, a, b = sides["base"], sides["ours"], sides["theirs"]
    notes: list[str] = []

    # 1. The layout: a line merge of the skeletons, entry-only conflicts resolved.
    merged = line_merge(
        "".join(b0.skeleton), "".join(a.skeleton), "".join(b.skeleton), INTERNAL_MARKER_SIZE
    )
    resolver = _Resolver(lambda x: x.startswith(prefix), labels)
    layout: list[str] = []
    for part in _parse_merged(merged, INTERNAL_MARKER_SIZE):
        layout.extend(resolver.resolve(part) if isinstance(part, _Hunk) else [part])
    if resolver.conflicts:
        notes.append(f"{resolver.conflicts} conflict(s) in lines the tool does not own")

    # 2. The entries: a three-way choice per id, then the cross-branch rules and the cap.
    ids = list(dict.fromkeys([*a.items, *b.items, *b0.items]))
    chosen = _choose(ids, b0, a, b)
    logs = _cross_branch(chosen, b0, a, b, today) if kind == "semantic" else []
    if kind == "episodic":
        order = [i for i in (placeholder_id(x) for x in layout) if i is not None]
        order += [i for i in ids if i not in order]
        logs += _enforce_cap(chosen, order, episodic_cap, today)
    notes.extend(logs)

    # 3. Entries into their places: the first placeholder in the entry's own section.
    nl = a.doc.newline if ours else b.doc.newline
    out: list[str] = []
    placed: set[str] = set()
    section = ""
    for line in layout:
        eid = placeholder_id(line)
        if eid is None:
            heading = _H2.match(_bare(line))
            if heading:
                section = heading.group(1)
            out.append(_bare(line) + nl)
            continue
        item = chosen.get(eid)
        if item is None or eid in placed or section.lower() != item.section.lower():
            continue
        placed.add(eid)
        out.extend(_render(kind, item, nl))
    text = "".join(out)

    missing = [chosen[i] for i in ids if i in chosen and i not in placed]
    if missing:
        doc = parse(kind, text)
        for item in missing:
            block = copy.deepcopy(item.block)
            block.lines = _render(kind, item, nl)
            insert_entry(doc, _home_section(kind, item), block, top=kind == "episodic")
            block.dirty = False
        text = doc.render()

    # 4. The Maintenance Log, last.
    log = _united_log(b0, a, b, logs)
    if log or a.log_raw is not None or b.log_raw is not None:
        raw = a.log_raw if a.log_raw is not None else b.log_raw
        if log == [x.rstrip() for x in a.log] and a.log_raw is not None:
            section_lines = [_bare(x) + nl for x in a.log_raw]
        else:
            title = _bare(raw[0]) if raw else f"## {LOG_HEADING}"
            section_lines = [title + nl, *[x + nl for x in log]]
        if text:
            if not text.endswith("\n"):
                text += nl
            if _bare(split_lines(text)[-1]).strip():
                text += nl  # a blank line above the log heading
        text += "".join(section_lines)

    bom = a.doc.bom if ours else b.doc.bom
    return MergeResult(
        text=("\ufeff" + text) if bom and text else text,
        conflicted=resolver.conflicts > 0,
        notes=notes,
    )


def _render(kind: FileKind, item: _Item, nl: str) -> list[str]:
    if item.modified:
        return render_entry(kind, item.block, nl)
    return [_bare(x) + nl for x in item.block.lines]
