"""Saving and reinforcing: semantic saves (contradiction, restatement, tombstones), episodic
saves and session notes (with the cap), reinforcement (referenced or confirmed), and the
signals a prompt carries saved as facts.

Functions over a ``MemoryState`` (public calls only). Each validates all of its input before it
changes anything, so a ``ValueError`` leaves the state exactly as it was.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Literal

from ..common.hidden import describe_removed, remove_hidden
from ..common.limits import SAVE_MAX_BYTES, memory_full
from . import rules
from .contradiction import Verdict, classify, holds_values, same_rule, widens
from .durable import judge
from .frame import by_meaning, closest, may_replace
from .injected import strip_injected
from .markdown import ENTRIES_HEADING, EntryBlock, FileKind, fmt_confidence, insert_entry
from .model import (
    CATEGORY_HEADINGS,
    DEFAULT_EPISODIC_CONFIDENCE,
    DEFAULT_SEMANTIC_CONFIDENCE,
    Entry,
    InputError,
    NotFoundError,
    RejectedError,
    SaveResult,
    Signal,
    TooLarge,
    validate_category,
    validate_confidence,
    validate_size,
    validate_text,
)
from .proposals import confirm, propose, proposed_on
from .related import may_relate
from .secrets import redact, screen, strip_private
from .shown import split_shown
from .signals import DetectedSignal, detect_signals
from .state import (
    FILES,
    SHOWN_PER_SESSION,
    SHOWN_SESSIONS,
    MemoryState,
    new_id,
    session_tag,
    validate_fact,
    validate_session,
)


def save_semantic(
    memory: MemoryState,
    fact: object,
    category: object,
    confidence: object = None,
    *,
    held: Collection[str] = (),
    dropped: Collection[str] = (),
) -> SaveResult:
    """Save ``fact``: added, reinforcing, replacing or linked to an entry of its category.

    ``held``: the ids of entries its source still holds beside it: said in the same message,
    or still in the same tool file. The save never replaces nor links those; a person who
    lists ``hatch run test:unit`` and ``hatch run test:integration`` together keeps both. It
    may still restate one (the same rule twice is one entry).

    ``dropped``: the ids of entries its source held and no longer holds, in the edit that
    brings ``fact`` (a tool's file whose bullet was rewritten). The entry among them that
    ``fact`` would link to, or the closest in meaning at ``REWRITE_ALIKE``, is replaced: the
    source itself took it out for this one (``_rewrite_of``); a dropped entry the fact
    restates takes its words."""
    text = validate_fact(fact, name="fact")
    cat = validate_category(category)
    conf = DEFAULT_SEMANTIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
    refuse_when_full(memory, "semantic")
    result = _save_semantic(memory, text, cat, conf, held, dropped)
    result.removed = hidden_removed(fact)
    return result


REWRITE_ALIKE = 0.8  # a dropped entry this close in meaning to its source's new line: rewritten


def _may_reword(target: EntryBlock, conf: float, held: Collection[str]) -> bool:
    """Whether a restatement at ``conf`` may give ``target`` its (wider) wording. Never an
    entry its source still holds (the source keeps both) nor one a person typed into
    ``semantic.md`` (their words stay theirs); one the person stated in a prompt only for a
    restatement at least as strong: an agent's "… for installs" at 0.5 does not reword the
    person's rule at 1.00."""
    if target.id in held or target.meta.get("by") == "hand":
        return False
    return target.meta.get("by") != "user" or conf >= target.confidence


def refuse_when_full(memory: MemoryState, kind: FileKind) -> None:
    """A new memory goes only into a file below ``SAVE_MAX_BYTES`` (``common/limits.py``: the
    rest of the size limit is room for the bookkeeping), for every door: the API, the prompt
    door's signals, the agent tools' import."""
    size = len(memory.docs[kind].render().encode("utf-8", errors="surrogateescape"))
    if size > SAVE_MAX_BYTES:
        raise TooLarge(memory_full(FILES[kind], size))


def hidden_removed(raw: object) -> str:
    """What ``validate_text`` took out of ``raw``, for the reply ("removed 1 control
    character (ESC)"); empty when nothing was."""
    return describe_removed(remove_hidden(raw)[1]) if isinstance(raw, str) else ""


def _rewrite_of(
    text: str,
    verdict: Verdict,
    same: list[EntryBlock],
    held: Collection[str],
    dropped: Collection[str],
) -> Verdict:
    """``verdict``, or "replaced" when ``text`` is the rewrite of an entry its source dropped
    in the same edit: the entry the verdict links to, else the closest in meaning at
    ``REWRITE_ALIKE``. Left alone: an entry a person stated or typed (it is theirs, not the
    source's to take back), one its source holds again (an earlier line of the edit restated
    it), and a verdict that already restates or replaces."""
    if not dropped or verdict.action not in ("added", "linked"):
        return verdict
    own = [
        (b.id, b.text)
        for b in same
        if b.id in dropped and b.id not in held and b.meta.get("by") is None
    ]
    if verdict.action == "linked" and any(i == verdict.target for i, _ in own):
        return Verdict("replaced", verdict.target, f"rewritten by its source ({verdict.reason})")
    found = closest(text, own, REWRITE_ALIKE)
    if found is None:
        return verdict
    return Verdict("replaced", found[0], f"rewritten by its source (meaning {found[1]:.2f})")


def _save_semantic(
    memory: MemoryState,
    text: str,
    cat: str,
    conf: float,
    held: Collection[str],
    dropped: Collection[str],
) -> SaveResult:
    screened = screen(text)
    if screened.empty:
        return SaveResult(
            action="rejected",
            entry=None,
            reason="the fact is entirely <private>; not saved",
            screened=True,
        )
    if screened.kinds:  # a secret in a rule is refused, never stored with a hole in it
        return SaveResult(action="rejected", entry=None, reason=screened.reason(), screened=True)
    text = " ".join(screened.text.split())
    doc = memory.docs["semantic"]

    tomb = _tombstone(memory, text, cat)
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
        memory.touch("archive")

    read_at = memory.generation
    same, pairs, open_pairs = memory.categories.of(doc, read_at, cat)
    # Only the entries that may relate reach classify (same verdict: see core/related.py).
    related = may_relate(text, pairs)
    verdict = classify(text, related)
    if verdict.action in ("replaced", "linked") and verdict.target in held:
        verdict = classify(text, [pair for pair in related if pair[0] not in held])
    open_links = [pair for pair in open_pairs if pair[0] not in held] if held else open_pairs
    same_as, near = by_meaning(text, open_links) if verdict.action == "added" else (None, None)
    if same_as is not None:  # one slot by meaning, one choice by the frame: the same rule
        why = f"the same choice in other words (meaning {same_as[1]:.2f})"
        verdict = Verdict("reinforced", same_as[0], why)
    if verdict.action == "reinforced" and conf > 0.0:
        old_text = next(b.text for b in same if b.id == verdict.target)
        if not (holds_values(old_text, text) or widens(old_text, text)):
            # The same rule with a value the entry lacks: reinforcing would lose that value.
            # Beside an entry its source still holds, it stands; else the two are linked.
            if verdict.target in held:
                verdict = Verdict("added", None, "beside a rule its source keeps, other values")
            else:
                why = f"restated with other values ({verdict.reason})"
                verdict = Verdict("linked", verdict.target, why)
    verdict = _rewrite_of(text, verdict, same, held, dropped)
    heading = CATEGORY_HEADINGS[cat]
    if verdict.action == "reinforced" and verdict.target is not None:
        target = next(b for b in same if b.id == verdict.target)
        before = memory.entry(target, "semantic")
        if conf == 0.0:
            target.confidence = 0.0
            action: Literal["reinforced", "replaced"] = "replaced"
            memory.log("semantic", "Contradicted", target.text, "restated with confidence 0.00")
        else:
            # The source's own rewrite of an entry it dropped: the entry takes its new words.
            rewrite = target.id in dropped and target.id not in held and "by" not in target.meta
            reword = rewrite or (_may_reword(target, conf, held) and widens(target.text, text))
            target.confidence = rules.restated_confidence(target.confidence, conf)
            action = "reinforced"
            if reword:
                memory.log("semantic", "Reworded", target.text, f'restated as "{text}"')
                target.text = text
        target.meta["o"] = fmt_confidence(target.original)
        target.meta["r"] = "1"
        target.meta["u"] = "0"
        target.dirty = True
        memory.reached("semantic", target)
        memory.touch("semantic")
        return SaveResult(
            action=action,
            entry=memory.entry(target, "semantic"),
            replaced=before if action == "replaced" else None,
            reason=verdict.reason,
        )

    new = EntryBlock(
        [],
        new_id("s"),
        text,
        conf,
        memory.today,
        {"id": "", "o": fmt_confidence(conf), "u": "0"},
        category=cat,
    )
    new.meta["id"] = new.id
    if verdict.action == "replaced" and verdict.target is not None:
        old = next(b for b in same if b.id == verdict.target)
        replaced = memory.entry(old, "semantic")
        section = next(s for s in doc.sections for blk in s.blocks if blk is old)
        section.blocks.insert(section.blocks.index(old), new)
        new.dirty = True
        old.removed = True
        memory.reached("semantic", old, new)
        memory.archive("semantic", old, f'replaced by "{text}" ({verdict.reason})', tomb=conf)
        memory.log("semantic", "Replaced", old.text, f'by "{text}": {verdict.reason}')
        memory.touch("semantic")
        return SaveResult(
            action="replaced",
            entry=memory.entry(new, "semantic"),
            replaced=replaced,
            reason=verdict.reason,
        )
    reason = verdict.reason
    if verdict.action == "linked" and any(i == verdict.target for i, _ in open_links):
        linked: tuple[str, float] | None = (verdict.target or "", 0.0)  # no cosine: words
        why = verdict.reason  # the patterns see a change but cannot tell it from a new item
    else:
        linked = near if verdict.action == "added" else may_replace(text, open_links)
        why = f"meaning {linked[1]:.2f}" if linked is not None else ""
    if linked is not None:  # one slot, but not certainly one rule: link, never guess
        old = next(b for b in same if b.id == linked[0])
        new.meta["may"] = old.id
        old.meta["sup"] = new.id
        old.dirty = True
        memory.reached("semantic", old)
        reason = f"may replace {old.id} ({why}): both kept, see review"
        memory.log("semantic", "Linked", old.text, f'may be replaced by "{text}"')
    insert_entry(doc, heading, new, top=False)
    memory.reached("semantic", new)
    memory.touch("semantic")
    if linked is None:  # only the new entry changed (the tombstone is archive.md's)
        memory.categories.appended(doc, cat, new, read_at, memory.generation)
    return SaveResult(
        action="added",
        entry=memory.entry(new, "semantic"),
        replaced=None,
        reason=reason,
        may_replace=linked[0] if linked is not None else None,
    )


def _tombstone(memory: MemoryState, text: str, category: str) -> tuple[EntryBlock, float] | None:
    for b in reversed(memory.docs["archive"].entries()):
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
    memory: MemoryState, context_text: object, session_id: object, confidence: object = None
) -> Entry:
    validate_size(context_text, name="context")
    raw = validate_text(context_text, name="context")
    sid = validate_session(session_id)
    conf = DEFAULT_EPISODIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
    refuse_when_full(memory, "episodic")
    raw = _screened_episodic(raw)
    body = _episodic_body(raw)
    text = " ".join(raw.split())
    new = EntryBlock(
        [],
        new_id("e"),
        text,
        conf,
        memory.today,
        {"id": "", "o": f"{conf:.3f}".rstrip("0").rstrip(".")},
        salience=1.0,
        session_id=sid,
        body=body,
    )
    new.meta["id"] = new.id
    doc = memory.docs["episodic"]
    insert_entry(doc, ENTRIES_HEADING, new, top=True)
    memory.reached("episodic", new)
    memory.touch("episodic")
    _enforce_cap(memory)
    return memory.entry(new, "episodic")


