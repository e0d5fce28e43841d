"""Value types of the memory core: entries, results and the fixed vocabularies.

Every result is a dataclass with ``to_dict()`` returning JSON-safe values, so the daemon, the
client and the CLI can ship results without knowing their shape.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from ..common.errors import MaestroError
from ..common.hidden import describe_removed, remove_hidden
from ..common.layout import CATEGORY_HEADINGS as CATEGORY_HEADINGS
from ..common.limits import FACT_MAX_CHARS, TOO_LARGE, fact_too_long

Sector = Literal["semantic", "episodic"]
SaveAction = Literal["added", "replaced", "reinforced", "rejected"]
# "stale": a project path the entry names is gone (core/evidence.py); it waits for review.
# "proposed": a statement the prompt door was not sure is meant to last (core/durable.py);
# kept, shown for review, not served until confirmed (core/proposals.py).
# "superseded": a newer rule may replace it (core/frame.py could not tell): both kept and
# served, the older marked, both wait in review.
EntryState = Literal["active", "flagged", "contradicted", "stale", "proposed", "superseded"]

# The semantic categories (key -> the spec's ``##`` heading in semantic.md, in file order).
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_HEADINGS)  # the category list: defined above, once
HEADING_CATEGORIES: dict[str, str] = {v.lower(): k for k, v in CATEGORY_HEADINGS.items()}

# The spec's numbers, in one place.
DEFAULT_SEMANTIC_CONFIDENCE = 0.5
DEFAULT_EPISODIC_CONFIDENCE = 0.7
HAND_ENTRY_CONFIDENCE = 1.0  # a line a person typed into semantic.md is an explicit statement
SEMANTIC_DECAY = 0.05
DECAY_FLOOR = 0.01  # decay never reaches 0.0: zero means "explicitly contradicted"
EPISODIC_FACTOR = 0.8
FLAG_THRESHOLD = 0.2
PRUNE_SALIENCE = 0.1
MAX_SALIENCE = 2.0
EPISODIC_CAP = 20
ARCHIVE_ORIGINAL = 0.5  # removal of an entry that was ever above this archives it instead
REINFORCED_BY_REVIEW = 0.5
# A fact an agent tool's model chose to keep in its own memory (core/toolmem.py): the spec's
# "successful execution without feedback" (0.7), below what a person states outright (1.0)
# and above a bare save (0.5). One session without reference decays it like any other fact.
IMPORT_CONFIDENCE = 0.7


class InputError(MaestroError, ValueError):
    """Base of the core's input errors (a ValueError: bad input changes nothing). The whole
    error tree, from ``MaestroError`` down, is drawn in ``common/errors.py``."""

    code = "bad_request"


class TooLarge(InputError):
    """A memory's text (or a memory file) over its limit (``common/limits.py``)."""

    code = TOO_LARGE


class NotFoundError(InputError):
    """An entry id that names no entry."""

    code = "not_found"


class RejectedError(InputError):
    """A well-formed request the memory refuses (e.g. a decision for an entry not flagged)."""

    code = "rejected"


class MemoryWriteError(MaestroError, OSError):
    """Writing the memory files failed; the previous files are intact."""

    code = "internal"


class UnsafeMemory(MaestroError):
    """A memory folder or file the core refuses to read or write (``core/fsio.py``): nothing
    was read, served or written. Not an ``OSError``, so no handler of disk errors swallows it."""

    code = "unsafe_memory"


class LinkRefused(UnsafeMemory):
    """A symbolic link where a memory folder or file belongs (the message names it)."""

    code = "link_refused"


class UntrustedFolder(UnsafeMemory):
    """A memory folder another user owns or could write, not trusted on purpose."""

    code = "untrusted_folder"


class ProjectMissing(UnsafeMemory):
    """A write to a project whose folder is gone: it is never re-created."""

    code = "project_missing"


