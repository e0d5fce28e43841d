"""The frame of a rule, and what a new rule's frame says about an old one (issue 34, point 2).

``compare(old, new)`` reads each text's frame and gives a verdict only where the frame decides
it; ``None`` leaves the pair to the rest of ``contradiction.classify``. Deterministic and
lexical; the meaning layer (``similar``) only says how close two texts are. The rules:

* **Short rules**: both texts of ``MAX_WORDS`` words or fewer; a longer one's clauses are
  conditions and asides ("If `gofumpt` is not available, use …") the frame cannot read.
* **Clauses**: a text splits into clauses at ``, ; . —`` and ``but``. A clause is *negative*
  when it holds a negation (``never``, ``not``, ``don't``, ``no longer``, ``avoid``, ``stop`` …).
* **Values**: the words a rule chooses or refuses: a known tool (``FAMILIES``: ``pnpm``,
  ``jest`` …), a code span, a flag (``--pre``), a path, a word holding a digit.
* **Chosen / rejected**: the values of a positive clause are *chosen*, those of a short
  negative clause (``SHORT_REFUSAL`` words: "never npm", "not pnpm") and the object of
  ``instead of`` / ``rather than`` / ``switch from`` / ``over`` (after ``prefer``) are
  *rejected*.
* **Switched** -> replaced: the new rule rejects a value the old one chose and chooses another
  of the same known family (package managers, test runners …), and neither text holds a
  condition (``if``, ``unless``, ``when``): "Always use pnpm" -> "Use yarn, not pnpm"; "From
  now on always use pnpm, never npm" -> "Actually, switch to bun instead of pnpm".
* **The same choice** -> reinforced: both choose the same values and refuse the same ones
  ("Always use pnpm, never npm" / "The project uses pnpm as its package manager, not npm").
* **Another subject** -> added: both rules open with the same noun and a different identifier
  after it (a letter, a number: ``Service A`` / ``Service B``, ``step 2`` / ``step 3``), then
  a verb (``runs``, ``is`` …: a count such as "needs 2 approvals" is no identifier), and
  say something different about it too ("runs on port 8001" / "… 8002"): two facts about two
  subjects, not one changed. With the rest equal ("Python 3.11 is required" -> "Python 3.12 is
  required") the identifier is the value and the frame does not decide.
* **The same choice, in other words** (``by_meaning``) -> reinforced: where classify found
  nothing ("added"), the meanings are at least ``SAME_CHOICE`` alike and ``same_choice``
  holds: the same chosen tool and refusals, the same polarity and values, ``SAME_WORDS`` of
  the content words shared, no condition, ``only`` or ``except`` ("Use pnpm for package
  management" / "Always use pnpm as the package manager": one fact from two tools' files).
* **May replace** (``may_replace``): where nothing above nor the patterns of
  ``contradiction.classify`` decided ("added") but the meanings are at least ``MAY_REPLACE``
  alike, the new rule may replace the old one: it is not guessed, the two are linked (both kept
  and served, the older marked "possibly superseded", both listed in review until a person
  resolves it). A wrong merge loses the newer text; a link loses nothing. The older stays
  served: on the replayed histories most links join two rules the final file keeps, so
  hiding the older on a link would drop live rules. Two refusals that differ in one word
  ("Never deploy on Monday" / "Never deploy on Friday") are never linked: refusals add up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .lexicon import SUBJECT_VERBS
from .rule_reading import FAMILIES, parse_rule

__all__ = [
    "MAY_REPLACE",
    "Frame",
    "by_meaning",
    "closest",
    "compare",
    "may_replace",
    "read_frame",
    "same_choice",
    "similar",
    "use_meaning",
]

SHORT_REFUSAL = 3  # a negative clause refuses its values when this short ("never npm")
MAX_WORDS = 16  # the frame reads short rules only (one instruction, one subject)
MAY_REPLACE = 0.9  # meaning this close, and no verdict from the frame or the patterns: linked
SAME_CHOICE = 0.85  # meaning this close and the same choice (``same_choice``): reinforced
SAME_WORDS = 0.5  # ... and this share of their content words in common

_CLAUSE = re.compile(r"[,;.!?]\s+|\s+[-\u2014\u2013]\s+|\s+but\s+|[,;]$|\.$", re.I)
_NEGATION = re.compile(
    r"\b(?:never|not|no\s+longer|don'?t|do\s+not|doesn'?t|avoid|stop|without|no)\b", re.I
)
_REJECT_OBJECT = re.compile(
    r"\b(?:instead\s+of|rather\s+than|switch(?:ed|ing)?\s+(?:away\s+)?from|migrat\w*\s+from|"
    r"prefer\w*\s+\S+\s+over)\s+(?P<r>[^,;.]+)",
    re.I,
)
_CONDITION = re.compile(r"\b(?:if|unless|when|whenever|where)\b", re.I)
_WORD = re.compile(r"`[^`\n]+`|[\w@~./*+#-]+")  # a code span is one word
_IDENT = re.compile(r"^(?:[A-Z]|\d+|#\d+|[ivx]+)$")
_PATH = re.compile(r"/|^[\w-]{2,}\.[a-z0-9]{1,5}$")  # src/, package.json (not "e.g")


def _value(word: str) -> str | None:
    """The value a word names (lower-cased), or None."""
    if word.startswith("`"):
        return word.strip("`").strip().lower() or None
    bare = word.strip(".,:;!?()[]\"'").lower()
    if not bare:
        return None
    if bare in FAMILIES or bare.startswith("--") or any(ch.isdigit() for ch in bare):
        return bare
    return bare if _PATH.search(bare) else None


def _values(text: str) -> frozenset[str]:
    return frozenset(v for w in _WORD.findall(text) if (v := _value(w)) is not None)


@dataclass(frozen=True)
class Frame:
    """What a rule chooses and refuses, and the subject it opens with."""

    chosen: frozenset[str]
    rejected: frozenset[str]
    head: str  # the opening noun, lower-cased ("" when the rule opens otherwise)
    ident: str  # the identifier after it ("A", "2"), "" when none
    rest: str  # the words after the identifier, lower-cased


@lru_cache(maxsize=16384)
def read_frame(text: str) -> Frame:
    chosen: set[str] = set()
    rejected: set[str] = set()
    for clause in _CLAUSE.split(text):
        refused: set[str] = set()
        for match in _REJECT_OBJECT.finditer(clause):
            refused |= _values(match.group("r"))
        own = _values(_REJECT_OBJECT.sub(" ", clause))
        rejected |= refused
        if _NEGATION.search(_REJECT_OBJECT.sub(" ", clause)):
            if len(clause.split()) <= SHORT_REFUSAL:  # "never npm", "not pnpm"
                rejected |= own
        else:
            chosen |= own
    chosen -= rejected
    words = text.split()
    head = ident = rest = ""
    for i in range(min(3, len(words) - 1)):
        after = words[i + 2].lower() if i + 2 < len(words) else ""
        if (
            _IDENT.match(words[i + 1].strip(":,"))
            and words[i][:1].isalpha()
            and not words[i].endswith(":")
            and after in SUBJECT_VERBS
        ):
            head = " ".join(words[: i + 1]).lower()
            ident = words[i + 1].strip(":,")
            rest = " ".join(words[i + 2 :]).lower().rstrip(".")
            break
    return Frame(frozenset(chosen), frozenset(rejected), head, ident, rest)


def compare(old_text: str, new_text: str) -> tuple[str, str] | None:
    """("replaced" | "reinforced" | "added", reason) when the frames decide the pair; else None."""
    if max(len(old_text.split()), len(new_text.split())) > MAX_WORDS or _CONDITION.search(
        f"{old_text} {new_text}"
    ):
        return None  # a long text's clauses are conditions and asides: the patterns read them
    old, new = read_frame(old_text), read_frame(new_text)
    dropped = new.rejected & old.chosen
    families = {FAMILIES.get(v) for v in dropped} - {None}
    gained = {v for v in new.chosen - old.chosen - old.rejected if FAMILIES.get(v) in families}
    if old.chosen and old.rejected and (old.chosen, old.rejected) == (new.chosen, new.rejected):
        chose, over = ", ".join(sorted(new.chosen)), ", ".join(sorted(new.rejected))
        return "reinforced", f"the same choice: {chose}, not {over}"
    if dropped and gained:
        return "replaced", (
            f"switched: now {', '.join(sorted(gained))} instead of {', '.join(sorted(dropped))}"
        )
    if (
        old.head
        and old.head == new.head
        and old.ident != new.ident
        and old.rest != new.rest
        and not dropped
    ):
        return "added", f"another subject: {old.head} {old.ident} / {new.head} {new.ident}"
    return None


# ---- The meaning layer, where the process allows it -----------------------------------------

_similar: Callable[[str, str], float] | None = None
# The positions of the texts whose ``_similar`` with a text is at least a floor, up to float
# rounding (``meaning.near``: one matrix product); used only while ``_similar`` is the function
# it batches.
_batched: (
    tuple[Callable[[str, str], float], Callable[[Sequence[str], str, float], list[int]]] | None
)
_batched = None
ROUNDING = 1e-4  # a batched cosine this close to MAY_REPLACE is computed again, one pair at a time


def use_meaning() -> None:
    """Let ``similar`` use the meaning layer in this process (the daemon, a direct-mode
    command). Never called by a hook or the MCP door: they do not load the model (numpy)."""
    global _similar, _batched
    from .meaning import near, similarity

    _similar = similarity
    _batched = (similarity, near)


def _cosines(
    texts: Sequence[str], new_text: str, floor: float | None = None
) -> list[tuple[int, float]]:
    """``(position, _similar(text, new_text))`` of each of ``texts``, in order, leaving out
    those certainly below ``floor`` (``MAY_REPLACE`` unless given): one matrix product for
    all (a save compares with every entry of its category) picks the few near the threshold,
    computed exactly, so the verdict is the pairwise one."""
    assert _similar is not None
    floor = MAY_REPLACE if floor is None else floor
    pairwise = _similar
    if _batched is None or _batched[0] is not pairwise:
        return [(i, pairwise(text, new_text)) for i, text in enumerate(texts)]
    return [
        (i, pairwise(texts[i], new_text)) for i in _batched[1](texts, new_text, floor - ROUNDING)
    ]


def similar(a: str, b: str) -> float | None:
    """Cosine of the two texts' meanings; None where this process does not use the model."""
    return None if _similar is None else _similar(a, b)