def save_session_note(
    memory: MemoryState, note: object, session_id: object, confidence: object = None
) -> tuple[Entry, bool]:
    """The episodic note a session leaves (``core.digest``): one per session id. A resumed
    session's note replaces its earlier one in place (fresh: salience 1.0, today's date)
    instead of adding a second. Returns the entry and whether it was an update."""
    validate_size(note, name="note")
    raw = _screened_episodic(validate_text(note, name="note"))
    sid = validate_session(session_id)
    conf = DEFAULT_EPISODIC_CONFIDENCE if confidence is None else validate_confidence(confidence)
    for b in memory.docs["episodic"].entries():
        if b.session_id == sid and b.meta.get("kind") == "session":
            b.text = " ".join(raw.split())
            b.body = _episodic_body(raw)
            b.salience, b.confidence, b.date = 1.0, conf, memory.today
            b.meta["o"] = f"{conf:.3f}".rstrip("0").rstrip(".")
            b.dirty = True
            memory.reached("episodic", b)
            memory.touch("episodic")
            return memory.entry(b, "episodic"), True
    entry = save_episodic(memory, raw, sid, conf)
    for b in memory.docs["episodic"].entries():
        if b.id == entry.id:  # (not there if a cap of 0 disposed of it at once)
            b.meta["kind"] = "session"
            b.dirty = True
    return entry, False


