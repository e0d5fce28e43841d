"""``Memory``: the parsed state of one project's memory and every rule applied to it.

No I/O here: a ``Memory`` is built from the text of the files (``Memory.load``) and tells which
files changed (``Memory.render_changed``). ``MemoryStore`` (direct path) and the daemon's writer
both run these methods inside the store's lock, so each rule exists once.

Every method validates all of its input before it changes anything, so a ``ValueError`` leaves
the state exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..common import layout
from . import context as ctx
from . import evidence, rules, toolmem
from .contradiction import classify, same_rule
from .injected import strip_injected
from .markdown import (
    ARCHIVED_HEADING,
    ENTRIES_HEADING,
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
    CATEGORY_HEADINGS,
    DEFAULT_EPISODIC_CONFIDENCE,
    DEFAULT_SEMANTIC_CONFIDENCE,
    EPISODIC_CAP,
    FLAG_THRESHOLD,
    REINFORCED_BY_REVIEW,
    ContextResult,
    Entry,
    ForgetReport,
    InitReport,
    MaintenanceReport,
    MemoryError_,
    NotFoundError,
    Proposal,
    RejectedError,
    SaveResult,
    Sector,
    Signal,
    SweepReport,
    validate_category,
    validate_confidence,
    validate_text,
)
from .related import may_relate
from .secrets import redact, screen, strip_private
from .signals import detect_signals

FILES: dict[FileKind, str] = {
    "semantic": layout.MEMORY_FILES["semantic"],
    "episodic": layout.MEMORY_FILES["episodic"],
    "archive": layout.MEMORY_FILES["archive"],
}
STATE_FILE = layout.STATE_FILE
SECTORS: tuple[Sector, Sector] = ("semantic", "episodic")
LEDGER_LIMIT = 2000
SHOWN_SESSIONS = 100  # sessions whose shown entries are remembered (the most recent)
SHOWN_PER_SESSION = 200
RESULT_CACHE = 256  # context results kept per snapshot
Decision = Literal["remove", "archive", "reinforce"]
DECISIONS: tuple[str, ...] = ("remove", "archive", "reinforce", "rewrite")
FORGOTTEN_MARK = "[forgotten]"


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
    """

    decay_unit: DecayUnit = "day"
    reinforce_on: ReinforceOn = "injected"
    episodic_cap: int = EPISODIC_CAP
    default_max_tokens: int = 500

    def __post_init__(self) -> None:
        if self.decay_unit not in DECAY_UNITS:
            raise MemoryError_(f"decay_unit must be 'day' or 'session', got {self.decay_unit!r}")
        if self.reinforce_on not in REINFORCE_ON:
            raise MemoryError_(
                f"reinforce_on must be 'injected' or 'relevant', got {self.reinforce_on!r}"
            )
        if (
            isinstance(self.episodic_cap, bool)
            or not isinstance(self.episodic_cap, int)
            or (self.episodic_cap < 0)
        ):
            raise MemoryError_(
                f"episodic_cap must be a whole number >= 0, got {self.episodic_cap!r}"
            )


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


def _validate_session(value: object, *, name: str = "session_id") -> str:
    text = validate_text(value, name=name)
    if any(ch in text for ch in "[]\r\n") or "-->" in text or len(text) > 200:
        raise MemoryError_(f"{name} must be one line of at most 200 characters without brackets")
    return text


def _validate_fact(value: object, *, name: str) -> str:
    text = " ".join(validate_text(value, name=name).split())
    if "<!--" in text or "-->" in text:
        raise MemoryError_(f"{name} must not contain HTML comment markers")
    return text