def _two_refusals(old_text: str, new_text: str) -> bool:
    """Both texts one negative clause, word for word the same but for one word: two things
    refused, both standing ("Never deploy on Monday" / "Never deploy on Friday")."""
    old, new = old_text.rstrip(".!").split(), new_text.rstrip(".!").split()
    if len(old) != len(new) or len(old) > MAX_WORDS:
        return False
    if any(len(_CLAUSE.split(t.rstrip(".!"))) != 1 for t in (old_text, new_text)):
        return False
    if not (_NEGATION.search(old_text) and _NEGATION.search(new_text)):
        return False
    return sum(a.lower() != b.lower() for a, b in zip(old, new, strict=True)) == 1


_NARROWING = re.compile(r"\b(?:only|except|unless|if|when|whenever|where)\b", re.I)


def same_choice(old_text: str, new_text: str) -> bool:
    """Both texts choose the same tools (non-empty) and refuse the same, with the same polarity,
    the same values (names, code, numbers), ``SAME_WORDS`` of their content words in common and
    no condition or exception in either: said in other words, the same rule ("Use pnpm for
    package management" / "Always use pnpm as the package manager"). Asked only of a pair the
    meaning puts in one slot (``by_meaning``): a frame alone is not a rule's topic."""
    if _NARROWING.search(old_text) or _NARROWING.search(new_text):
        return False
    if bool(_NEGATION.search(old_text)) != bool(_NEGATION.search(new_text)):
        return False
    old, new = read_frame(old_text), read_frame(new_text)
    if not old.chosen or (old.chosen, old.rejected) != (new.chosen, new.rejected):
        return False
    a, b = parse_rule(old_text), parse_rule(new_text)
    if {t.norm for t in a.core if t.value} != {t.norm for t in b.core if t.value}:
        return False  # "Used by: Gemini, Qwen, Tabnine" / "Used by: Gemini, Tabnine"
    shared, every = a.core_set & b.core_set, a.core_set | b.core_set
    return len(shared) >= SAME_WORDS * len(every)  # "… every package" / "Build website: …"