def _enforce_cap(memory: MemoryState) -> None:
    entries = memory.docs["episodic"].entries()
    excess = len(entries) - memory.settings.episodic_cap
    if excess <= 0:
        return
    # Lowest salience first, then oldest (earlier date; lower in the file).
    order = sorted(enumerate(entries), key=lambda p: (p[1].salience or 0.0, p[1].date, -p[0]))
    for _, b in order[:excess]:
        memory.dispose(
            "episodic",
            b,
            rules.disposal(b.original),
            f"episodic cap of {memory.settings.episodic_cap} entries, salience "
            f"{b.salience or 0.0:.3f}",
        )


def reinforce(
    memory: MemoryState, entry_id: object, confirmed: bool = False, session_id: str | None = None
) -> Entry:
    if not isinstance(confirmed, bool):
        raise InputError(f"confirmed must be true or false, got {confirmed!r}")
    kind, b = memory.find(entry_id)
    if session_id is not None:
        tag = session_tag(session_id)
        if b.meta.get("rs") == tag:
            return memory.entry(b, kind)  # at most once per entry per session
        b.meta["rs"] = tag
        b.meta["ref"] = memory.today  # rotation: least recently referenced goes first
    original = b.original
    if kind == "semantic" and confirmed:
        confirm(memory, b, "by a confirmed reinforce")  # a person's or a model's yes (MCP)
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
    memory.reached(kind, b)
    memory.touch(kind)
    return memory.entry(b, kind)


