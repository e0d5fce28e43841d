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
from . import rules, toolmem
from .contradiction import classify, same_rule
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
from .signals import detect_signals

FILES: dict[FileKind, str] = {
    "semantic": layout.MEMORY_FILES["semantic"],
    "episodic": layout.MEMORY_FILES["episodic"],
    "archive": layout.MEMORY_FILES["archive"],
}
STATE_FILE = layout.STATE_FILE
SECTORS: tuple[Sector, Sector] = ("semantic", "episodic")
LEDGER_LIMIT = 2000
RESULT_CACHE = 256  # context results kept per snapshot
Decision = Literal["remove", "archive", "reinforce"]
DECISIONS: tuple[str, ...] = ("remove", "archive", "reinforce")


@dataclass
class Settings:
    """Tunable behaviour; zero is honoured as a value everywhere (no ``x or default``)."""

    injection: Literal["relevant", "all"] = "relevant"
    episodic_cap: int = EPISODIC_CAP
    default_max_tokens: int = 500

    def __post_init__(self) -> None:
        if self.injection not in ("relevant", "all"):
            raise MemoryError_(f"injection must be 'relevant' or 'all', got {self.injection!r}")
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

    sessions: dict[str, str] = field(default_factory=dict)  # session id -> date applied
    # tool memory source -> {"id", "sig", "hash"[, "blocked"]} (core/toolmem.py)
    imports: dict[str, dict[str, str]] = field(default_factory=dict)
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
            imports = data.get("imports", {})
            if not isinstance(imports, dict):
                raise ValueError("imports is not an object")
            return cls(
                sessions={str(k): str(v) for k, v in sessions.items()},
                imports={
                    str(k): {str(a): str(b) for a, b in v.items()}
                    for k, v in imports.items()
                    if isinstance(v, dict)
                },
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
        if self.imports:
            data["imports"] = self.imports
        return json.dumps(data, indent=1) + "\n"


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
            source=toolmem.decode_src(src) if src else None,
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
        sid = _validate_session(session_id) if session_id is not None else uuid.uuid4().hex
        created = self.ensure_files()
        if sid in self.state.sessions:
            return InitReport(
                session_id=sid, created=created, applied=False, flagged=self._flagged_entries()
            )
        semantic = self.semantic_decay()
        sweep = self.decay_sweep()
        self.state.sessions[sid] = self.today
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
        quoted = " ".join(text.split()).replace('"', "'")
        if len(quoted) > 120:
            quoted = quoted[:119] + "…"
        line = f'- [{self.today}] {verb}: "{quoted}" ({why})'
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
            b.text,
            b.confidence,
            b.date or self.today,
            meta,
            category=b.category,
            body=[f"- archived {self.today} from {FILES[kind]}: {note}"],
        )
        insert_entry(self.docs["archive"], ARCHIVED_HEADING, block, top=False)
        self._touch("archive")

    def _dispose(self, kind: FileKind, b: EntryBlock, action: str, why: str) -> str:
        b.removed = True
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
        verdict = classify(text, [(b.id, b.text) for b in same])
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
        body = [
            ("\\" + line if line.lstrip().startswith("#") else line).rstrip()
            for line in raw.splitlines()
        ]
        while body and not body[-1].strip():
            body.pop()
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
        self._touch("episodic")
        self._enforce_cap()
        return self._entry(new, "episodic")

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
        self._touch(kind)
        return self._entry(b, kind)

    def reinforce_referenced(self, entry_ids: Iterable[str], session_id: str) -> list[Entry]:
        """Reference reinforcement after a context build for ``session_id``."""
        sid = _validate_session(session_id)
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
        for found in detect_signals(user_message, assistant_response):
            try:
                _validate_fact(found.fact, name="fact")
            except MemoryError_:
                # A phrase that cannot be stored (an HTML comment marker, a lone surrogate) is
                # no signal; raising here would leave the signals saved before it half-applied.
                continue
            result = self.save_semantic(found.fact, found.category, found.confidence)
            out.append(
                Signal(
                    fact=found.fact,
                    category=found.category,
                    confidence=found.confidence,
                    action=result.action,
                    entry_id=result.entry.id if result.entry else None,
                )
            )
        return out

    # -- tool memories (core/toolmem.py has the rule) --------------------------------------------
    def import_notes(self, notes: list[toolmem.Note], tools: list[str]) -> toolmem.ImportReport:
        """Import what the agent tools' own memories hold (see ``core/toolmem.py``)."""
        return toolmem.import_notes(self, notes, tools)

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
                            action=rules.disposal(b.original),
                            reason=self._flag_reason(kind, b),
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
        if decisions is None:
            chosen = proposals
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
            if p.action == "reinforce":
                before = b.confidence
                b.confidence = REINFORCED_BY_REVIEW
                if kind == "episodic" and (b.salience or 0.0) < 0.1:
                    b.salience = REINFORCED_BY_REVIEW
                b.meta["r"] = "1"
                b.meta["u"] = "0"
                b.meta.pop("gone", None)  # kept by review: no longer waiting on its file
                b.dirty = True
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

    # -- reads -----------------------------------------------------------------------------------
    def view(self) -> MemoryView:
        """An immutable snapshot for readers (the daemon serves reads from it)."""
        return MemoryView(
            semantic=tuple(self.semantic_entries()),
            episodic=tuple(self.episodic_entries()),
            archived=tuple(self.archived_entries()),
            problem_map=self.problems(),
            injection=self.settings.injection,
        )

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = 500,
        session_id: object = None,
        exclude_source: object = None,
    ) -> ContextResult:
        return self.view().build_context(task, query, max_tokens, session_id, exclude_source)

    def summary(self) -> dict[str, Any]:
        return self.view().summary()


