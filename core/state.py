"""``MemoryState``: the parsed documents of one project's memory, and its small public surface.

No I/O and no memory rule here: a state is built from the text of the files
(``MemoryState.load``), is changed by the rule modules of ``core/`` through the calls below
(``touch``, ``reached``, ``log``, ``archive``, ``dispose``, the entry lookups), and tells which
files changed (``changed_files``). The rules: ``decay``, ``saving``, ``forgetting``,
``maintenance``, ``importing``; the read side: ``view``; ``core/memory.py`` joins them.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self, get_args

from ..common import layout
from . import evidence, rules, toolmem
from .markdown import (
    ARCHIVED_HEADING,
    Document,
    EntryBlock,
    FileKind,
    Problem,
    RawBlock,
    fmt_confidence,
    insert_entry,
    parse,
    render_entry,
)
from .model import (
    EPISODIC_CAP,
    HEADING_CATEGORIES,
    Entry,
    InputError,
    NotFoundError,
    Sector,
    validate_size,
    validate_text,
)
from .proposals import proposed_on
from .secrets import redact

# The memory files by kind: the names are common/layout.py's (MEMORY_FILES), typed as FileKind.
FILES: dict[FileKind, str] = {kind: layout.MEMORY_FILES[kind] for kind in get_args(FileKind)}
STATE_FILE = layout.STATE_FILE
SECTORS: tuple[Sector, Sector] = ("semantic", "episodic")
LEDGER_LIMIT = 2000
SHOWN_SESSIONS = 100  # sessions whose shown entries are remembered (the most recent)
SHOWN_PER_SESSION = 200

DecayUnit = Literal["day", "session"]
ReinforceOn = Literal["injected", "relevant"]
DECAY_UNITS: tuple[str, ...] = ("day", "session")
REINFORCE_ON: tuple[str, ...] = ("injected", "relevant")


@dataclass
class Settings:
    """Tunable behaviour; zero is honoured as a value everywhere (no ``x or default``).

    * ``decay_unit``: ``"day"`` applies the per-session decay (semantic -0.05, the episodic
      sweep) at most once per calendar day on which the project had a session; ``"session"``
      once per distinct session id (the spec read literally). See ARCHITECTURE.md.
    * ``reinforce_on``: which entries of a context build for a session count as referenced
      and are reinforced: ``"injected"`` every entry put in the block, ``"relevant"`` only those
      relevant to the task or query.
    * ``trusted``: canonical project folders whose memory is used although another user owns
      it or could write it (``[trust] directories``; ``core/fsio.py`` has the rule).
    """

    decay_unit: DecayUnit = "day"
    reinforce_on: ReinforceOn = "injected"
    episodic_cap: int = EPISODIC_CAP
    trusted: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.decay_unit not in DECAY_UNITS:
            raise InputError(f"decay_unit must be 'day' or 'session', got {self.decay_unit!r}")
        if self.reinforce_on not in REINFORCE_ON:
            raise InputError(
                f"reinforce_on must be 'injected' or 'relevant', got {self.reinforce_on!r}"
            )
        if (
            isinstance(self.episodic_cap, bool)
            or not isinstance(self.episodic_cap, int)
            or (self.episodic_cap < 0)
        ):
            raise InputError(f"episodic_cap must be a whole number >= 0, got {self.episodic_cap!r}")


@dataclass
class State:
    """The sidecar ``.state.json``: per-clone bookkeeping that is not memory content."""

    sessions: dict[str, str] = field(default_factory=dict)  # session id -> first day seen
    decayed_on: str | None = None  # the last day whose decay was applied
    # session tag -> ids of the entries a context for that session has shown (most recent last)
    shown: dict[str, list[str]] = field(default_factory=dict)
    # tool memory source -> {"id", "sig", "hash"[, "blocked", "gone"]} (core/toolmem.py)
    imports: dict[str, dict[str, str]] = field(default_factory=dict)
    # tool -> {"sig", "files"}: its index (Claude Code's MEMORY.md) and the files it points to
    indexes: dict[str, dict[str, Any]] = field(default_factory=dict)
    # what the working tree showed of the paths the entries name (core/evidence.py)
    evidence: evidence.Ledger = field(default_factory=evidence.Ledger)
    changed: bool = False

    @classmethod
    def parse(cls, text: str | None, problems: list[Problem]) -> State:
        if not text:
            return cls()
        try:
            data = json.loads(text)
            sessions = data.get("sessions", {})
            if not isinstance(sessions, dict):
                raise ValueError("sessions is not an object")
            decayed_on = data.get("decayed_on")
            if decayed_on is not None and not isinstance(decayed_on, str):
                raise ValueError("decayed_on is not a date")
            imports = data.get("imports", {})
            if not isinstance(imports, dict):
                raise ValueError("imports is not an object")
            shown = data.get("shown", {})
            if not isinstance(shown, dict) or not all(
                isinstance(v, list) and all(isinstance(i, str) for i in v) for v in shown.values()
            ):
                raise ValueError("shown is not a map of id lists")
            return cls(
                sessions={str(k): str(v) for k, v in sessions.items()},
                decayed_on=decayed_on,
                shown={str(k): list(v) for k, v in shown.items()},
                imports={
                    str(k): {str(a): str(b) for a, b in v.items()}
                    for k, v in imports.items()
                    if isinstance(v, dict)
                },
                evidence=evidence.Ledger.from_json(data.get("evidence")),
                indexes=_indexes(data.get("indexes")),
            )
        except (ValueError, AttributeError, RecursionError) as exc:  # Recursion: deep nesting
            problems.append(
                Problem(
                    0,
                    f"{STATE_FILE} is unreadable ({exc}); starting a new "
                    "ledger, sessions may decay again",
                )
            )
            return cls(changed=True)

    def render(self) -> str:
        items = list(self.sessions.items())[-LEDGER_LIMIT:]
        data: dict[str, Any] = {"v": 1, "sessions": dict(items)}
        if self.decayed_on is not None:
            data["decayed_on"] = self.decayed_on
        if self.shown:
            data["shown"] = dict(list(self.shown.items())[-SHOWN_SESSIONS:])
        if self.imports:
            data["imports"] = self.imports
        if self.evidence:
            data["evidence"] = self.evidence.to_json()
        if self.indexes:
            data["indexes"] = self.indexes
        return json.dumps(data, indent=1) + "\n"

    def last_decay_day(self) -> str | None:
        """The last day a decay was applied. A ledger written before ``decayed_on`` existed
        (decay per session id) applied one on every day it recorded a session."""
        if self.decayed_on is not None:
            return self.decayed_on
        return max(self.sessions.values(), default=None)


def session_tag(session_id: str) -> str:
    return hashlib.sha1(session_id.encode()).hexdigest()[:8]


def validate_session(value: object, *, name: str = "session_id") -> str:
    text = validate_text(value, name=name)
    if any(ch in text for ch in "[]\r\n") or "-->" in text or len(text) > 200:
        raise InputError(f"{name} must be one line of at most 200 characters without brackets")
    return text


def validate_fact(value: object, *, name: str) -> str:
    validate_size(value, name=name)
    text = " ".join(validate_text(value, name=name).split())
    if "<!--" in text or "-->" in text:
        raise InputError(f"{name} must not contain HTML comment markers")
    return text


def _indexes(value: object) -> dict[str, dict[str, Any]]:
    """``State.indexes`` from JSON; what is malformed is dropped (the next import rebuilds it)."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for tool, info in value.items():
        if isinstance(tool, str) and isinstance(info, dict) and isinstance(info.get("sig"), str):
            files = info.get("files")
            if isinstance(files, list) and all(isinstance(f, str) for f in files):
                out[tool] = {"sig": info["sig"], "files": list(files)}
    return out


