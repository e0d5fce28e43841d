"""Rule edits judged by what real edits share: anchors (code spans, paths, identifiers,
commands, flags, numbers, names) and the words around them.

Real edits of agent instruction files rarely keep the token set a strict reading needs: a
reworded rule keeps its code span (```make check test``` before "submitting PRs" / before
"committing") and a replaced one swaps a path, a command or a flag inside an otherwise equal
frame (```projects/``` -> ```specs/```, ``pytest -vx`` -> ``pytest -vxs``, ``prek`` ->
``pre-commit``). ``judge_edit(old, new)`` is the contradiction check's last resort and its
second opinion; it is pure and lexical:

* **Related** when the two texts share an anchor and enough of their words (word-sequence
  similarity ``RELATED_WITH_ANCHOR``, or the shorter mostly found in the longer:
  ``CONTAINED_WITH_ANCHOR``), or are near copies (``RELATED_WITHOUT_ANCHOR``), and
  the words that differ are not a whole different clause (no replaced run of more than
  ``MAX_REPLACED_RUN`` plain words on both sides: "… run the tests …" vs "… squash commits …"
  are two rules that share a frame).
* **Replaced** when a related edit drops or swaps an anchor (an anchor of the old text that the
  new one lacks, after normalising backticks, case and trailing punctuation), or swaps one word
  for another inside an equal frame of at least ``FRAME_WORDS`` words (the same scope with a
  changed tool: "ALWAYS run prek before PRs" -> "ALWAYS run pre-commit before PRs").
* **Reinforced** when a related edit keeps every anchor: a rewording, an added explanation or
  example, emphasis or markup changes ("always prefer to use the ``checkExhaustive`` helper
  method within the default clause" -> "Use the ``checkExhaustive`` helper in the default
  clause").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache

from .lexicon import ABBREVIATION_FILLER, ANCHOR_PLAIN_WORDS, CODE_SPAN, EXCEPTION_WORDS, normalise
from .rule_reading import FAMILIES
from .text import stem

__all__ = ["anchors", "judge_edit", "words"]

RELATED_WITH_ANCHOR = 0.42  # word similarity two texts sharing an anchor need to be one rule
RELATED_WITHOUT_ANCHOR = 0.8  # ... and two texts sharing none
CONTAINED_WITH_ANCHOR = 0.6  # or the share of the shorter text found in the longer one
BAG_WITHOUT_ANCHOR = 0.6  # below this word-bag overlap, no near copy nor one-word swap
MAX_REPLACED_RUN = 1  # a replaced run of more content words on both sides is another clause
MIN_CONTENT = 4  # content words each text needs for this reading (real edits are long)
FRAME_WORDS = 3  # equal words around a one-word swap for "same scope, changed tool"

_WORD = re.compile(r"[\w$@~.+#*/<>-]+|[^\w\s]")
_ANCHORISH = re.compile(
    r"""^(?:
        --?[a-z][\w-]*            # a flag
      | [$@~][\w./-]+             # $skill, @scope, ~/path
      | [\w.-]*/[\w./*<>-]*       # a path or glob
      | [\w-]+\.[a-z0-9]{1,5}     # a file name
      | \w+_\w+                   # snake_case, SCREAMING_CASE
      | [a-z]+[A-Z]\w*            # camelCase
      | [A-Z]\w*[A-Z]\w*          # PascalCase with an inner capital, ACRONYMS
      | \d[\w.%+-]*               # a number or version
    )$""",
    re.X,
)
# Outside code, "req/min" or "read/write" is not a path: a path there starts with ./ ~/ or /,
# ends with /, has two slashes or a file name.
_PLAIN_PATH = re.compile(r"^(?:[.~]?/|.*/$|[^/]*/[^/]*/|.*/.*\.[a-z0-9]{1,5}$)")
_PUNCT = ".,;:!?()[]{}\"'"


_SHORT_ACRONYM = re.compile(r"^[A-Z]{1,3}s?$")  # API, CI, PRs: too common to anchor a rule


def _unescape(text: str) -> str:
    return re.sub(r"\\([`$*_#<>\[\]])", r"\1", text)


def _norm_anchor(text: str) -> str:
    text = text.strip().strip(_PUNCT).lower().replace("<", "").replace(">", "")
    return re.sub(r"\s+", " ", text).rstrip("/")


@lru_cache(maxsize=4096)
def anchors(text: str) -> frozenset[str]:
    """The anchors of ``text``: code spans (whole, and each of their words that looks like a
    path, flag or identifier), and plain words shaped like paths, flags, identifiers, file
    names or numbers."""
    out: set[str] = set()
    text = _unescape(text)
    for span in CODE_SPAN.findall(text):
        whole = _norm_anchor(span)
        if not whole or all(w in ANCHOR_PLAIN_WORDS for w in re.findall(r"[a-z']+", whole)):
            continue  # `Always`, `We always`: emphasis written as code, not code
        out.add(whole)
        for part in span.split():
            part = part.strip(_PUNCT)
            if part and _ANCHORISH.match(part) and _norm_anchor(part) != whole:
                out.add(_norm_anchor(part))
    rest = CODE_SPAN.sub(" ", text)
    for raw in rest.split():
        word = raw.strip(_PUNCT + "*_")
        if len(word) < 2 or not _ANCHORISH.match(word) or _SHORT_ACRONYM.match(word):
            continue
        if word.isalpha() and word.isupper():
            continue  # SHOUTING or an acronym: emphasis, not a value
        if "/" in word and not _PLAIN_PATH.match(word):
            continue
        out.add(_norm_anchor(word))
    return frozenset(a for a in out if len(a) > 1 and a not in ABBREVIATION_FILLER)


@lru_cache(maxsize=4096)
def words(text: str) -> tuple[str, ...]:
    """The lower-cased words of ``text`` with markup gone (backticks, emphasis, links)."""
    plain = normalise(_unescape(text)).replace("`", " ")
    plain = re.sub(r"(\d)-(?=[a-z])", r"\1 ", plain)  # 2-space = 2 spaces
    out = (w.lower().strip(_PUNCT + "/<>") for w in _WORD.findall(plain))
    return tuple(stem(w) if w.isalpha() else w for w in out if w)


@lru_cache(maxsize=4096)
def _word_set(w: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w)


@lru_cache(maxsize=4096)
def _content_count(w: tuple[str, ...]) -> int:
    return len(_content(w))


def _opcodes(a: tuple[str, ...], b: tuple[str, ...]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _similarity(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[float, float]:
    """(similarity, containment): the share of both texts' words in common, and the share of
    the shorter text's words found in the longer one, in order."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    common = sum(block.size for block in matcher.get_matching_blocks())
    return matcher.ratio(), common / min(len(a), len(b))


def _content(seg: tuple[str, ...]) -> list[str]:
    return [w for w in seg if w not in ANCHOR_PLAIN_WORDS and any(c.isalnum() for c in w)]


def _other_clause(
    a: tuple[str, ...], b: tuple[str, ...], *, subject_may_change: bool = False
) -> bool:
    """Different words said on both sides: another rule in the same frame. Either a replaced run
    of several content words on both sides, or more than ``MAX_REPLACED_RUN`` content words
    dropped and as many others brought in ("before opening a PR, run the tests …" vs "…, deploy
    on Fridays …")."""
    dropped = brought = 0
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            continue
        old, new = _content(a[i1:i2]), _content(b[j1:j2])
        if op == "replace" and i1 == 0 and old and new and not subject_may_change:
            return True  # another subject: "CI runs on …" vs "Deploys run on …"
        if op == "replace" and min(len(old), len(new)) > MAX_REPLACED_RUN + 1:
            return True
        dropped += len(old)
        brought += len(new)
    return min(dropped, brought) > MAX_REPLACED_RUN


def _swapped_in_frame(a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    """``x -> y`` when the texts differ by one to three words swapped for one to three others
    inside an equal frame of ``FRAME_WORDS`` content words or more: the same scope with a
    changed tool or condition."""
    ops = [op for op in _opcodes(a, b) if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    old, new = a[i1:i2], b[j1:j2]
    frame = _content(a[:i1] + a[i2:])
    if not 1 <= i2 - i1 <= 3 or not 1 <= j2 - j1 <= 3 or len(frame) < FRAME_WORDS:
        return None
    if not _content(old) or not _content(new) or set(old) & set(new):
        return None
    if len(_content(old)) + len(_content(new)) > 3 or not any(map(_tool_like, old + new)):
        return None  # "run the tests" -> "check git status": another rule, not another tool
    return f"{' '.join(old)} -> {' '.join(new)}"


_HEAD_END = re.compile(r"[.;!?](?:\s|$)|\s[-\u2014\u2013]\s|\(")


def _head(text: str) -> str:
    """The rule's first clause: up to a sentence end, a spaced dash or an aside. What follows
    is explanation, and may change freely in a restatement."""
    match = _HEAD_END.search(_unescape(text))
    return text[: match.start()] if match and match.start() > 0 else text


def _replaces_words(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return any(
        op == "replace" and _content(a[i1:i2]) and _content(b[j1:j2])
        for op, i1, i2, j1, j2 in _opcodes(a, b)
    )


_NO_EXCEPTION = re.compile(r"\bno\s+exceptions?\b|\bwithout\s+exception", re.I)
_REJECTED = re.compile(r"\b(?:not|instead\s+of|rather\s+than)\s+([^,;)]+)", re.I)


def _rejected(text: str) -> frozenset[str]:
    """Anchors a rule names only to reject them ("(not ``*.spec.ts``)"): dropping that aside
    leaves the rule as it was."""
    return frozenset().union(*(anchors(m) for m in _REJECTED.findall(text)))


def _only_deleted(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """``b`` is ``a`` with words taken out (an item dropped from a list), nothing reworded."""
    for op, _i1, _i2, j1, j2 in _opcodes(a, b):
        if op == "insert" or (op == "replace" and set(b[j1:j2]) - {"and", "or", ",", "&"}):
            return False
    return True


_LIST_TOKEN = re.compile(r"[\w$@~.+#*/<>-]+|,")


def _list_item_dropped(old_text: str, new_text: str) -> str | None:
    """The item an edit took out of a list and nothing else ("Python, TypeScript, and Go" ->
    "TypeScript and Go"), or None."""
    a = tuple(_LIST_TOKEN.findall(normalise(_unescape(old_text)).lower().replace("`", " ")))
    b = tuple(_LIST_TOKEN.findall(normalise(_unescape(new_text)).lower().replace("`", " ")))
    items = []
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            continue
        if op == "insert" or (op == "replace" and set(b[j1:j2]) - {",", "and", "or"}):
            return None
        gone = [w for w in a[i1:i2] if w not in (",", "and", "or")]
        listed = "," in a[i1:i2] or (i1 and a[i1 - 1] == ",") or (i2 < len(a) and a[i2] == ",")
        if not gone:
            continue  # a comma or "and" moved
        if not listed or len(gone) > 3:
            return None
        items.append(" ".join(gone))
    return ", ".join(items) or None


def narrows(old_text: str, new_text: str) -> str | None:
    """``narrowed: adds except …`` when the new text adds an exception or condition word
    (``lexicon.EXCEPTION_WORDS``) the old one lacks ("… for user-facing changes, except …"), and
    does not deny having any ("no exceptions"); else None."""
    if _NO_EXCEPTION.search(new_text):
        return None
    added = EXCEPTION_WORDS & (set(words(new_text)) - set(words(old_text)))
    return f"narrowed: adds {', '.join(sorted(added))} …" if added else None


def _tool_like(word: str) -> bool:
    """A word that names a tool, command or value rather than an action: a known tool, or a
    word with a hyphen, dot or digit in it (``pre-commit``, ``deno.json``, ``v2``)."""
    return word in FAMILIES or bool(re.search(r"[\w][-.][\w]|\d", word))


def judge_edit(old_text: str, new_text: str) -> tuple[str, str, bool] | None:
    """``("replaced" | "reinforced", reason, by_anchor)`` when ``new_text`` edits the rule
    ``old_text``, else ``None`` (two different rules, or nothing to tell). ``by_anchor`` is true
    when the verdict rests on an anchor dropped or swapped: strong enough to overrule a reading
    that found the same words (a swapped word alone may be a synonym: short -> brief)."""
    a_old, a_new = anchors(old_text), anchors(new_text)
    w_old, w_new = words(old_text), words(new_text)
    if not w_old or not w_new:
        return None
    if min(_content_count(w_old), _content_count(w_new)) < MIN_CONTENT:
        return None  # a short rule is the strict reading's: "Always use pnpm" / "… workspaces"
    if w_old == w_new:  # only markup, case or escapes changed
        return "reinforced", "same rule, only its markup changed", True
    shared = a_old & a_new
    # Cheap bounds first (the write path compares a new fact with every entry of its
    # category): the word-sequence measures never exceed these word-overlap ones.
    set_old, set_new = _word_set(w_old), _word_set(w_new)
    common = min(sum(w in set_new for w in w_old), sum(w in set_old for w in w_new))
    bag_similarity = 2 * common / (len(w_old) + len(w_new))
    bag_contained = common / min(len(w_old), len(w_new))
    if shared and bag_similarity < RELATED_WITH_ANCHOR and bag_contained < CONTAINED_WITH_ANCHOR:
        return None
    if not shared and bag_similarity < BAG_WITHOUT_ANCHOR:
        return None
    similarity, contained = _similarity(w_old, w_new)
    swap = _swapped_in_frame(w_old, w_new)
    if shared:
        anchor_words = {w for a in shared for w in a.split()}
        kept = [w for w in _content(w_old) if w in set(w_new) and w not in anchor_words]
        related = similarity >= RELATED_WITH_ANCHOR or (
            contained >= CONTAINED_WITH_ANCHOR and len(kept) >= 3
        )
    else:  # near copies that only add or drop words ("the api layer" -> "the frontend": two)
        swapped_values = bool(a_old) and bool(a_new)  # `projects/` -> `specs/`
        related = similarity >= RELATED_WITHOUT_ANCHOR and (
            swapped_values or not _replaces_words(w_old, w_new)
        )
    if not related and swap is None:
        return None
    strong = any(not a.isalpha() for a in shared)  # a code span, path or number, not a name
    if _other_clause(words(_head(old_text)), words(_head(new_text)), subject_may_change=strong):
        return None
    lost = sorted(a_old - a_new - _rejected(old_text))
    if lost and a_new - a_old:
        gained = sorted(a_new - a_old)
        return "replaced", f"changed {', '.join(lost)} -> {', '.join(gained)}", True
    if lost and _only_deleted(w_old, w_new):
        return "replaced", f"dropped {', '.join(lost)}", True
    dropped_item = _list_item_dropped(old_text, new_text)
    if dropped_item:
        return "replaced", f"dropped {dropped_item} from the list", True
    narrowing = narrows(old_text, new_text)
    if narrowing:
        return "replaced", narrowing, True
    if swap is not None and not (a_new - a_old):
        return "replaced", f"same scope, changed {swap}", False
    keeps = ", ".join(sorted(shared)) or "its words"
    return "reinforced", f"same rule reworded (keeps {keeps})", False