class Memory:
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
        # appended here (``_reached``): the daemon's journal learns what one request changed
        # without comparing the whole memory before and after it. None: nobody collects.
        self.touched: list[EntryBlock] | None = None
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
    ) -> Memory:
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

    def _touch(self, kind: FileKind) -> None:
        self.docs[kind].changed = True
        self.generation += 1

    def _reached(self, kind: FileKind, *blocks: EntryBlock) -> None:
        """A change reached these entry blocks (see ``touched``); archive.md is not tracked."""
        if self.touched is not None and kind != "archive":
            self.touched.extend(blocks)

    # -- views ---------------------------------------------------------------------------------
    def _entry(self, block: EntryBlock, sector: Sector) -> Entry:
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
        )

    def semantic_entries(self) -> list[Entry]:
        return [self._entry(b, "semantic") for b in self.docs["semantic"].entries()]

    def episodic_entries(self) -> list[Entry]:
        return [self._entry(b, "episodic") for b in self.docs["episodic"].entries()]

    def archived_entries(self) -> list[Entry]:
        out = []
        for b in self.docs["archive"].entries():
            sector: Sector = "episodic" if b.meta.get("sec") == "episodic" else "semantic"
            entry = self._entry(b, sector)
            entry.category = b.category
            if entry.stale is not None:  # the archive is not served: evidence is moot there
                entry.stale, entry.moved = None, None
                entry.state = "active" if entry.state == "stale" else entry.state
            out.append(entry)
        return out

    def find(self, entry_id: object) -> tuple[Sector, EntryBlock]:
        if not isinstance(entry_id, str) or not entry_id:
            raise MemoryError_(f"entry_id must be a non-empty string, got {entry_id!r}")
        for kind in SECTORS:
            for b in self.docs[kind].entries():
                if b.id == entry_id:
                    return kind, b
        raise NotFoundError(f"no entry with id {entry_id!r}")

    # -- sessions and decay --------------------------------------------------------------------
    def ensure_files(self) -> list[str]:
        created = []
        for kind, doc in self.docs.items():
            if not doc.exists:
                doc.changed = True
                created.append(FILES[kind])
        return created

    def initialize(self, session_id: str | None = None) -> InitReport:
        """Start (or rejoin) a session: apply the decay when it is due, exactly once.

        ``decay_unit = "day"``: due on the first session of a calendar day (``self.today``)
        later than the last day decayed; ``"session"``: due for a session id not yet in the
        ledger. Either way the id is recorded, so switching the unit never decays twice.
        """
        sid = _validate_session(session_id) if session_id is not None else uuid.uuid4().hex
        created = self.ensure_files()
        new_session = sid not in self.state.sessions
        if self.settings.decay_unit == "day":
            last = self.state.last_decay_day()
            due = last is None or self.today > last  # a clock set back never decays again
        else:
            due = new_session
        if new_session:
            self.state.sessions[sid] = self.today
            self.state.changed = True
        if not due:
            return InitReport(
                session_id=sid, created=created, applied=False, flagged=self._flagged_entries()
            )
        semantic = self.semantic_decay()
        sweep = self.decay_sweep()
        if self.state.decayed_on is None or self.today > self.state.decayed_on:
            self.state.decayed_on = self.today
        self.state.changed = True
        return InitReport(
            session_id=sid,
            created=created,
            applied=True,
            semantic_decayed=semantic,
            episodic_decayed=sweep.decayed,
            pruned=sweep.pruned,
            flagged=self._flagged_entries(),
        )

    def semantic_decay(self) -> int:
        """-0.05 for every entry not reinforced since the previous session's decay."""
        decayed = 0
        for b in self.docs["semantic"].entries():
            if b.confidence == 0.0:
                continue
            original = b.original
            if b.meta.get("r") == "1":
                b.meta.pop("r")
                b.meta["u"] = "0"
            else:
                b.confidence = rules.semantic_decayed(b.confidence)
                seen = b.meta.get("u", "0")
                b.meta["u"] = str((int(seen) if seen.isdigit() else 0) + 1)
                decayed += 1
            b.meta["o"] = fmt_confidence(original)
            b.dirty = True
            self._reached("semantic", b)
        if self.docs["semantic"].entries():
            self._touch("semantic")
        return decayed

    def decay_sweep(self) -> SweepReport:
        """The spec's episodic sweep: x0.8 salience and confidence; prune below 0.1 salience."""
        doc = self.docs["episodic"]
        pruned: list[Entry] = []
        decayed = 0
        for b in doc.entries():
            original = b.original
            b.salience, b.confidence = rules.episodic_decayed(b.salience or 0.0, b.confidence)
            b.meta["o"] = f"{original:.3f}".rstrip("0").rstrip(".")
            b.dirty = True
            self._reached("episodic", b)
            decayed += 1
            if rules.pruned_by_sweep(b.salience):
                pruned.append(self._entry(b, "episodic"))
                self._dispose(
                    "episodic",
                    b,
                    rules.disposal(original),
                    f"episodic entry, salience {b.salience:.3f}, pruned by the session sweep",
                )
        if decayed:
            self._touch("episodic")
        flagged = [e for e in self.episodic_entries() if e.state == "flagged"]
        return SweepReport(decayed=decayed, pruned=pruned, flagged=flagged)

    def _flagged_entries(self) -> list[Entry]:
        return [e for e in self.semantic_entries() + self.episodic_entries() if e.state != "active"]

    # -- removal, archive, logs ----------------------------------------------------------------
    def _log(self, kind: FileKind, verb: str, text: str, why: str) -> str:
        line = redact(f'- [{self.today}] {verb}: "{log_quote(text)}" ({why})')
        self.docs[kind].append_log(line)
        self._touch(kind)
        return line

    def _archive(self, kind: FileKind, b: EntryBlock, note: str, tomb: float | None = None) -> None:
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
        self._touch("archive")

    def _dispose(self, kind: FileKind, b: EntryBlock, action: str, why: str) -> str:
        b.removed = True
        self._reached(kind, b)
        self._touch(kind)
        if action == "archive":
            self._archive(kind, b, why)
            return self._log(kind, "Archived", b.text, why)
        return self._log(kind, "Removed", b.text, why)

    # -- writes ----------------------------------------------------------------------------------
    def save_semantic(
        self, fact: object, category: object, confidence: object = None
    ) -> SaveResult:
        text = _validate_fact(fact, name="fact")
        cat = validate_category(category)
        conf = (
            DEFAULT_SEMANTIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
        )
        screened = screen(text)
        if screened.empty:
            return SaveResult(
                action="rejected",
                entry=None,
                reason="the fact is entirely <private>; not saved",
                screened=True,
            )
        if screened.kinds:  # a secret in a rule is refused, never stored with a hole in it
            return SaveResult(
                action="rejected", entry=None, reason=screened.reason(), screened=True
            )
        text = " ".join(screened.text.split())
        doc = self.docs["semantic"]

        tomb = self._tombstone(text, cat)
        if tomb is not None:
            tomb_block, tomb_conf = tomb
            if conf < tomb_conf and conf < 1.0:
                return SaveResult(
                    action="rejected",
                    entry=None,
                    replaced=None,
                    reason=f"tombstoned: replaced earlier by a statement at "
                    f"{tomb_conf:.2f}; restate at 1.0 to override",
                )
            tomb_block.meta.pop("tomb", None)  # overridden: the old verdict no longer holds
            tomb_block.dirty = True
            self._touch("archive")

        same = [b for b in doc.entries() if b.category == cat]
        # Only the entries that may relate reach classify (same verdict: see core/related.py).
        verdict = classify(text, may_relate(text, [(b.id, b.text) for b in same]))
        heading = CATEGORY_HEADINGS[cat]
        if verdict.action == "reinforced" and verdict.target is not None:
            target = next(b for b in same if b.id == verdict.target)
            before = self._entry(target, "semantic")
            if conf == 0.0:
                target.confidence = 0.0
                action: Literal["reinforced", "replaced"] = "replaced"
                self._log("semantic", "Contradicted", target.text, "restated with confidence 0.00")
            else:
                target.confidence = rules.restated_confidence(target.confidence, conf)
                action = "reinforced"
            target.meta["o"] = fmt_confidence(target.original)
            target.meta["r"] = "1"
            target.meta["u"] = "0"
            target.dirty = True
            self._reached("semantic", target)
            self._touch("semantic")
            return SaveResult(
                action=action,
                entry=self._entry(target, "semantic"),
                replaced=before if action == "replaced" else None,
                reason=verdict.reason,
            )

        new = EntryBlock(
            [],
            _new_id("s"),
            text,
            conf,
            self.today,
            {"id": "", "o": fmt_confidence(conf), "u": "0"},
            category=cat,
        )
        new.meta["id"] = new.id
        if verdict.action == "replaced" and verdict.target is not None:
            old = next(b for b in same if b.id == verdict.target)
            replaced = self._entry(old, "semantic")
            section = next(s for s in doc.sections for blk in s.blocks if blk is old)
            section.blocks.insert(section.blocks.index(old), new)
            new.dirty = True
            old.removed = True
            self._reached("semantic", old, new)
            self._archive("semantic", old, f'replaced by "{text}" ({verdict.reason})', tomb=conf)
            self._log("semantic", "Replaced", old.text, f'by "{text}": {verdict.reason}')
            self._touch("semantic")
            return SaveResult(
                action="replaced",
                entry=self._entry(new, "semantic"),
                replaced=replaced,
                reason=verdict.reason,
            )
        insert_entry(doc, heading, new, top=False)
        self._reached("semantic", new)
        self._touch("semantic")
        return SaveResult(
            action="added", entry=self._entry(new, "semantic"), replaced=None, reason=verdict.reason
        )

    def _tombstone(self, text: str, category: str) -> tuple[EntryBlock, float] | None:
        for b in reversed(self.docs["archive"].entries()):
            if b.category != category or "tomb" not in b.meta:
                continue
            try:
                tomb_conf = float(b.meta["tomb"])
            except ValueError:
                continue
            if same_rule(b.text, text):
                return b, tomb_conf
        return None

    def save_episodic(
        self, context_text: object, session_id: object, confidence: object = None
    ) -> Entry:
        raw = validate_text(context_text, name="context")
        sid = _validate_session(session_id)
        conf = (
            DEFAULT_EPISODIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
        )
        raw = _screened_episodic(raw)
        body = _episodic_body(raw)
        text = " ".join(raw.split())
        new = EntryBlock(
            [],
            _new_id("e"),
            text,
            conf,
            self.today,
            {"id": "", "o": f"{conf:.3f}".rstrip("0").rstrip(".")},
            salience=1.0,
            session_id=sid,
            body=body,
        )
        new.meta["id"] = new.id
        doc = self.docs["episodic"]
        insert_entry(doc, ENTRIES_HEADING, new, top=True)
        self._reached("episodic", new)
        self._touch("episodic")
        self._enforce_cap()
        return self._entry(new, "episodic")

    def save_session_note(
        self, note: object, session_id: object, confidence: object = None
    ) -> tuple[Entry, bool]:
        """The episodic note a session leaves (``core.digest``): one per session id. A resumed
        session's note replaces its earlier one in place (fresh: salience 1.0, today's date)
        instead of adding a second. Returns the entry and whether it was an update."""
        raw = _screened_episodic(validate_text(note, name="note"))
        sid = _validate_session(session_id)
        conf = (
            DEFAULT_EPISODIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
        )
        for b in self.docs["episodic"].entries():
            if b.session_id == sid and b.meta.get("kind") == "session":
                b.text = " ".join(raw.split())
                b.body = _episodic_body(raw)
                b.salience, b.confidence, b.date = 1.0, conf, self.today
                b.meta["o"] = f"{conf:.3f}".rstrip("0").rstrip(".")
                b.dirty = True
                self._reached("episodic", b)
                self._touch("episodic")
                return self._entry(b, "episodic"), True
        entry = self.save_episodic(raw, sid, conf)
        for b in self.docs["episodic"].entries():
            if b.id == entry.id:  # (not there if a cap of 0 disposed of it at once)
                b.meta["kind"] = "session"
                b.dirty = True
        return entry, False

    def _enforce_cap(self) -> None:
        entries = self.docs["episodic"].entries()
        excess = len(entries) - self.settings.episodic_cap
        if excess <= 0:
            return
        # Lowest salience first, then oldest (earlier date; lower in the file).
        order = sorted(enumerate(entries), key=lambda p: (p[1].salience or 0.0, p[1].date, -p[0]))
        for _, b in order[:excess]:
            self._dispose(
                "episodic",
                b,
                rules.disposal(b.original),
                f"episodic cap of {self.settings.episodic_cap} entries, salience "
                f"{b.salience or 0.0:.3f}",
            )

    def reinforce(
        self, entry_id: object, confirmed: bool = False, session_id: str | None = None
    ) -> Entry:
        if not isinstance(confirmed, bool):
            raise MemoryError_(f"confirmed must be true or false, got {confirmed!r}")
        kind, b = self.find(entry_id)
        if session_id is not None:
            tag = session_tag(session_id)
            if b.meta.get("rs") == tag:
                return self._entry(b, kind)  # at most once per entry per session
            b.meta["rs"] = tag
            b.meta["ref"] = self.today  # rotation: least recently referenced goes first
        original = b.original
        if kind == "semantic":
            b.confidence = (
                rules.confirmed_semantic(b.confidence)
                if confirmed
                else rules.referenced_semantic(b.confidence, original)
            )
            b.meta["r"] = "1"
            b.meta["u"] = "0"
            b.meta["o"] = fmt_confidence(max(original, b.confidence))
        else:
            b.salience, b.confidence = (
                rules.confirmed_episodic(b.salience or 0.0, b.confidence)
                if confirmed
                else rules.referenced_episodic(b.salience or 0.0, b.confidence, original)
            )
            b.meta["o"] = f"{max(original, b.confidence):.3f}".rstrip("0").rstrip(".")
        b.dirty = True
        self._reached(kind, b)
        self._touch(kind)
        return self._entry(b, kind)

    def mark_shown(self, session_id: str, entry_ids: Iterable[str]) -> None:
        """Remember that a context for ``session_id`` showed these entries (sidecar ledger)."""
        tag = session_tag(_validate_session(session_id))
        seen = self.state.shown.pop(tag, [])  # re-inserted: most recently used last
        new = [i for i in entry_ids if i not in seen]
        self.state.shown[tag] = (seen + new)[-SHOWN_PER_SESSION:]
        if new:
            self.state.changed = True
        while len(self.state.shown) > SHOWN_SESSIONS:
            del self.state.shown[next(iter(self.state.shown))]

    def reinforce_referenced(self, entry_ids: Iterable[str], session_id: str) -> list[Entry]:
        """Reference reinforcement after a context build for ``session_id``; the ids are also
        remembered as shown to that session (``unseen_only`` builds leave them out)."""
        sid = _validate_session(session_id)
        entry_ids = list(entry_ids)
        self.mark_shown(sid, entry_ids)
        out = []
        for eid in entry_ids:
            try:
                out.append(self.reinforce(eid, confirmed=False, session_id=sid))
            except NotFoundError:
                continue  # removed since the build: nothing to reinforce
        return out

    def detect_semantic_signals(
        self, user_message: object, assistant_response: object = ""
    ) -> list[Signal]:
        if not isinstance(user_message, str):
            raise MemoryError_(f"user_message must be a string, got {type(user_message).__name__}")
        if not isinstance(assistant_response, str):
            raise MemoryError_(
                f"assistant_response must be a string, got {type(assistant_response).__name__}"
            )
        out = []
        # Never learn from our own output: the injected memory and its wrappers go first.
        user_message = strip_injected(user_message)
        user_message = strip_private(user_message)
        assistant_response = strip_private(assistant_response)
        for found in detect_signals(user_message, assistant_response):
            try:
                _validate_fact(found.fact, name="fact")
            except MemoryError_:
                # A phrase that cannot be stored (an HTML comment marker, a lone surrogate) is
                # no signal; raising here would leave the signals saved before it half-applied.
                continue
            result = self.save_semantic(found.fact, found.category, found.confidence)
            if result.entry is not None and result.entry.confidence > 0.0:
                # Stated by the person in their own prompt: their standing instruction.
                _, block = self.find(result.entry.id)
                block.meta["by"] = "user"
                block.dirty = True
                result.entry.source = "user"
            out.append(
                Signal(
                    fact=redact(found.fact),  # a rejected fact is shown without its secret
                    category=found.category,
                    confidence=found.confidence,
                    action=result.action,
                    entry_id=result.entry.id if result.entry else None,
                )
            )
        return out

    # -- tool memories (core/toolmem.py has the rule) --------------------------------------------
    def import_notes(
        self,
        notes: list[toolmem.Note],
        tools: list[str],
        indexes: dict[str, dict[str, Any]] | None = None,
    ) -> toolmem.ImportReport:
        """Import what the agent tools' own memories hold (see ``core/toolmem.py``)."""
        return toolmem.import_notes(self, notes, tools, indexes)

    def _import_target(self, src: str, entry_id: str | None, text: str | None) -> EntryBlock | None:
        """The semantic entry imported from ``src``: the ledger's id while it still names an
        entry of that source, else (a fresh clone, a lost ledger) a line naming ``src`` whose
        text is ``text``."""
        encoded = toolmem.encode_src(src)
        entries = self.docs["semantic"].entries()
        if entry_id:
            for b in entries:
                if b.id == entry_id and b.meta.get("src") in (None, encoded):
                    return b
        if text is not None:
            for b in entries:
                if b.meta.get("src") == encoded and b.text == text:
                    return b
        return None

    def _update_imported(self, b: EntryBlock, note: toolmem.Note) -> None:
        """The tool edited the file an entry came from: the entry follows, in place."""
        old = b.text
        b.text = note.text
        b.date = self.today
        b.meta["src"] = toolmem.encode_src(note.src)
        b.meta.pop("gone", None)
        b.dirty = True
        if note.category != b.category:
            doc = self.docs["semantic"]
            b.removed = True
            moved = EntryBlock(
                [], b.id, b.text, b.confidence, b.date, dict(b.meta), category=note.category
            )
            insert_entry(doc, CATEGORY_HEADINGS[note.category], moved, top=False)
        self._touch("semantic")
        self._log("semantic", "Updated", old, f're-imported from {note.src} as "{note.text}"')

    # -- forget --------------------------------------------------------------------------------
    def _blocks_with_id(self, entry_id: str) -> list[tuple[FileKind, EntryBlock]]:
        return [
            (kind, b) for kind, doc in self.docs.items() for b in doc.entries() if b.id == entry_id
        ]

    def matching(self, needle: object) -> list[Entry]:
        """Entries (live and archived) whose text contains ``needle``, case-insensitively."""
        probe = validate_text(needle, name="match").casefold()
        return [
            e
            for e in self.semantic_entries() + self.episodic_entries() + self.archived_entries()
            if probe in e.text.casefold()
        ]

    def forget(self, entry_ids: object, dry_run: bool = False) -> ForgetReport:
        """Remove entries by id from every file, and their text from every Maintenance Log line
        and archive note; one log line per entry records the id and date, not the text. The one
        deletion the memory makes on request: nothing of the text is kept."""
        if not isinstance(dry_run, bool):
            raise MemoryError_(f"dry_run must be true or false, got {dry_run!r}")
        if isinstance(entry_ids, str) or not isinstance(entry_ids, list | tuple) or not entry_ids:
            raise MemoryError_("entry_ids must be a non-empty list of entry ids")
        found: dict[str, list[tuple[FileKind, EntryBlock]]] = {}
        for eid in entry_ids:
            if not isinstance(eid, str) or not eid:
                raise MemoryError_(f"entry ids must be non-empty strings, got {eid!r}")
            blocks = self._blocks_with_id(eid)
            if not blocks:
                raise NotFoundError(f"no entry with id {eid!r}")  # before anything changes
            found[eid] = blocks
        forgotten = []
        for blocks in found.values():
            kind, b = blocks[0]
            sector: Sector = (
                "episodic" if kind == "episodic" or b.meta.get("sec") == "episodic" else "semantic"
            )
            entry = self._entry(b, sector)
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
                self._reached(kind, b)
                self._touch(kind)
            home = blocks[0][0]
            line = f"- [{self.today}] Forgotten: {eid} (forgotten by request)"
            self.docs[home].append_log(line)
            self._touch(home)
            report.log_lines.append(line)
        report.scrubbed_lines = self._scrub(texts)
        return report

    def _scrub(self, texts: set[str]) -> int:
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
        for kind, doc in self.docs.items():
            for section in doc.sections:
                for blk in section.blocks:
                    if isinstance(blk, RawBlock):
                        new = [scrub(x) for x in blk.lines]
                        if new != blk.lines:
                            count += sum(a != b for a, b in zip(new, blk.lines, strict=True))
                            blk.lines = new
                            self._touch(kind)
                    elif not blk.removed and blk.body:
                        body = [scrub(x) for x in blk.body]
                        if body != blk.body:
                            count += sum(a != b for a, b in zip(body, blk.body, strict=True))
                            blk.body = body
                            blk.dirty = True
                            self._touch(kind)
        return count

    # -- maintenance ---------------------------------------------------------------------------
    def _proposals(self) -> list[tuple[Sector, EntryBlock, Proposal]]:
        out = []
        for kind in SECTORS:
            for b in self.docs[kind].entries():
                entry = self._entry(b, kind)
                if entry.state == "active":
                    continue
                out.append(
                    (
                        kind,
                        b,
                        Proposal(
                            entry=entry,
                            action=evidence.proposal_action(entry.moved)
                            if entry.stale is not None
                            else rules.disposal(b.original),
                            reason=entry.stale or self._flag_reason(kind, b),
                        ),
                    )
                )
        return out

    def _flag_reason(self, kind: FileKind, b: EntryBlock) -> str:
        if b.confidence == 0.0:
            return "explicitly contradicted (confidence 0.00)"
        if b.meta.get("gone") and b.confidence >= FLAG_THRESHOLD:
            src = toolmem.decode_src(b.meta.get("src", "")) or "its source file"
            return f"imported from {src}, which the tool deleted on {b.meta['gone']}"
        if kind == "episodic":
            return (
                f"episodic entry, salience {b.salience or 0.0:.3f}, confidence {b.confidence:.3f}"
            )
        u = b.meta.get("u", "0")
        return f"confidence decayed to {b.confidence:.2f}, unreinforced for {u} sessions"

    def memory_maintenance(
        self, decisions: Mapping[str, str] | None = None, dry_run: bool = False
    ) -> MaintenanceReport:
        if not isinstance(dry_run, bool):
            raise MemoryError_(f"dry_run must be true or false, got {dry_run!r}")
        proposals = self._proposals()
        by_id = {b.id: (kind, b, p) for kind, b, p in proposals}
        chosen: list[tuple[Sector, EntryBlock, Proposal]]
        rewrites: dict[str, str] = {}
        if decisions is None:  # a stale entry waits for a person (core/evidence.py)
            chosen = [x for x in proposals if x[2].action not in evidence.WAITING]
        else:
            if not isinstance(decisions, Mapping):
                raise MemoryError_("decisions must map entry ids to remove|archive|reinforce")
            chosen = []
            for eid, action in decisions.items():
                if action not in DECISIONS:
                    raise MemoryError_(
                        f"decision for {eid!r} must be one of "
                        f"{', '.join(DECISIONS)}, got {action!r}"
                    )
                if eid not in by_id:
                    self.find(eid)  # raises NotFoundError for an unknown id
                    raise RejectedError(f"entry {eid!r} is not flagged for maintenance")
                kind, b, p = by_id[eid]
                if action == "rewrite":
                    rewrites[eid] = self._rewritten(b, p.entry)  # validated before any change
                chosen.append(
                    (
                        kind,
                        b,
                        Proposal(
                            entry=p.entry,
                            action=action,  # type: ignore[arg-type]
                            reason=p.reason,
                        ),
                    )
                )
        report = MaintenanceReport(
            dry_run=dry_run, proposals=[p for _, _, p in proposals], applied=[], log_lines=[]
        )
        if dry_run:
            return report
        for kind, b, p in chosen:
            if p.action == "rewrite":
                line = self._rewrite(b, rewrites[b.id], p.entry)
            elif p.entry.stale is not None and p.action == "reinforce" and self._keep(b, p.entry):
                line = self._log(kind, "Kept", b.text, f"user confirmed it despite: {p.reason}")
            elif p.action == "reinforce":
                before = b.confidence
                b.confidence = REINFORCED_BY_REVIEW
                if kind == "episodic" and (b.salience or 0.0) < 0.1:
                    b.salience = REINFORCED_BY_REVIEW
                b.meta["r"] = "1"
                b.meta["u"] = "0"
                b.meta.pop("gone", None)  # kept by review: no longer waiting on its file
                b.dirty = True
                self._reached(kind, b)
                line = self._log(
                    kind,
                    "Reinforced",
                    b.text,
                    f"user confirmed, confidence {before:.2f} → {b.confidence:.2f}",
                )
            else:
                line = self._dispose(kind, b, p.action, p.reason)
            report.applied.append(p)
            report.log_lines.append(line)
        return report

    # -- evidence (core/evidence.py has the rule, common/worktree.py looks at the tree) ----------
    def evidence_plan(self, root: str) -> evidence.Plan:
        return evidence.plan(((b.text, b.date) for b in self.docs["semantic"].entries()), root)

    def record_evidence(self, checked: evidence.Plan, probe: evidence.Probe) -> None:
        ids = [b.id for b in self.docs["semantic"].entries()]
        after = evidence.record(self.state.evidence, checked, probe, self.today, ids)
        if after != self.state.evidence:
            self.state.evidence = after
            self.state.changed = True
            self.generation += 1  # entries' states may have changed: caches key on it

    def _rewritten(self, b: EntryBlock, entry: Entry) -> str:
        """The entry's text with its renamed paths replaced, checked as a save checks a fact."""
        if not entry.moved:
            raise RejectedError(f"entry {b.id!r} names no path git saw renamed: nothing to rewrite")
        text = _validate_fact(
            evidence.rewritten(b.text, entry.moved, self.state.evidence.root), name="fact"
        )
        screened = screen(text)
        if screened.empty or screened.kinds:
            raise RejectedError(f"the rewritten text of {b.id!r} would not pass the privacy screen")
        return " ".join(screened.text.split())

    def _rewrite(self, b: EntryBlock, text: str, entry: Entry) -> str:
        old = b.text
        b.text = text
        b.dirty = True
        self._reached("semantic", b)
        self._touch("semantic")
        moves = ", ".join(f"`{a}` → `{n}`" for a, n in (entry.moved or {}).items())
        return self._log("semantic", "Rewritten", old, f'renamed {moves}; now "{log_quote(text)}"')

    def _keep(self, b: EntryBlock, entry: Entry) -> bool:
        """A person kept a stale entry: its missing paths stop flagging it. True when that is
        all the review had to do (its scores alone would not have flagged it)."""
        found = evidence.finding(b.text, b.id, self.state.evidence)
        if found is not None:
            self.state.evidence = evidence.kept_after_review(self.state.evidence, b.id, found)
            self.state.changed = True
            self.generation += 1
        return rules.state_of(b.confidence, b.salience) == "active" and not b.meta.get("gone")

    # -- reads -----------------------------------------------------------------------------------
    def view(self) -> MemoryView:
        """An immutable snapshot for readers (the daemon serves reads from it)."""
        return MemoryView(
            semantic=tuple(self.semantic_entries()),
            episodic=tuple(self.episodic_entries()),
            archived=tuple(self.archived_entries()),
            problem_map=self.problems(),
            reinforce_on=self.settings.reinforce_on,
            shown={k: frozenset(v) for k, v in self.state.shown.items()},
            indexed={
                tool: frozenset(f"{tool}:{name}" for name in info.get("files", ()))
                for tool, info in self.state.indexes.items()
            },
        )

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = 500,
        session_id: object = None,
        unseen_only: bool = False,
        for_tool: object = None,
    ) -> ContextResult:
        return self.view().build_context(task, query, max_tokens, session_id, unseen_only, for_tool)

    def summary(self) -> dict[str, Any]:
        return self.view().summary()