def validate_confidence(value: object, *, name: str = "confidence") -> float:
    """Return ``value`` as a float in [0.0, 1.0] or raise a ValueError naming the problem."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{name} must be a number between 0.0 and 1.0, got {value!r}")
    number = float(value)
    if number != number or not 0.0 <= number <= 1.0:  # NaN fails the first test
        raise InputError(f"{name} must be between 0.0 and 1.0, got {value!r}")
    return number


def validate_size(value: object, *, name: str) -> None:
    """Raise ``TooLarge`` if ``value`` is a text over ``FACT_MAX_CHARS`` (counted as sent,
    the way the client counts before sending)."""
    if isinstance(value, str) and len(value) > FACT_MAX_CHARS:
        raise TooLarge(fact_too_long(name, len(value)))


def validate_text(value: object, *, name: str) -> str:
    """Return ``value`` stripped and without hidden characters (``core/hidden.py``), or raise
    if it is not a non-empty string, holds a NUL, or holds nothing printable."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{name} must not be empty")
    if "\x00" in value:
        raise InputError(f"{name} must not contain NUL characters")
    text, removed = remove_hidden(value)
    text = text.strip()
    if not text:
        raise InputError(
            f"{name} holds nothing printable ({describe_removed(removed)}); nothing was written"
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate: no file can store it as UTF-8
            raise InputError(
                f"{name} is not valid Unicode text (a lone surrogate at character {exc.start})"
            ) from exc
    return text


def validate_category(value: object) -> str:
    if not isinstance(value, str) or value not in CATEGORY_HEADINGS:
        raise InputError(f"unknown category {value!r}; expected one of: {', '.join(CATEGORIES)}")
    return value


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


class _ToDict:
    def to_dict(self) -> dict[str, Any]:
        result = _jsonable(self)
        assert isinstance(result, dict)
        return result


@dataclass
class Entry(_ToDict):
    """One memory, semantic or episodic, as the API shows it."""

    id: str
    sector: Sector
    text: str
    confidence: float
    date: str
    state: EntryState
    original_confidence: float
    category: str | None = None
    salience: float | None = None
    session_id: str | None = None
    unreinforced_sessions: int = 0
    # Who stated a semantic rule: "user" (an explicit signal mined from the person's own
    # prompt), "hand" (typed into semantic.md), None (saved by an agent or a tool: reference).
    source: Literal["user", "hand"] | None = None
    last_referenced: str | None = None  # the day a session last counted it as referenced
    # "<tool>:<file>[#<item>]" for a fact imported from an agent tool's own memory (core/toolmem)
    origin: str | None = None
    # Why the entry is stale ("`src/auth.py` no longer exists"), None when it is not; and the
    # paths git saw renamed (old -> new), which the review can rewrite (core/evidence.py).
    stale: str | None = None
    moved: dict[str, str] | None = None
    # The day the prompt door proposed it (state "proposed"), None once confirmed or never one.
    proposed: str | None = None
    # Linked, not merged (issue 34): the older entry a newer one may replace, and back.
    may_replace: str | None = None
    superseded_by: str | None = None


@dataclass
class SaveResult(_ToDict):
    action: SaveAction
    entry: Entry | None
    replaced: Entry | None = None
    reason: str = ""
    screened: bool = False  # rejected by the privacy screen (a secret, or entirely private)
    removed: str = ""  # the hidden characters taken out: "removed 1 control character (ESC)"
    may_replace: str | None = None  # added, linked to the entry it may replace (both kept)


@dataclass
class Signal(_ToDict):
    fact: str
    category: str
    confidence: float
    action: SaveAction
    entry_id: str | None = None
    # What the door made of it (core/durable.py): "instruction", "proposal" or "refused"
    # (not saved: action "rejected"), and why; a fact refused by the save (a secret …) says
    # why here too.
    verdict: str = "instruction"
    reason: str = ""


@dataclass
class InitReport(_ToDict):
    session_id: str
    created: list[str]
    applied: bool  # False when this session's decay had already been applied
    semantic_decayed: int = 0
    episodic_decayed: int = 0
    pruned: list[Entry] = field(default_factory=list)
    flagged: list[Entry] = field(default_factory=list)


@dataclass
class SweepReport(_ToDict):
    decayed: int
    pruned: list[Entry]
    flagged: list[Entry]


@dataclass
class Proposal(_ToDict):
    entry: Entry
    # "rewrite" (a named path was renamed) and "review" (one is gone) wait for a person's
    # decision: maintenance without decisions never applies them.
    # "confirm": a proposal (core/proposals.py) waits for a person's or a model's yes.
    action: Literal["remove", "archive", "reinforce", "rewrite", "review", "confirm"]
    reason: str


@dataclass
class MaintenanceReport(_ToDict):
    dry_run: bool
    proposals: list[Proposal]
    applied: list[Proposal]
    log_lines: list[str]

    @property
    def counts(self) -> dict[str, int]:
        counts = {"remove": 0, "archive": 0, "reinforce": 0}
        for p in self.applied:
            counts[p.action] = counts.get(p.action, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["counts"] = self.counts
        return data


@dataclass
class ForgetReport(_ToDict):
    """What ``forget`` removed (or, in a dry run, would remove). Texts are shown screened."""

    dry_run: bool
    forgotten: list[Entry]
    log_lines: list[str]
    scrubbed_lines: int = 0  # Maintenance Log lines and archive notes that quoted the text


@dataclass
class ContextResult(_ToDict):
    """What ``build_context`` produced: the block, its token estimate, the ids it holds."""

    context: str
    tokens: int
    included: list[str]
    # The ids that count as referenced, i.e. that a build for a session reinforces: every
    # included id under ``reinforce_on = "injected"``, the task/query-relevant ones under
    # ``"relevant"``.
    relevant: list[str]