@dataclass(frozen=True)
class MemoryView:
    """Read side of a ``Memory``: entries as values, and the context build over them."""

    semantic: tuple[Entry, ...]
    episodic: tuple[Entry, ...]
    archived: tuple[Entry, ...]
    problem_map: dict[str, list[str]]
    injection: str = "relevant"
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

    def index(self, exclude_source: str | None = None) -> ctx.ContextIndex:
        if exclude_source is not None:
            # A tool loads what it imported from itself: leave those facts out of its context.
            kept = [e for e in self.semantic if toolmem.source_tool(e.source) != exclude_source]
            if len(kept) < len(self.semantic):
                return ctx.ContextIndex(
                    [ctx.Candidate(e.id, e.text, e.confidence) for e in kept],
                    [ctx.Candidate(e.id, e.text, e.confidence, e.salience) for e in self.episodic],
                )
        if not self._index:  # built once per view, on first use (a race builds it twice: fine)
            self._index.append(
                ctx.ContextIndex(
                    [ctx.Candidate(e.id, e.text, e.confidence) for e in self.semantic],
                    [ctx.Candidate(e.id, e.text, e.confidence, e.salience) for e in self.episodic],
                )
            )
        return self._index[0]

    def build_context(
        self,
        task: object = None,
        query: object = None,
        max_tokens: object = 500,
        session_id: object = None,
        exclude_source: object = None,
    ) -> ContextResult:
        if exclude_source is not None and exclude_source not in toolmem.TOOLS:
            raise MemoryError_(
                f"exclude_source must be one of {', '.join(toolmem.TOOLS)}, got {exclude_source!r}"
            )
        for name, value in (("task", task), ("query", query)):
            if value is not None and not isinstance(value, str):
                raise MemoryError_(f"{name} must be a string, got {type(value).__name__}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise MemoryError_(f"max_tokens must be a whole number >= 0, got {max_tokens!r}")
        if session_id is not None:
            _validate_session(session_id)
        # A view never changes, so the same question always has the same answer.
        key = (task, query, max_tokens, exclude_source)
        cached = self._results.get(key)
        if cached is None:
            index = self.index(exclude_source)
            cached = index.build(task, query, max_tokens, self.injection)  # type: ignore[arg-type]
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


def _new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