@dataclass(frozen=True)
class MemoryView:
    """Read side of a ``Memory``: entries as values, and the context build over them."""

    semantic: tuple[Entry, ...]
    episodic: tuple[Entry, ...]
    archived: tuple[Entry, ...]
    problem_map: dict[str, list[str]]
    reinforce_on: str = "injected"
    shown: Mapping[str, frozenset[str]] = field(default_factory=dict)  # session tag -> ids
    # tool -> the sources its own index points to (what it loads); absent: no index known
    indexed: Mapping[str, frozenset[str]] = field(default_factory=dict)
    _index: list[ctx.ContextIndex] = field(default_factory=list, compare=False, repr=False)
    _results: dict[tuple[Any, ...], ContextResult] = field(
        default_factory=dict, compare=False, repr=False
    )

    def semantic_entries(self) -> list[Entry]:
        return list(self.semantic)

    def episodic_entries(self) -> list[Entry]:
        return list(self.episodic)

    def archived_entries(self) -> list[Entry]:
        return list(self.archived)

    def problems(self) -> dict[str, list[str]]:
        return self.problem_map

    def origin_ids(self, tool: str) -> frozenset[str]:
        """The ids of the facts imported from ``tool``'s own memory that it loads itself: for a
        tool with an index (Claude Code's MEMORY.md), only the files the index points to; a
        fact whose index line it lost is one it no longer sees, so it is served (issue 29)."""
        pointed = self.indexed.get(tool)
        return frozenset(
            e.id
            for e in self.semantic
            if toolmem.source_tool(e.origin) == tool and (pointed is None or e.origin in pointed)
        )

    def index(self) -> ctx.ContextIndex:
        if not self._index:  # built once per view, on first use (a race builds it twice: fine)
            self._index.append(
                ctx.ContextIndex(
                    [
                        ctx.Candidate(
                            e.id,
                            e.text,
                            e.confidence,
                            last_referenced=e.last_referenced or "",
                            stated=e.source is not None
                            and e.original_confidence >= ctx.INSTRUCTION_MIN,
                        )
                        for e in self.semantic
                        if e.stale is None  # a path it names is gone: not served as fact
                    ],
                    [
                        ctx.Candidate(
                            e.id,
                            e.text,
                            e.confidence,
                            e.salience,
                            last_referenced=e.last_referenced or "",
                            date=e.date,
                        )
                        for e in self.episodic
                    ],
                )
            )
        return self._index[0]

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = 500,
        session_id: object = None,
        unseen_only: bool = False,
        for_tool: object = None,
    ) -> ContextResult:
        """``unseen_only`` (a prompt's block; needs ``session_id``): only entries relevant to
        the task or query that no earlier build for this session has shown. ``for_tool`` (an
        agent tool, ``core/toolmem.TOOLS``): leave out the facts imported from that tool's own
        memory, which it loads itself (issue 20: served back without doubling)."""
        if for_tool is not None and for_tool not in toolmem.TOOLS:
            raise MemoryError_(
                f"for_tool must be one of {', '.join(toolmem.TOOLS)}, got {for_tool!r}"
            )
        for name, value in (("task", task), ("query", query)):
            if value is not None and not isinstance(value, str):
                raise MemoryError_(f"{name} must be a string, got {type(value).__name__}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise MemoryError_(f"max_tokens must be a whole number >= 0, got {max_tokens!r}")
        if session_id is not None:
            _validate_session(session_id)
        if not isinstance(unseen_only, bool):
            raise MemoryError_(f"unseen_only must be true or false, got {unseen_only!r}")
        if unseen_only and session_id is None:
            raise MemoryError_("unseen_only needs a session_id")
        if isinstance(task, str):
            # A prompt as the task may carry the memory's own block (Gemini's BeforeAgent):
            # relevance to it would reference every injected entry. The person's words only.
            task = strip_injected(task) or None
        exclude: frozenset[str] = frozenset()
        if unseen_only:
            exclude = self.shown.get(session_tag(str(session_id)), frozenset())
        if for_tool is not None:
            exclude = exclude | self.origin_ids(str(for_tool))
        # A view never changes, so the same question always has the same answer.
        key = (task, query, max_tokens, unseen_only, exclude)
        cached = self._results.get(key)
        if cached is None:
            cached = self.index().build(
                task,  # type: ignore[arg-type]
                query,  # type: ignore[arg-type]
                max_tokens,
                self.reinforce_on,
                relevant_only=unseen_only,
                exclude=exclude,
            )
            if len(self._results) >= RESULT_CACHE:
                self._results.clear()
            self._results[key] = cached
        return cached

    def summary(self) -> dict[str, Any]:
        return {
            "semantic": len(self.semantic),
            "episodic": len(self.episodic),
            "archived": len(self.archived),
            "flagged": sum(1 for e in self.semantic + self.episodic if e.state != "active"),
            "problems": self.problem_map,
        }


def _screened_episodic(raw: str) -> str:
    """Episodic text on its way to disk: <private> spans gone, a secret replaced by a marker
    (the other words are kept); an entirely private text is refused."""
    screened = screen(raw)
    if screened.empty:
        raise RejectedError("the context is entirely <private>; nothing saved")
    return screened.text.strip()


def _episodic_body(raw: str) -> list[str]:
    """Body lines of an episodic entry: a line starting with '#' is escaped, so a note cannot
    end its entry or open a section; trailing blank lines dropped."""
    body = [
        ("\\" + line if line.lstrip().startswith("#") else line).rstrip()
        for line in raw.splitlines()
    ]
    while body and not body[-1].strip():
        body.pop()
    return body


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


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