def _source(value: str | None) -> Literal["user", "hand"] | None:
    return value if value in ("user", "hand") else None  # type: ignore[return-value]


def log_quote(text: str) -> str:
    """How a Maintenance Log line quotes an entry's text."""
    quoted = " ".join(text.split()).replace('"', "'")
    return quoted[:119] + "…" if len(quoted) > 120 else quoted


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


Pair = tuple[str, str]  # (entry id, text)


class CategoryLists:
    """What a save compares a new fact with, per semantic category, in file order: the entry
    blocks, their ``(id, text)`` pairs, and the pairs of those no newer rule is marked as maybe
    replacing (no ``sup``). Kept while the memory's ``generation`` is the one they were read
    at: every change of an entry's id, text, place, removal or ``sup`` mark touches the memory
    (``tests/core/test_category_lists.py``). A save that only added an entry after the last of
    its category appends it (``appended``) instead of a walk over the file (issue 36)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[int, Document, list[EntryBlock], list[Pair], list[Pair]]] = {}

    def of(
        self, doc: Document, generation: int, category: str
    ) -> tuple[list[EntryBlock], list[Pair], list[Pair]]:
        """The blocks, pairs and open pairs of ``category`` in ``doc`` (not to be changed)."""
        kept = self._kept.get(category)
        if kept is not None and kept[0] == generation and kept[1] is doc:
            return kept[2], kept[3], kept[4]
        blocks = doc.category_entries(category)
        pairs = [(b.id, b.text) for b in blocks]
        open_pairs = [p for b, p in zip(blocks, pairs, strict=True) if "sup" not in b.meta]
        self._kept[category] = (generation, doc, blocks, pairs, open_pairs)
        return blocks, pairs, open_pairs

    def appended(
        self, doc: Document, category: str, block: EntryBlock, read: int, now: int
    ) -> None:
        """``block`` (no ``sup``) was just placed after the last entry of the one section of
        ``category``, and nothing else changed since the lists were read at ``read``: they
        hold at ``now`` with it at their end. Anything else: read again next time."""
        kept = self._kept.pop(category, None)
        if kept is None or kept[0] != read or kept[1] is not doc or "sup" in block.meta:
            return
        if sum(1 for s in doc.sections if HEADING_CATEGORIES.get(s.key) == category) != 1:
            return  # a second section of the category follows: not at the end of the lists
        _, _, blocks, pairs, open_pairs = kept
        blocks.append(block)
        pairs.append((block.id, block.text))
        open_pairs.append(pairs[-1])
        self._kept[category] = (now, doc, blocks, pairs, open_pairs)


class MemoryState:
    """The three documents, the sidecar ledger, the day and the settings of one project.

    The public calls are all a rule needs: the entry lookups (``entry``, ``find``,
    ``blocks_with_id`` and the ``*_entries`` lists), ``touch`` (a document changed),
    ``reached`` (a change reached these entry blocks) and the three records of a change:
    ``log`` (a Maintenance Log line), ``archive`` (a copy in archive.md), ``dispose`` (an entry
    removed or archived, with its log line).
    """

    def __init__(
        self,
        semantic: Document,
        episodic: Document,
        archive: Document,
        state: State,
        *,
        today: str,
        settings: Settings | None = None,
    ) -> None:
        self.docs: dict[FileKind, Document] = {
            "semantic": semantic,
            "episodic": episodic,
            "archive": archive,
        }
        self.state = state
        self.today = today
        self.settings = settings if settings is not None else Settings()
        self.generation = 0  # bumped on every change; caches key on it
        # While a caller collects them (a list), every entry block of semantic.md and
        # episodic.md that a change reaches -- its scores, its removal, its insertion -- is
        # appended here (``reached``): the daemon's journal learns what one request changed
        # without comparing the whole memory before and after it. None: nobody collects.
        self.touched: list[EntryBlock] | None = None
        # The values the last view read from each block (``_entries``): reused while the block
        # is the same object with the same lines, clean, under the same evidence findings.
        self._seen: dict[str, dict[int, tuple[EntryBlock, list[str], object, Entry]]] = {}
        self.categories = CategoryLists()  # a save's lists of its category (see there)
        for b in semantic.entries():
            if not b.meta:  # no mm comment at all: a line a person typed
                b.meta["by"] = "hand"  # kept when the line is first rewritten

    # -- construction and output -------------------------------------------------------------
    @classmethod
    def load(
        cls,
        texts: Mapping[str, str | None],
        *,
        today: str,
        settings: Settings | None = None,
    ) -> Self:
        docs = {kind: parse(kind, texts.get(name)) for kind, name in FILES.items()}
        state_problems: list[Problem] = []
        state = State.parse(texts.get(STATE_FILE), state_problems)
        docs["semantic"].problems.extend(state_problems)
        return cls(
            docs["semantic"],
            docs["episodic"],
            docs["archive"],
            state,
            today=today,
            settings=settings,
        )

    def changed_files(self) -> dict[str, str]:
        out = {FILES[k]: d.render() for k, d in self.docs.items() if d.changed}
        if self.state.changed:
            out[STATE_FILE] = self.state.render()
        return out

    def mark_clean(self) -> None:
        """After a commit: the documents now equal the files, so they can be mutated again."""
        for kind, d in self.docs.items():
            d.changed = False
            d.exists = True
            for section in d.sections:
                kept: list[RawBlock | EntryBlock] = []
                for b in section.blocks:
                    if isinstance(b, EntryBlock):
                        if b.removed:
                            continue
                        if b.dirty:
                            b.lines = render_entry(kind, b, d.newline)
                            b.dirty = False
                    kept.append(b)
                section.blocks = kept
        self.state.changed = False

    def problems(self) -> dict[str, list[str]]:
        return {FILES[k]: [str(p) for p in d.problems] for k, d in self.docs.items() if d.problems}

    def touch(self, kind: FileKind) -> None:
        """``kind``'s document changed (written on commit); caches keyed on ``generation`` drop."""
        self.docs[kind].changed = True
        self.generation += 1

    def reached(self, kind: FileKind, *blocks: EntryBlock) -> None:
        """A change reached these entry blocks (see ``touched``); archive.md is not tracked."""
        if self.touched is not None and kind != "archive":
            self.touched.extend(blocks)

    # -- views ---------------------------------------------------------------------------------
    def entry(self, block: EntryBlock, sector: Sector) -> Entry:
        """The value a reader sees for one entry block."""
        try:
            unreinforced = int(block.meta.get("u", "0"))
        except ValueError:
            unreinforced = 0
        state = rules.state_of(block.confidence, block.salience)
        if state == "active" and block.meta.get("gone"):
            state = "flagged"  # its tool deleted the file it was imported from
        src = block.meta.get("src")
        found = (
            evidence.finding(block.text, block.id, self.state.evidence)
            if sector == "semantic"
            else None
        )
        if found is not None and state == "active":
            state = "stale"  # a path it names is gone: out of the context, waits for review
        proposed = proposed_on(block) if sector == "semantic" else None
        if proposed is not None and state == "active":
            state = "proposed"  # kept, not served until confirmed (core/proposals.py)
        superseded_by = block.meta.get("sup") or None if sector == "semantic" else None
        if superseded_by is not None and state == "active":
            state = "superseded"  # a newer rule may replace it: marked, waits in review
        return Entry(
            id=block.id,
            sector=sector,
            text=block.text,
            confidence=block.confidence,
            date=block.date,
            state=state,
            original_confidence=block.original,
            category=block.category if sector == "semantic" else None,
            salience=block.salience,
            session_id=block.session_id if sector == "episodic" else None,
            unreinforced_sessions=unreinforced,
            source=_source(block.meta.get("by")) if sector == "semantic" else None,
            last_referenced=block.meta.get("ref") or None,
            origin=toolmem.decode_src(src) if src and sector == "semantic" else None,
            stale=found.reason if found is not None else None,
            moved=dict(found.moved) if found is not None and found.moved else None,
            proposed=proposed,
            may_replace=block.meta.get("may") or None if sector == "semantic" else None,
            superseded_by=superseded_by,
        )

    def semantic_entries(self) -> list[Entry]:
        return self._entries("semantic")

    def episodic_entries(self) -> list[Entry]:
        return self._entries("episodic")

    def _entries(self, sector: Sector) -> list[Entry]:
        """``entry`` of each block of ``sector``'s document, an unchanged block's value reused:
        the daemon rebuilds the read view after every commit, which then costs O(changes)
        (issue 36). A block is unchanged while it is the same object holding the same
        ``lines`` list (a commit renders a changed block into a new one), not ``dirty``, and
        the evidence ledger's findings that could name it are the same."""
        ledger = self.state.evidence
        stamp: object = None
        if sector == "semantic" and ledger.missing:
            kept = tuple(sorted((k, tuple(v)) for k, v in ledger.kept.items()))
            stamp = (tuple(sorted(ledger.missing.items())), kept, ledger.root)
        seen = self._seen.get(sector, {})
        fresh: dict[int, tuple[EntryBlock, list[str], object, Entry]] = {}
        out: list[Entry] = []
        for b in self.docs[sector].entries():
            hit = seen.get(id(b))
            if (
                hit is not None
                and not b.dirty
                and hit[0] is b
                and hit[1] is b.lines
                and hit[2] == stamp
            ):
                value = hit[3]
            else:
                value = self.entry(b, sector)
            if not b.dirty:
                fresh[id(b)] = (b, b.lines, stamp, value)
            out.append(value)
        self._seen[sector] = fresh
        return out

    def archived_entries(self) -> list[Entry]:
        out = []
        for b in self.docs["archive"].entries():
            sector: Sector = "episodic" if b.meta.get("sec") == "episodic" else "semantic"
            entry = self.entry(b, sector)
            entry.category = b.category
            if entry.stale is not None:  # the archive is not served: evidence is moot there
                entry.stale, entry.moved = None, None
                entry.state = "active" if entry.state == "stale" else entry.state
            out.append(entry)
        return out

    def find(self, entry_id: object) -> tuple[Sector, EntryBlock]:
        if not isinstance(entry_id, str) or not entry_id:
            raise InputError(f"entry_id must be a non-empty string, got {entry_id!r}")
        for kind in SECTORS:
            for b in self.docs[kind].entries():
                if b.id == entry_id:
                    return kind, b
        raise NotFoundError(f"no entry with id {entry_id!r}")

    def blocks_with_id(self, entry_id: str) -> list[tuple[FileKind, EntryBlock]]:
        """Every block with this id, in any file (archive.md included)."""
        return [
            (kind, b) for kind, doc in self.docs.items() for b in doc.entries() if b.id == entry_id
        ]

    def ensure_files(self) -> list[str]:
        """Mark the files that do not exist yet as changed (written on commit); their names."""
        created = []
        for kind, doc in self.docs.items():
            if not doc.exists:
                doc.changed = True
                created.append(FILES[kind])
        return created

    # -- removal, archive, logs ----------------------------------------------------------------
    def log(self, kind: FileKind, verb: str, text: str, why: str) -> str:
        line = redact(f'- [{self.today}] {verb}: "{log_quote(text)}" ({why})')
        self.docs[kind].append_log(line)
        self.touch(kind)
        return line

    def archive(self, kind: FileKind, b: EntryBlock, note: str, tomb: float | None = None) -> None:
        meta = {"id": b.id, "o": fmt_confidence(b.original), "sec": kind}
        if b.category:
            meta["cat"] = b.category
        if kind == "episodic":
            meta["sal"] = f"{b.salience or 0.0:.3f}"
            if b.session_id:
                meta["sid"] = b.session_id
        if tomb is not None:
            meta["tomb"] = fmt_confidence(tomb)
        block = EntryBlock(
            [],
            b.id,
            redact(b.text),  # an entry typed in by hand before the screen existed
            b.confidence,
            b.date or self.today,
            meta,
            category=b.category,
            body=[redact(f"- archived {self.today} from {FILES[kind]}: {note}")],
        )
        insert_entry(self.docs["archive"], ARCHIVED_HEADING, block, top=False)
        self.touch("archive")

    def dispose(self, kind: FileKind, b: EntryBlock, action: str, why: str) -> str:
        b.removed = True
        self.reached(kind, b)
        self.touch(kind)
        if action == "archive":
            self.archive(kind, b, why)
            return self.log(kind, "Archived", b.text, why)
        return self.log(kind, "Removed", b.text, why)
