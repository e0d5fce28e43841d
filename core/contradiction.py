"""Duplicate and contradiction checks for ``save_semantic``: added, replaced, reinforced or
linked.

``classify(new_text, existing)`` compares a new semantic fact with the entries already in its
category and says what saving it means. Everything is lexical, deterministic and explained by the
verdict's ``reason``. The rules, written down once:

* **Reading a rule** (tokens, polarity, rejected alternatives, values): ``core/rule_reading.py``
  (``parse_rule``), whose docstring states those rules.
* **Reinforced** (the same rule restated): same polarity, same token set, no alternative chosen
  by one and rejected by the other, rejected sets equal or one of them empty. One extra word that
  is not a value is tolerated when two topic words are shared ("… tasks" vs "…").
* **Replaced** (same topic, different conclusion), tried in this order:
  1. *changed value*: same polarity; aligning the two token sequences (``difflib``), every
     difference is a value swapped for a value (``15min -> 30min``, ``*.test.ts -> *.spec.ts``,
     ``Sonnet -> Opus``, ``tabs -> spaces``) and no other word is swapped; at least one shared
     topic word (not a number or unit) — or both values from one known family (``pnpm``/
     ``yarn``); extra words only on one side and no more than the shared topic words. Two
     non-numeric swaps at once, or a non-numeric swap in a negative rule (``Never deploy on
     Fridays`` / ``… on weekends``), are two rules, not a change;
  2. *flipped polarity*: the same tokens (one extra word allowed when two are shared) with
     opposite polarity (``always`` <-> ``never``, ``use`` <-> ``don't use``/``avoid``,
     ``must`` <-> ``must not``, ``prefers`` <-> ``avoid``);
  3. *reversed choice*: a token chosen by one text is rejected by the other (``A over B`` vs
     ``B over A``, ``use X instead of Y`` vs ``use Y``), and the other words mostly agree
     (conflicting + shared words >= differing words - 1).
* **Whole texts** (long rules from instruction files), when the checks above find nothing, on
  the normalised text with asides included, a code span as one token and agent nouns as their
  action (``type checkers`` = ``type checks``), same polarity only:
  1. *changed value*: the texts share three or more tokens and half their words, and every
     difference is a short segment (three tokens or fewer a side) holding a value on each side,
     or a number/code span against words anywhere but the subject (```npm run compile``` ->
     ```bun run compile```, "from the changeset PR" -> "from ```main```"). A restatement whose
     aside changed a value (``(default: `auto`)`` -> ``(default: `True`)``) is this too;
  2. *reworded*: four shared tokens, similarity >= ``NEAR_SIMILARITY``, at most one word (or
     one word for a phrase) replaced, the rest only added or dropped, no more than half as many
     differing tokens as shared ones -> reinforced;
  3. *more detail*: one token set contains the other (three tokens or more), the longer adds at
     most one token more than the shorter has, and both start alike -> reinforced;
  4. *changed setting / definition*: the same label (``Imports: …``) or the same defined subject
     (```main` is …``, ``Bun is …``; four words at most) with a different rest -> replaced when
     both rests open with a value or one of them instructs (``use …``); a description under the
     label (``**Correct:** cache hit`` / ``**Correct:** memoize``) -> linked.
* **Linked** (may replace: both kept, the newer served, the older marked and in review) where
  a change is found but the words cannot tell it from a new item: a changed setting as above,
  or a changed value, anchor or setting whose texts say something else too (``_another_item``:
  another opening and another word further on, or a rewritten clause). A wrong merge loses a
  rule the file keeps; a link loses nothing (issue 34).
* **Added** otherwise: a shared generic word is never a topic, and a swapped subject
  (``line length`` vs ``timeout``, ``tests`` vs ``lint`` after ``run``) is not a changed value.
* **Real edits** (``anchors.judge_edit``, after the checks above): texts that share an anchor
  (a code span, path, command, flag, identifier or number) and most of their words, or are near
  copies, are one rule unless a different clause replaced the head's words; dropping or
  swapping an anchor, a swapped tool inside an equal frame (``prek`` -> ``pre-commit``) or a new
  exception (``except``, ``unless``, ``only``) replaces it, otherwise it is reinforced. This
  reading decides where the checks above found nothing, turns their "same rule" into a
  replacement when an anchor was dropped or swapped, and their changed value into a
  restatement when only markup changed (``gofumpt -w .`` -> ```gofumpt -w .```).
* **Choosing the target** among several hits: a duplicate beats a contradiction, then the
  highest overlap (Jaccard of the token sets), then the newest entry (last in the list).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .anchors import judge_edit, narrows
from .frame import compare
from .lexicon import (
    CODE_SPAN,
    NEGATIONS,
    normalise,
)
from .rule_reading import (
    DEFAULT_MARKER,
    FAMILIES,
    UNIT_NAMES,
    Rule,
    Tok,
    agent_base,
    parse_rule,
    quoted_words,
    read_limits,
    rule_tokens,
)
from .text import stem

__all__ = ["Verdict", "classify", "holds_values", "same_rule", "widens"]


@dataclass(frozen=True)
class Verdict:
    """What saving a new fact does to its category, and why."""

    action: str  # "added" | "replaced" | "reinforced" | "linked" (may replace: both kept)
    target: str | None  # id of the existing entry hit; None for "added"
    reason: str


_ACTIONS = ("linked", "replaced", "reinforced")  # by the priority ``_judge`` gives
CHANGED = "changed "  # how the reason of a changed value, anchor or setting begins
CHANGED_VALUE = CHANGED + "value: "


# --------------------------------------------------------------------------------------------
# Comparing two rules
# --------------------------------------------------------------------------------------------


def _describe(toks: Sequence[Tok]) -> str:
    """The words of ``toks`` as written, each source word once."""
    out: list[str] = []
    for t in toks:
        if not out or out[-1] != t.raw:
            out.append(t.raw)
    return " ".join(out) if out else "(nothing)"


def _compatible_rejections(a: Rule, b: Rule) -> bool:
    ra, rb = a.rejected_set, b.rejected_set
    return not ra or not rb or ra == rb


def _is_duplicate(a: Rule, b: Rule) -> bool:
    if a.negative != b.negative or not _compatible_rejections(a, b):
        return False
    if (a.core_set - b.core_set) & b.rejected_set or (b.core_set - a.core_set) & a.rejected_set:
        return False
    sa, sb = a.core_set, b.core_set
    if not sa and not sb:
        return " ".join(a.text.lower().split()) == " ".join(b.text.lower().split())
    if sa == sb:
        return True
    extra = sa ^ sb
    if len(extra) != 1 or not (sa < sb or sb < sa):
        return False
    extra_tok = next(t for t in (*a.core, *b.core) if t.norm in extra)
    shared_topic = [n for n in sa & sb if n not in UNIT_NAMES]
    return not extra_tok.value and len(shared_topic) >= 2


@dataclass(frozen=True)
class _Diff:
    shared: list[Tok]
    value_swaps: list[tuple[list[Tok], list[Tok]]]
    word_swaps: list[tuple[list[Tok], list[Tok]]]
    old_extra: list[Tok]
    new_extra: list[Tok]


def _family_swap(old: Sequence[Tok], new: Sequence[Tok]) -> bool:
    """Both sides name members of one known family, with nothing else but values and units."""

    def plain(t: Tok) -> bool:
        return t.value or t.unit or t.norm in FAMILIES or t.raw.lower() in FAMILIES

    return all(plain(t) for t in (*old, *new)) and _same_family(old, new)


def _same_family(old: Sequence[Tok], new: Sequence[Tok]) -> bool:
    fo = {FAMILIES.get(t.norm) for t in old} | {FAMILIES.get(t.raw.lower()) for t in old}
    fn = {FAMILIES.get(t.norm) for t in new} | {FAMILIES.get(t.raw.lower()) for t in new}
    return bool((fo & fn) - {None})


def _diff(old: Rule, new: Rule) -> _Diff:
    a = [t.norm for t in old.core]
    b = [t.norm for t in new.core]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    shared: list[Tok] = []
    value_swaps: list[tuple[list[Tok], list[Tok]]] = []
    word_swaps: list[tuple[list[Tok], list[Tok]]] = []
    old_extra: list[Tok] = []
    new_extra: list[Tok] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        old_seg, new_seg = list(old.core[i1:i2]), list(new.core[j1:j2])
        if op == "equal":
            shared.extend(old_seg)
        elif op == "delete":
            old_extra.extend(old_seg)
        elif op == "insert":
            new_extra.extend(new_seg)
        else:
            all_values = all(t.value or t.unit for t in old_seg + new_seg)
            slotted = (
                len(old_seg) <= 2
                and len(new_seg) <= 2
                and old_seg[0].slot
                and new_seg[0].slot
                and all(t.value or t.unit for t in old_seg[1:] + new_seg[1:])
            )
            if all_values or slotted or _family_swap(old_seg, new_seg):
                value_swaps.append((old_seg, new_seg))
            else:
                word_swaps.append((old_seg, new_seg))
    # A token present on both sides but out of order, or repeated, is shared, not an extra.
    moved = {t.norm for t in old_extra} & {t.norm for t in new_extra}
    if moved:
        shared.extend(t for t in old_extra if t.norm in moved)
    known = moved | {t.norm for t in shared}
    old_extra = [t for t in old_extra if t.norm not in known]
    new_extra = [t for t in new_extra if t.norm not in known]
    return _Diff(shared, value_swaps, word_swaps, old_extra, new_extra)


def _has_digit(t: Tok) -> bool:
    return any(ch.isdigit() for ch in t.norm)


def _numeric(t: Tok) -> bool:
    return any(ch.isdigit() for ch in t.norm) or "*" in t.norm or t.norm.startswith(".")


def _topic(toks: Sequence[Tok]) -> set[str]:
    """What shared tokens say the two rules are about: not units, not numbers or patterns."""
    return {t.norm for t in toks if not t.unit and not _numeric(t)}


def _changed_value(old: Rule, new: Rule, d: _Diff) -> str | None:
    if old.negative != new.negative or not d.value_swaps or d.word_swaps:
        return None
    numeric = all(any(_has_digit(t) for t in (*o, *n)) for o, n in d.value_swaps)
    if len(d.value_swaps) > 1 and not numeric:
        return None  # two names changed at once ("2 spaces in YAML" / "4 in Python"): new rule
    if old.negative and not numeric:
        # "Never deploy on Fridays" / "... on weekends": two prohibitions, not a changed one.
        return None
    shared_topic = _topic(d.shared)
    if not shared_topic and not all(_family_swap(o, n) for o, n in d.value_swaps):
        return None
    extras = len(d.old_extra) + len(d.new_extra)
    if extras:
        one_sided = not d.old_extra or not d.new_extra
        if not one_sided or len(shared_topic) < 2 or extras > len(shared_topic):
            return None
    changes = [f"{_describe(o)} -> {_describe(n)}" for o, n in d.value_swaps]
    return CHANGED_VALUE + ", ".join(changes)


def _flipped(old: Rule, new: Rule, d: _Diff) -> str | None:
    if old.negative == new.negative or d.value_swaps or d.word_swaps:
        return None
    if not _compatible_rejections(old, new):
        return None
    shared = {t.norm for t in d.shared if not t.unit}
    extras = len(d.old_extra) + len(d.new_extra)
    if not shared or extras > 1 or (extras == 1 and len(shared) < 2):
        return None
    return f"flipped polarity ({old.marker} -> {new.marker})"


def _positive(rule: Rule) -> frozenset[str]:
    return frozenset() if rule.negative else rule.core_set


def _negative(rule: Rule) -> frozenset[str]:
    return rule.rejected_set | (rule.core_set if rule.negative else frozenset())


def _reversed(old: Rule, new: Rule) -> str | None:
    if not old.rejected and not new.rejected:
        return None
    gained = (_negative(old) & _positive(new)) - _positive(old) - UNIT_NAMES
    dropped = (_positive(old) & _negative(new)) - _positive(new) - UNIT_NAMES
    conflict = gained | dropped
    if not conflict:
        return None
    rest_old, rest_new = old.all_set - conflict, new.all_set - conflict
    if len(conflict) + len(rest_old & rest_new) < len(rest_old ^ rest_new) - 1:
        return None
    new_toks = (*new.core, *new.rejected)
    old_toks = (*old.core, *old.rejected)
    if gained and dropped:
        chosen = _describe([t for t in new.core if t.norm in gained])
        rejected = _describe([t for t in new_toks if t.norm in dropped and t in new.rejected])
        return f"reversed preference: now {chosen} over {rejected}"
    if dropped:
        instead = [t for t in new.core if t.norm not in old.all_set]
        rejected = _describe([t for t in new_toks if t.norm in dropped])
        if instead and not new.negative:
            return f"now {_describe(instead)} instead of {rejected}"
        return f"now rejects {rejected}"
    accepted = _describe([t for t in new.core if t.norm in gained])
    was = _describe([t for t in old_toks if t.norm in gained])
    return f"now accepts {accepted} (rejected before: {was})"


def _overlap(a: Rule, b: Rule) -> float:
    sa, sb = a.all_set, b.all_set
    union = sa | sb
    return len(sa & sb) / len(union) if union else 1.0


def _may_relate(old: Rule, new: Rule) -> bool:
    """Cheap necessary condition for any verdict but "added": the rules share a word, or name
    members of one known family (pnpm/yarn), or one of them has no words to compare."""
    sa, sb = old.all_set, new.all_set
    if not sa or not sb or sa & sb:
        return True
    return bool(old.families & new.families)


# ---- Long rules: a whole-text comparison, asides included ----------------------------------

_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z`][\w`.&/+#() -]{0,40}?)\s*:\s+(?P<rest>\S.*)$", re.S)
_DEFINITION = re.compile(
    r"^\s*(?P<subject>`[^`]+`|[A-Z][\w.+#/-]*)\s+(?:is|are)\s+(?P<rest>\S.*)$", re.S
)
NEAR_SIMILARITY = 0.75  # share of tokens two texts must have in common to be one rule
NEAR_SHARED = 4  # and at least this many shared tokens
_CLOSING_ASIDE = re.compile(r"\s*\([^()]*\)[\s.*_]*$")
CLAUSE = 3  # tokens a side: a replaced segment this long is a rewritten clause, not a value


@lru_cache(maxsize=4096)
def _full(text: str) -> tuple[Tok, ...]:
    """Every content token of ``text``, parentheticals and rejected alternatives included; the
    doer of an action names the action (``checkers`` -> ``check``); a code span is one token;
    ``slot`` here marks a strong value (a number, pattern or code span), one that may stand
    against plain words."""
    spans: set[str] = set()

    def one_token(match: re.Match[str]) -> str:
        # A code span is one value: `npm run compile` -> npm_run_compile.
        joined = re.sub(r"[^A-Za-z0-9_.*/+#]+", "_", match.group(1)).strip("_.")
        spans.add(joined.lower())
        return f" {joined} "

    text = CODE_SPAN.sub(one_token, normalise(text))
    quoted = quoted_words(text) | spans
    toks, _ = rule_tokens(read_limits(text), quoted)
    return tuple(
        Tok(agent_base(t.norm), t.raw, t.value, t.raw.lower() in quoted or _numeric(t), t.unit)
        for t in toks
        if not t.unit
    )


def _value_swaps(a: Sequence[Tok], b: Sequence[Tok]) -> tuple[list[str], int, int]:
    """Aligned differences of ``a`` and ``b``: the value changes (each side holds a value),
    the count of other replaced segments (one more when a segment is two words or more on
    both sides) and the count of tokens only one side has."""
    matcher = difflib.SequenceMatcher(None, [t.norm for t in a], [t.norm for t in b], False)
    swaps: list[str] = []
    words = extras = 0
    wide = False  # a replaced segment of two or more words on both sides
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        old_seg, new_seg = a[i1:i2], b[j1:j2]
        has_old, has_new = any(t.value for t in old_seg), any(t.value for t in new_seg)
        strong = any(t.slot for t in (*old_seg, *new_seg))
        # A value for a value; or a quoted/numeric value for words, but not in the subject.
        short = len(old_seg) <= 3 and len(new_seg) <= 3  # a value, not a clause
        if op == "replace" and short and ((has_old and has_new) or (strong and i1 and j1)):
            swaps.append(f"{_describe(old_seg)} -> {_describe(new_seg)}")
        elif op == "replace":
            words += 1
            wide = wide or min(len(old_seg), len(new_seg)) > 1
        else:
            extras += len(old_seg) + len(new_seg)
    return swaps, words if not wide else words + 1, extras


def _whole_text(old: Rule, new: Rule) -> tuple[int, str] | None:
    """Verdicts that need the whole texts: a changed value inside an aside, a changed setting
    under the same label or subject, a long rule restated in other words."""
    if old.negative != new.negative:
        return None
    sa, sb = _full_set(old.text), _full_set(new.text)
    shared = sa & sb
    similarity = 2 * len(shared) / (len(sa) + len(sb)) if sa and sb else 0.0
    if len(shared) >= 3 and similarity >= 0.5:
        swaps, words, extras = _value_swaps(_full(old.text), _full(new.text))
        if swaps and not words and extras <= len(shared) // 2:
            return 1, CHANGED_VALUE + ", ".join(swaps)
        if (
            not swaps
            and words <= 1  # one word (or one word for a phrase) reworded, the rest added
            and len(sa ^ sb) <= len(shared) / 2
            and len(shared) >= NEAR_SHARED
            and similarity >= NEAR_SIMILARITY
        ):
            return 2, "same rule in other words"
    short, extra = min(len(sa), len(sb)), len(sa ^ sb)
    if (
        short >= 3
        and (sa <= sb or sb <= sa)
        and extra <= short + 1
        and _full(old.text)[0].norm == _full(new.text)[0].norm  # a scope before it is new
    ):
        return 2, "same rule, more detail"  # one adds a short explanation to the other
    for kind, what in ((0, "setting"), (1, "definition")):
        head_old, head_new = _head(old.text)[kind], _head(new.text)[kind]
        if head_old and head_new and head_old[0] == head_new[0]:
            # A value under the label on both sides ("Doc test: `make doctest`"), or an
            # instruction ("Formatting: use ruff format"), is a setting that changed; a
            # description under it ("**Correct:** cache hit" / "**Correct:** memoize") may be
            # another item under a label the file repeats: linked, not merged.
            rest_old, rest_new = head_old[2], head_new[2]
            sure = (_valued(rest_old) and _valued(rest_new)) or _instructs(rest_old, rest_new)
            return (1 if sure else 0), f"changed {what} of {head_new[1]}"
    return None


def _instructs(*texts: str) -> bool:
    """One of ``texts`` says what to do with a word for it (use, prefer, must, never …)."""
    return any(parse_rule(text).marker != DEFAULT_MARKER for text in texts)


def _valued(rest: str) -> bool:
    """``rest`` opens with a strong value: a code span, a number, a path or pattern."""
    toks = _full(rest)
    return bool(toks) and toks[0].slot


@lru_cache(maxsize=4096)
def _full_set(text: str) -> frozenset[str]:
    return frozenset(t.norm for t in _full(text))


_Head = tuple[frozenset[str], str, str] | None


@lru_cache(maxsize=4096)
def _head(text: str) -> tuple[_Head, _Head]:
    """The label (``Imports:`` …) and the defined subject (```main` is`` …) of a rule, as
    token sets of at most four words with the words as written and the text after them, or
    ``None``."""
    out: list[_Head] = []
    for pattern in (_LABEL, _DEFINITION):
        match = pattern.match(text)
        head = match.group(1) if match else ""
        tokens = _full_set(head) if head else frozenset()
        rest = match.group("rest") if match else ""
        out.append((tokens, head.strip(), rest) if tokens and len(tokens) <= 4 else None)
    return out[0], out[1]


def _judge(old: Rule, new: Rule) -> tuple[int, str] | None:
    """(priority, reason) when ``new`` restates (2), contradicts (1) or may contradict (0)
    ``old``; else None.

    The strict reading (tokens, values, polarity) speaks first; the anchored reading of real
    edits (``anchors.judge_edit``) then has the last word where the strict one found nothing,
    overrules a restatement that dropped or swapped an anchor, and a change of markup only."""
    if not _may_relate(old, new):
        return None  # the write path scans every entry of the category: keep that cheap
    framed = compare(old.text, new.text)  # the frame: a switched tool, another subject
    if framed is not None and framed[0] == "added":
        return None
    judged = _patterns(old, new)
    if framed is not None and framed[0] == "reinforced":
        return 2, framed[1]  # the same choice and refusal, in other words
    if framed is not None and (judged is None or judged[0] != 1):
        return 1, framed[1]  # the patterns found no change (or were unsure): a switch is one
    changed = judged is not None and judged[0] == 1 and judged[1].startswith(CHANGED)
    if judged is not None and changed and _another_item(old.text, new.text):
        return 0, judged[1]  # "`just roll` - Builds …" / "`just lint` - Lints …": linked
    return judged


def _changes(a: Sequence[Tok], b: Sequence[Tok]) -> list[tuple[str, int, int, int, int]]:
    """The aligned differences of two token sequences (``difflib`` opcodes, no "equal")."""
    matcher = difflib.SequenceMatcher(None, [t.norm for t in a], [t.norm for t in b], False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def _another_item(old_text: str, new_text: str) -> bool:
    """Beside a changed value, the texts say something else too, so the words cannot tell
    another item of a list from the item changed and redescribed:

    * a clause of ``CLAUSE`` tokens or more was rewritten ("Impact: HIGH (caches across
      requests)" / "Impact: LOW (avoids re-creation)");
    * they open with different words and a word differs further on ("`just fix-rust` -
      Auto-fixes Rust issues" / "`just fix-node` - … Node.js …"), or the opening and the word
      after it differ ("hosting-a2a - A2A helpers" / "hosting-mcp - MCP helpers"), a closing
      aside left out.

    A changed opening alone ("`ChatMessage` - Represents …" / "`Message` - Represents …"), with
    words only moved or repeated, or a closing aside dropped, is a rename."""
    a, b = _full(old_text), _full(new_text)
    if any(
        op == "replace" and min(i2 - i1, j2 - j1) >= CLAUSE for op, i1, i2, j1, j2 in _changes(a, b)
    ):
        return True
    a, b = _full(_CLOSING_ASIDE.sub("", old_text)), _full(_CLOSING_ASIDE.sub("", new_text))
    changes = _changes(a, b)
    if not changes or changes[0][0] != "replace" or changes[0][1] + changes[0][3]:
        return False  # the same opening, or words moved before it ("tabs over spaces")
    _, i1, i2, j1, j2 = changes[0]
    if _same_family(a[i1:i2], b[j1:j2]):
        return False  # the choice switched within its family ("npm" -> "yarn"): one slot
    if min(i2 - i1, j2 - j1) >= 2:  # the opening and the word after it ("hosting-a2a - A2A …")
        return True
    sa, sb = {t.norm for t in a}, {t.norm for t in b}
    for op, i1, i2, j1, j2 in changes[1:]:  # a word moved or repeated ("… CI for CI") is none
        if op == "replace" or {t.norm for t in a[i1:i2]} - sb or {t.norm for t in b[j1:j2]} - sa:
            return True
    return False


def _patterns(old: Rule, new: Rule) -> tuple[int, str] | None:
    strict = _strict(old, new)
    if strict is not None and strict[0] == 2:
        narrowed = narrows(old.text, new.text)
        if narrowed is not None:
            return 1, narrowed  # the same rule with a new exception: the old one is too wide
    edit = judge_edit(old.text, new.text)
    if edit is None:
        return strict
    action, reason, decisive = edit
    if strict is None or (strict[0] == 0 and decisive):
        return (1 if action == "replaced" else 2), reason
    if strict[0] == 2 and action == "replaced" and decisive:
        return 1, reason  # "same rule in other words", but `projects/` became `specs/`
    if strict[0] == 1 and action == "reinforced" and decisive:
        return 2, reason  # "`task fmt` (gofumpt -w .)" -> "(`gofumpt -w .`)": markup only
    return strict


def _strict(old: Rule, new: Rule) -> tuple[int, str] | None:
    """The token-level reading of the module docstring."""
    if _is_duplicate(old, new):
        swaps = _value_swaps(_full(old.text), _full(new.text))[0]
        if swaps:  # the rules agree but an aside changed: "(e.g. `npm run x`)" -> "`bun run x`"
            return 1, CHANGED_VALUE + ", ".join(swaps)
        return 2, "same rule restated"
    d = _diff(old, new)
    for check in (_changed_value, _flipped):
        reason = check(old, new, d)
        if reason is not None:
            return 1, reason
    reason = _reversed(old, new)
    if reason is not None:
        return 1, reason
    return _whole_text(old, new)


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def _check_text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value


def same_rule(a: str, b: str) -> bool:
    """True when ``b`` restates ``a``: the duplicate test of ``classify``."""
    _check_text(a, "a")
    _check_text(b, "b")
    return _is_duplicate(parse_rule(a), parse_rule(b))


_WORD = re.compile(r"[\w'-]+")


def _stems(text: str) -> set[str]:
    """The words of ``text``, lower-cased and stemmed ("filter" and "filters" are one)."""
    return {stem(w) for w in _WORD.findall(text.lower().replace("\u2019", "'"))}


def holds_values(entry_text: str, text: str) -> bool:
    """Every value of ``text`` (``parse_rule``'s value tokens: code, names, numbers, paths) is
    in ``entry_text``, case and backticks aside: reinforcing the entry with ``text`` loses none
    of them."""
    if entry_text == text:
        return True
    held = entry_text.lower().replace("`", "")
    return all(t.raw.lower().strip("`") in held for t in parse_rule(text).core if t.value)


def widens(old_text: str, new_text: str) -> bool:
    """True when ``new_text``, read as a restatement of ``old_text``, says all of it and more:
    it holds every word of the old text (case and suffixes aside), adds at least one, and adds
    no negation (``Used by: Gemini, Qwen`` -> ``Used by: Gemini, Qwen, Tabnine``). A
    restatement keeps the newer wording then: nothing of the older is lost, and the file's
    newer line is served."""
    old, new = _stems(old_text), _stems(new_text)
    added = new - old
    return bool(old) and old <= new and bool(added) and added.isdisjoint(NEGATIONS)


def classify(new_text: str, existing: Sequence[tuple[str, str]]) -> Verdict:
    """Say whether ``new_text`` is added, replaces or reinforces one of ``existing``.

    ``existing`` holds ``(entry_id, text)`` pairs of the entries in the new fact's category,
    oldest first.
    """
    _check_text(new_text, "new_text")
    new = parse_rule(new_text)
    best: tuple[int, float, int, str, str] | None = None
    for index, item in enumerate(existing):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise TypeError("existing must hold (entry_id, text) pairs")
        entry_id = _check_text(item[0], "entry id")
        old = parse_rule(_check_text(item[1], "existing text"))
        judged = _judge(old, new)
        if judged is None:
            continue
        priority, reason = judged
        key = (priority, _overlap(old, new), index, entry_id, reason)
        if best is None or key[:3] > best[:3]:
            best = key
    if best is None:
        return Verdict("added", None, "no existing entry on this topic")
    priority, _, _, entry_id, reason = best
    return Verdict(_ACTIONS[priority], entry_id, reason)