Found = tuple[str, float] | None  # (entry id, cosine), or None


def by_meaning(new_text: str, existing: Sequence[tuple[str, str]]) -> tuple[Found, Found]:
    """``(restates, may_replace)`` of ``new_text`` among ``existing`` from one matrix product
    (a save asks both of every entry of its category); each ``None`` where this process does
    not use the model.

    * *restates*: the entry closest in meaning at ``SAME_CHOICE`` or more that makes the same
      choice (``same_choice``): the same rule in a tool's own words;
    * *may_replace*: the entry closest in meaning at ``MAY_REPLACE`` or more that is not
      another subject by its frame (the newest of equals), nor a second refusal."""
    if _similar is None:
        return None, None
    same: Found = None
    may: Found = None
    floor = min(SAME_CHOICE, MAY_REPLACE)
    for i, cosine in _cosines([text for _, text in existing], new_text, floor):
        entry_id, text = existing[i]
        closer = same is None or cosine >= same[1]
        if cosine >= SAME_CHOICE and closer and same_choice(text, new_text):
            same = (entry_id, cosine)
        if cosine < MAY_REPLACE or (may is not None and cosine < may[1]):
            continue
        if _two_refusals(text, new_text):
            continue
        framed = compare(text, new_text)
        if framed is None or framed[0] != "added":
            may = (entry_id, cosine)
    return same, may


def closest(new_text: str, existing: Sequence[tuple[str, str]], floor: float) -> Found:
    """The entry of ``existing`` closest in meaning to ``new_text`` at ``floor`` or more (the
    first of equals); ``None`` when none is, or where this process does not use the model."""
    if _similar is None:
        return None
    best: Found = None
    for i, cosine in _cosines([text for _, text in existing], new_text, floor):
        if cosine >= floor and (best is None or cosine > best[1]):
            best = (existing[i][0], cosine)
    return best


def may_replace(new_text: str, existing: Sequence[tuple[str, str]]) -> Found:
    """``by_meaning``'s second answer: the entry ``new_text`` may replace."""
    return by_meaning(new_text, existing)[1]