def mark_shown(memory: MemoryState, session_id: str, entry_ids: Iterable[str]) -> None:
    """Remember that a context for ``session_id`` showed these entries (sidecar ledger)."""
    tag = session_tag(validate_session(session_id))
    seen = memory.state.shown.pop(tag, [])  # re-inserted: most recently used last
    new = [i for i in entry_ids if i not in seen]
    memory.state.shown[tag] = (seen + new)[-SHOWN_PER_SESSION:]
    if new:
        memory.state.changed = True
    while len(memory.state.shown) > SHOWN_SESSIONS:
        del memory.state.shown[next(iter(memory.state.shown))]


def reinforce_referenced(
    memory: MemoryState, entry_ids: Iterable[str], session_id: str
) -> list[Entry]:
    """Reference reinforcement after a context build for ``session_id``; the ids are also
    remembered as shown to that session (``unseen_only`` builds leave them out)."""
    sid = validate_session(session_id)
    entry_ids = list(entry_ids)
    mark_shown(memory, sid, entry_ids)
    out = []
    for eid in entry_ids:
        try:
            out.append(reinforce(memory, eid, confirmed=False, session_id=sid))
        except NotFoundError:
            continue  # removed since the build: nothing to reinforce
    return out


def detect_semantic_signals(
    memory: MemoryState, user_message: object, assistant_response: object = ""
) -> list[Signal]:
    """``read_signals`` then ``save_signals``: detection and the saves in one call."""
    return save_signals(memory, read_signals(user_message, assistant_response))


def read_signals(user_message: object, assistant_response: object = "") -> list[DetectedSignal]:
    """The signals of one exchange, read from the text alone (no memory: pure, so the daemon
    runs it off its writer thread; issue 36): what the memory injected and what the person
    shows left out, ``<private>`` spans gone, facts that cannot be stored dropped."""
    if not isinstance(user_message, str):
        raise InputError(f"user_message must be a string, got {type(user_message).__name__}")
    if not isinstance(assistant_response, str):
        raise InputError(
            f"assistant_response must be a string, got {type(assistant_response).__name__}"
        )
    return stated_signals(user_message, assistant_response)


def save_signals(memory: MemoryState, found: Iterable[DetectedSignal]) -> list[Signal]:
    """Save what ``read_signals`` found, each as the person's own standing instruction."""
    out = []
    said: set[str] = set()  # one message's rules stand side by side: none replaces another
    for signal in found:
        if signal.verdict == "refused":  # a one-off (core/durable.py): not saved, reason shown
            out.append(
                Signal(
                    fact=redact(signal.fact),
                    category=signal.category,
                    confidence=signal.confidence,
                    action="rejected",
                    verdict=signal.verdict,
                    reason=signal.reason,
                )
            )
            continue
        result = save_semantic(memory, signal.fact, signal.category, signal.confidence, held=said)
        if result.entry is not None:
            said.add(result.entry.id)
        reason = result.reason if result.action == "rejected" else signal.reason
        if result.entry is not None and result.entry.confidence > 0.0:
            # Stated by the person in their own prompt: theirs (served once not a proposal).
            _, block = memory.find(result.entry.id)
            block.meta["by"] = "user"
            block.dirty = True
            was = proposed_on(block)
            if result.action == "added" and signal.verdict == "proposal":
                propose(memory, block)
            elif was is not None and (signal.verdict == "instruction" or was < memory.today):
                confirm(memory, block, "by saying it again")
                reason = "said again: proposal confirmed"
            result.entry = memory.entry(block, "semantic")
        out.append(
            Signal(
                fact=redact(signal.fact),  # a rejected fact is shown without its secret
                category=signal.category,
                confidence=signal.confidence,
                action=result.action,
                entry_id=result.entry.id if result.entry else None,
                verdict="proposal"
                if result.entry is not None and result.entry.proposed is not None
                else signal.verdict,
                reason=reason,
            )
        )
    return out


def stated_signals(user_message: str, assistant_response: str = "") -> list[DetectedSignal]:
    """The rules the person states in ``user_message``, as ``detect_semantic_signals`` would
    save them, each with the door's verdict (core/durable.py; pure: no state, so the daemon
    judges off its writer thread). A hook whose save failed uses it to tell the person what
    was not remembered."""
    # Never learn from our own output: the injected memory and its wrappers go first.
    user_message = strip_injected(user_message)
    # Pasted is not said (issue 27): rules come from the person's words, never from what they
    # show (a quoted bug report, a log, an email, text to translate …).
    user_message = split_shown(user_message).own
    user_message = strip_private(user_message)
    assistant_response = strip_private(assistant_response)
    out = []
    for found in detect_signals(user_message, assistant_response):
        try:
            fact = validate_fact(found.fact, name="fact")  # hidden characters out, too
        except InputError:
            # A phrase that cannot be stored (an HTML comment marker, a lone surrogate) is
            # no signal; raising here would leave the signals saved before it half-applied.
            continue
        verdict = judge(fact, found.confidence, user_message)
        out.append(
            DetectedSignal(fact, found.category, found.confidence, verdict.level, verdict.reason)
        )
    return out


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
