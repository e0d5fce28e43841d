"""Duplicate and contradiction checks for ``save_semantic``: added, replaced or reinforced.

``classify(new_text, existing)`` compares a new semantic fact with the entries already in its
category and says what saving it means. Everything is lexical, deterministic and explained by the
verdict's ``reason``. The rules, written down once:

* **Reading a rule.** The text is normalised first (``lexicon.normalise``: emphasis, links,
  typographic marks, bullets). Each text becomes a sequence of content tokens: lower-cased, common
  abbreviations expanded (``req`` -> request, ``min`` -> minute, ``ms`` -> millisecond,
  ``config``, ``repo``, ``env``, ``db``, ``PR`` …), number words made digits, number+unit split
  (``15min`` -> ``15`` ``minute``; ``req/min`` and ``requests per minute`` agree), stemmed
  (``text.stem``), with stop words and *generic* words dropped (``always``, ``must``, ``use``,
  ``prefer``, ``please``, ``project``, ``called``: they carry no topic). A parenthetical remark
  ``(cost reason)`` is set aside; a parenthetical or trailing negation (``(not *.spec.ts)``,
  ``, not main``) and the object of ``instead of``/``rather than``/``over`` (``over`` only with a
  choice verb such as ``prefer``/``chosen``/``use``) are the rule's *rejected* alternatives.
  Negation words (``never``, ``not``, ``no``, ``don't``, ``avoid``, ``stop``, ``without`` …) set
  the *polarity* (an odd count is negative); bounds (``no more than``, ``at most``) are read as
  ``maximum``/``minimum``, not as negations.
* **Values.** A token is a *value* when it holds a digit, ``*``, ``/`` or ``%``, is a file name or
  extension (``.env``, ``*.test.ts``), is capitalised or quoted (``Sonnet``, ``GitHub Actions``),
  is a weekday or month or a known tool name, or sits in a complement slot (after ``is``,
  ``called``, ``use``, ``prefer``, ``on``, ``:``) — where a rule states its conclusion.
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
     (```main` is …``, ``Bun is …``; four words at most) with a different rest -> replaced.
* **Added** otherwise: a shared generic word is never a topic, and a swapped subject
  (``line length`` vs ``timeout``, ``tests`` vs ``lint`` after ``run``) is not a changed value.
* **Choosing the target** among several hits: a duplicate beats a contradiction, then the
  highest overlap (Jaccard of the token sets), then the newest entry (last in the list).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from .lexicon import (
    ABBREVIATION_FILLER,
    DETERMINERS,
    NEGATIONS,
    NEGATIVE_MARKERS,
    POSITIVE_MARKERS,
    RULE_WORDS,
    SLOT_WORDS,
    STOP_WORDS,
    WEEKDAYS_MONTHS,
    normalise,
)
from .text import stem

__all__ = ["Verdict", "classify", "same_rule"]


@dataclass(frozen=True)
class Verdict:
    """What saving a new fact does to its category, and why."""

    action: str  # "added" | "replaced" | "reinforced"
    target: str | None  # id of the existing entry hit; None for "added"
    reason: str


# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

_SYNONYMS: dict[str, str] = {}
for _canon, _forms in {
    "request": "req reqs request requests",
    "config": "config configs cfg conf configuration configurations",
    "repository": "repo repos repository repositories",
    "environment": "env envs environment environments",
    "database": "db dbs database databases",
    "pullrequest": "pr prs mr mrs pullrequest",
    "documentation": "doc docs documentation",
    "directory": "dir dirs directory directories folder folders",
    "package": "pkg pkgs package packages",
    "dependency": "dep deps dependency dependencies",
    "library": "lib libs library libraries",
    "message": "msg msgs message messages",
    "function": "fn func funcs function functions",
    "argument": "arg args argument arguments",
    "parameter": "param params parameter parameters",
    "implementation": "impl impls implementation implementations",
    "information": "info information",
    "auth": "auth authn authentication",
    "javascript": "js javascript",
    "typescript": "ts typescript",
    "python": "py python",
    "kubernetes": "k8s kubernetes",
    "postgres": "postgres postgresql pg psql",
    "mongodb": "mongo mongodb",
    "production": "prod production",
    "performance": "perf performance",
    "use": "use uses used using utilize utilise utilizes utilises leverage employ",
    "prefer": "prefer prefers preferred preference preferences like likes love loves favor "
    "favors favour favours",
    "before": "before prior",
    "after": "after afterwards afterward",
    "maximum": "max maximum",
    "minimum": "min minimum",
    "variable": "vars variable variables",
    "e2e": "e2e end-to-end",
    "ci": "ci cicd ci/cd",
    "expiry": "expiry expiration expire expires expiring",
    "lint": "lint lints linter linters linting",
    "format": "format formats formatter formatters formatting",
    "indent": "indent indents indentation indenting",
    "name": "name names naming",
    "test": "test tests testing tested",
    "commit": "commit commits committing committed",
    "choose": "choose chooses chose chosen pick picks picked select selects selected opt",
}.items():
    for _form in _forms.split():
        _SYNONYMS[_form] = _canon

# Units: a value's unit is not the topic ("30 minute" vs "30 second" share no topic).
_UNITS: dict[str, str] = {}
for _canon, _forms in {
    "millisecond": "ms msec msecs millisecond milliseconds",
    "second": "s sec secs second seconds",
    "minute": "m min mins minute minutes",
    "hour": "h hr hrs hour hours",
    "day": "d day days",
    "week": "w wk wks week weeks",
    "month": "mo month months",
    "year": "y yr yrs year years",
    "kb": "k kb kib",
    "mb": "mb mib",
    "gb": "g gb gib",
    "percent": "% percent pct",
    "character": "char chars character characters",
    "line": "line lines",
    "request": "req reqs request requests",
    "time": "x times",
}.items():
    for _form in _forms.split():
        _UNITS[_form] = _canon
_UNIT_NAMES = frozenset(_UNITS.values())


# Known alternatives: two members of one family are two answers to the same question.
_FAMILIES: dict[str, str] = {}
for _family, _members in {
    "package manager": "npm pnpm yarn bun pip poetry uv pipenv conda cargo",
    "test runner": "jest vitest mocha jasmine ava pytest unittest nose playwright cypress",
    "linter": "eslint tslint ruff flake8 pylint biome oxlint",
    "formatter": "prettier black yapf autopep8 dprint",
    "type checker": "mypy pyright pyre tsc",
    "database": "postgres mysql mariadb sqlite mongodb dynamodb cassandra redis",
    "http client": "axios fetch superagent requests httpx aiohttp urllib3",
    "model": "sonnet opus haiku gpt-4 gpt-4o o1 o3 gemini",
    "ci": "jenkins circleci travis buildkite",
    "framework": "react vue svelte angular preact nextjs next.js nuxt remix astro",
    "backend framework": "express fastify koa nestjs django flask fastapi rails",
    "orm": "prisma drizzle typeorm sequelize sqlalchemy knex",
    "indentation": "tab space",
    "quote": "single double",
    "case": "camelcase snakecase pascalcase kebabcase",
    "language": "javascript typescript python golang rust java kotlin ruby",
    "date library": "moment dayjs date-fns luxon",
    "bundler": "webpack vite rollup esbuild parcel turbopack",
    "cloud": "aws gcp azure vercel netlify heroku",
}.items():
    for _member in _members.split():
        _FAMILIES[_member] = _family
_KNOWN_NAMES = frozenset(_FAMILIES)

# --------------------------------------------------------------------------------------------
# Parsing a rule
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    norm: str  # canonical, stemmed form: what comparisons use
    raw: str  # the word as written, for reasons
    value: bool  # a number, pattern, name, …: a rule's conclusion
    slot: bool  # in a complement slot (after "is", "use", "prefer", ":", …)
    unit: bool  # a unit following a number ("minute" in "15min")


@dataclass(frozen=True)
class _Rule:
    text: str
    core: tuple[_Tok, ...]
    rejected: tuple[_Tok, ...]
    negative: bool
    marker: str

    @cached_property
    def core_set(self) -> frozenset[str]:
        return frozenset(t.norm for t in self.core)

    @cached_property
    def rejected_set(self) -> frozenset[str]:
        return frozenset(t.norm for t in self.rejected)

    @cached_property
    def all_set(self) -> frozenset[str]:
        return self.core_set | self.rejected_set

    @cached_property
    def families(self) -> frozenset[str]:
        """The known families (package manager, test runner …) its words belong to."""
        found = {_FAMILIES.get(t.norm) for t in (*self.core, *self.rejected)}
        found |= {_FAMILIES.get(t.raw.lower()) for t in (*self.core, *self.rejected)}
        return frozenset(f for f in found if f is not None)


_PAREN = re.compile(r"\(([^()]*)\)|\[([^\[\]]*)\]")
_NEGATING_ASIDE = re.compile(
    r"^\s*(?:not|no|never|instead\s+of|rather\s+than|vs\.?|over|avoid|never\s+use|don'?t\s+use)"
    r"\s+(?P<r>.+)$",
    re.I,
)
_BOUNDARY = (
    r"(?=\s*(?:[,;:.!?()\u2014\u2013]|\s-\s|$)|\s+(?:for|in|on|at|when|because|since|as|with|"
    r"to|if|unless|during|across|so|and|but|which|where|per|from|by|except|whenever|while)\b)"
)
_REJECT_MARKER = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<r>.+?)" + _BOUNDARY, re.I
)
_OVER_MARKER = re.compile(r"\bover\s+(?P<r>.+?)" + _BOUNDARY, re.I)
_THAN_MARKER = re.compile(r"\bthan\s+(?P<r>.+?)" + _BOUNDARY, re.I)
_CHOICE_CONTEXT = re.compile(
    r"\b(?:prefer\w*|chose|chosen|choose|pick(?:ed)?|favou?r\w*|use[sd]?|using|likes?|"
    r"selected|opt(?:ed)?|go(?:ing)?\s+with|went\s+with|rather)\b",
    re.I,
)
_TRAILING_NOT = re.compile(
    r"(?:,|;|\u2014|\u2013|\s-)\s*(?:and\s+|but\s+)?not\s+(?P<r>[^,;()]+?)\s*(?=[,;.!]|$)", re.I
)
_TOKEN = re.compile(r"\*?\.?[A-Za-z0-9_][A-Za-z0-9_.*+#'/-]*|\*\.[A-Za-z0-9_.]+|%|[:=]")
_QUOTED = re.compile(r"\"([^\"]+)\"|`([^`]+)`|\u201c([^\u201d]+)\u201d|'([^'\s][^']*[^'\s])'")
_NUM_UNIT = re.compile(r"^(\d+(?:\.\d+)?)-?([a-z%]+)$")
_NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update(
    {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "ninety": "90", "hundred": "100"}
)


_UPPER_BOUND = re.compile(
    r"\b(?:(?:no|not)\s+(?:more|later|longer|greater|bigger|larger|higher|slower)\s+than|"
    r"at\s+most|up\s+to)\b",
    re.I,
)
_LOWER_BOUND = re.compile(
    r"\b(?:(?:no|not)\s+(?:less|fewer|earlier|shorter|smaller|lower|faster)\s+than|at\s+least)\b",
    re.I,
)


def _split_asides(text: str) -> tuple[str, list[str]]:
    """Drop parenthetical remarks; return the text and the rejected phrases they named."""
    rejected: list[str] = []

    def repl(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        neg = _NEGATING_ASIDE.match(inner)
        if neg:
            rejected.append(neg.group("r"))
        return " "

    previous = None
    while previous != text:
        previous = text
        text = _PAREN.sub(repl, text)
    return text, rejected


def _extract_rejected(text: str) -> tuple[str, list[str]]:
    """Remove "instead of Y", "over Y" (with a choice verb), ", not Y"; return the Ys."""
    rejected: list[str] = []

    def take(match: re.Match[str]) -> str:
        rejected.append(match.group("r"))
        return " "

    text = _REJECT_MARKER.sub(take, text)
    if _CHOICE_CONTEXT.search(text):
        text = _OVER_MARKER.sub(take, text)
    if re.search(r"\brather\b", text, re.I):
        text = _THAN_MARKER.sub(take, text)
    text = _TRAILING_NOT.sub(take, text)
    return text, rejected


def _quoted_words(text: str) -> frozenset[str]:
    out: set[str] = set()
    for match in _QUOTED.finditer(text):
        phrase = next(g for g in match.groups() if g is not None)
        out.update(w.lower() for w in re.findall(r"[\w.*+#-]+", phrase))
    return frozenset(out)


def _canonical(word: str) -> str:
    if word in _SYNONYMS:
        return _SYNONYMS[word]
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    stemmed = stem(word)
    return _SYNONYMS.get(stemmed, stemmed)


def _agent_base(word: str) -> str:
    """``checker`` -> ``check``, ``runner`` -> ``run``: the doer of an action names the action
    ("type checkers" and "type checks" are one topic)."""
    if len(word) < 6 or not word.isalpha() or not word.endswith("er") or word[-3] in "aeiou":
        return word
    base = word[:-2]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
        base = base[:-1]  # runner -> run
    return base


def _is_value(raw: str, word: str, position: int, quoted: frozenset[str]) -> bool:
    if any(ch.isdigit() for ch in word) or any(ch in word for ch in "*%/"):
        return True
    if word.startswith(".") or re.search(r"[a-z]\.[a-z]", word):
        return True
    if word in quoted or word in WEEKDAYS_MONTHS or word in _KNOWN_NAMES:
        return True
    if any(ch.isupper() for ch in raw[1:]):
        return True  # GitHub, JWT, httpOnly
    return raw[:1].isupper() and position > 0


def _tokens(text: str, quoted: frozenset[str]) -> tuple[list[_Tok], list[str]]:
    """Content tokens of ``text`` and the negation words met on the way."""
    out: list[_Tok] = []
    negations: list[str] = []
    previous = ""
    after_number = False
    position = 0
    pieces: list[tuple[str, str]] = []  # (raw piece, raw word it came from)
    for match in _TOKEN.finditer(text):
        raw_word = match.group(0).rstrip(".-/'")
        if not raw_word:
            continue
        if raw_word.endswith("'s") and raw_word.lower() not in ("it's", "let's", "that's"):
            raw_word = raw_word[:-2]
        lower = raw_word.lower()
        if lower in _SYNONYMS and ("-" in lower or "/" in lower):
            pieces.append((raw_word, raw_word))
            continue
        if "/" in lower and all(
            p in _UNITS or p.replace(".", "", 1).isdigit() for p in lower.split("/") if p
        ):
            parts = [p for p in raw_word.split("/") if p]  # a rate: "req/min", "10/min"
        elif (
            "-" in lower
            and "*" not in lower
            and "." not in lower
            and lower not in _KNOWN_NAMES
            and not lower.startswith(("no-", "non-", "not-"))
        ):
            num = _NUM_UNIT.match(lower)
            parts = [raw_word] if num else [p for p in raw_word.split("-") if p]
        else:
            parts = [raw_word]
        for part in parts:
            pieces.append((part, raw_word))
    i = 0
    while i < len(pieces):
        raw, source = pieces[i]
        word = raw.lower()
        i += 1
        if word in ("w/o",):
            negations.append("without")
            continue
        if word in (":", "="):
            previous = word  # "Package manager: pnpm": what follows is the value
            continue
        if word in ABBREVIATION_FILLER:
            continue
        if word in NEGATIONS:
            negations.append(word)
            previous = word
            after_number = False
            continue
        if word == "pull" and i < len(pieces) and pieces[i][0].lower().startswith("request"):
            raw, source, word = raw + " " + pieces[i][0], source, "pullrequest"
            i += 1
        if word == "merge" and i < len(pieces) and pieces[i][0].lower().startswith("request"):
            raw, source, word = raw + " " + pieces[i][0], source, "pullrequest"
            i += 1
        num_unit = _NUM_UNIT.match(word)
        if num_unit and num_unit.group(2) in _UNITS:
            number, unit = num_unit.groups()
            slot = previous in SLOT_WORDS
            out.append(_Tok(number, source, True, slot, False))
            out.append(_Tok(_UNITS[unit], source, False, False, True))
            previous, after_number, position = unit, False, position + 1
            continue
        if (after_number or "/" in source) and word in _UNITS:
            # "10 req/min", "10 requests per minute": a unit, maybe "per" and another unit.
            out.append(_Tok(_UNITS[word], source, False, False, True))
            previous, after_number, position = word, False, position + 1
            continue
        if word == "per" and out and out[-1].unit:
            after_number = True
            continue
        if word in STOP_WORDS or word in DETERMINERS:
            if word not in DETERMINERS:
                previous = word
            after_number = False
            continue
        norm = _canonical(word)
        if norm in RULE_WORDS or word in RULE_WORDS:
            previous = word if word in SLOT_WORDS else norm
            after_number = False
            continue
        value = _is_value(raw, word, position, quoted)
        slot = previous in SLOT_WORDS
        out.append(_Tok(norm, source, value, slot, False))
        after_number = norm.replace(".", "", 1).isdigit()
        previous = word
        position += 1
    return out, negations


def _limits(text: str) -> str:
    """Rewrite bounds so that their "no"/"not" is not read as a negation."""
    text = _UPPER_BOUND.sub(" maximum ", text)
    return _LOWER_BOUND.sub(" minimum ", text)


@lru_cache(maxsize=4096)
def _parse(text: str) -> _Rule:
    text = normalise(text)
    quoted = _quoted_words(text)
    body, rejected_phrases = _split_asides(_limits(text))
    body, more = _extract_rejected(body)
    rejected_phrases.extend(more)
    core, negations = _tokens(body, quoted)
    rejected: list[_Tok] = []
    for phrase in rejected_phrases:
        toks, _ = _tokens(phrase, quoted)
        rejected.extend(_Tok(t.norm, t.raw, t.value, True, t.unit) for t in toks if not t.unit)
    negative = len(negations) % 2 == 1
    lower_words = re.findall(r"[a-z']+", body.lower())
    if negative:
        marker = next((NEGATIVE_MARKERS[w] for w in lower_words if w in NEGATIVE_MARKERS), "not")
        if marker == "not" and re.search(r"\bdo\s+not\b", body, re.I):
            marker = "don't"
        modal = re.search(r"\b(must|should)\s+not\b", body, re.I)
        if modal:
            marker = modal.group(1).lower() + " not"
    else:
        marker = next((w for w in lower_words if w in POSITIVE_MARKERS), "do")
    return _Rule(text, tuple(core), tuple(rejected), negative, marker)


# --------------------------------------------------------------------------------------------
# Comparing two rules
# --------------------------------------------------------------------------------------------


def _describe(toks: Sequence[_Tok]) -> str:
    """The words of ``toks`` as written, each source word once."""
    out: list[str] = []
    for t in toks:
        if not out or out[-1] != t.raw:
            out.append(t.raw)
    return " ".join(out) if out else "(nothing)"


def _compatible_rejections(a: _Rule, b: _Rule) -> bool:
    ra, rb = a.rejected_set, b.rejected_set
    return not ra or not rb or ra == rb


def _is_duplicate(a: _Rule, b: _Rule) -> bool:
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
    shared_topic = [n for n in sa & sb if n not in _UNIT_NAMES]
    return not extra_tok.value and len(shared_topic) >= 2


@dataclass(frozen=True)
class _Diff:
    shared: list[_Tok]
    value_swaps: list[tuple[list[_Tok], list[_Tok]]]
    word_swaps: list[tuple[list[_Tok], list[_Tok]]]
    old_extra: list[_Tok]
    new_extra: list[_Tok]


def _family_swap(old: Sequence[_Tok], new: Sequence[_Tok]) -> bool:
    """Both sides name members of one known family, with nothing else but values and units."""

    def plain(t: _Tok) -> bool:
        return t.value or t.unit or t.norm in _FAMILIES or t.raw.lower() in _FAMILIES

    return all(plain(t) for t in (*old, *new)) and _same_family(old, new)


def _same_family(old: Sequence[_Tok], new: Sequence[_Tok]) -> bool:
    fo = {_FAMILIES.get(t.norm) for t in old} | {_FAMILIES.get(t.raw.lower()) for t in old}
    fn = {_FAMILIES.get(t.norm) for t in new} | {_FAMILIES.get(t.raw.lower()) for t in new}
    return bool((fo & fn) - {None})


def _diff(old: _Rule, new: _Rule) -> _Diff:
    a = [t.norm for t in old.core]
    b = [t.norm for t in new.core]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    shared: list[_Tok] = []
    value_swaps: list[tuple[list[_Tok], list[_Tok]]] = []
    word_swaps: list[tuple[list[_Tok], list[_Tok]]] = []
    old_extra: list[_Tok] = []
    new_extra: list[_Tok] = []
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


def _has_digit(t: _Tok) -> bool:
    return any(ch.isdigit() for ch in t.norm)


def _numeric(t: _Tok) -> bool:
    return any(ch.isdigit() for ch in t.norm) or "*" in t.norm or t.norm.startswith(".")


def _topic(toks: Sequence[_Tok]) -> set[str]:
    """What shared tokens say the two rules are about: not units, not numbers or patterns."""
    return {t.norm for t in toks if not t.unit and not _numeric(t)}


def _changed_value(old: _Rule, new: _Rule, d: _Diff) -> str | None:
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
    return "changed value: " + ", ".join(changes)


def _flipped(old: _Rule, new: _Rule, d: _Diff) -> str | None:
    if old.negative == new.negative or d.value_swaps or d.word_swaps:
        return None
    if not _compatible_rejections(old, new):
        return None
    shared = {t.norm for t in d.shared if not t.unit}
    extras = len(d.old_extra) + len(d.new_extra)
    if not shared or extras > 1 or (extras == 1 and len(shared) < 2):
        return None
    return f"flipped polarity ({old.marker} -> {new.marker})"


def _positive(rule: _Rule) -> frozenset[str]:
    return frozenset() if rule.negative else rule.core_set


def _negative(rule: _Rule) -> frozenset[str]:
    return rule.rejected_set | (rule.core_set if rule.negative else frozenset())


def _reversed(old: _Rule, new: _Rule) -> str | None:
    if not old.rejected and not new.rejected:
        return None
    gained = (_negative(old) & _positive(new)) - _positive(old) - _UNIT_NAMES
    dropped = (_positive(old) & _negative(new)) - _positive(new) - _UNIT_NAMES
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


def _overlap(a: _Rule, b: _Rule) -> float:
    sa, sb = a.all_set, b.all_set
    union = sa | sb
    return len(sa & sb) / len(union) if union else 1.0


def _may_relate(old: _Rule, new: _Rule) -> bool:
    """Cheap necessary condition for any verdict but "added": the rules share a word, or name
    members of one known family (pnpm/yarn), or one of them has no words to compare."""
    sa, sb = old.all_set, new.all_set
    if not sa or not sb or sa & sb:
        return True
    return bool(old.families & new.families)


# ---- Long rules: a whole-text comparison, asides included ----------------------------------

_LABEL = re.compile(r"^\s*(?P<label>[A-Za-z`][\w`.&/+#() -]{0,40}?)\s*:\s+(?P<rest>\S.*)$", re.S)
_DEFINITION = re.compile(r"^\s*(?P<subject>`[^`]+`|[A-Z][\w.+#/-]*)\s+(?:is|are)\s+\S")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
NEAR_SIMILARITY = 0.75  # share of tokens two texts must have in common to be one rule
NEAR_SHARED = 4  # and at least this many shared tokens


@lru_cache(maxsize=4096)
def _full(text: str) -> tuple[_Tok, ...]:
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

    text = _CODE_SPAN.sub(one_token, normalise(text))
    quoted = _quoted_words(text) | spans
    toks, _ = _tokens(_limits(text), quoted)
    return tuple(
        _Tok(_agent_base(t.norm), t.raw, t.value, t.raw.lower() in quoted or _numeric(t), t.unit)
        for t in toks
        if not t.unit
    )


def _value_swaps(a: Sequence[_Tok], b: Sequence[_Tok]) -> tuple[list[str], int, int]:
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


def _whole_text(old: _Rule, new: _Rule) -> tuple[int, str] | None:
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
            return 1, "changed value: " + ", ".join(swaps)
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
            return 1, f"changed {what} of {head_new[1]}"
    return None


@lru_cache(maxsize=4096)
def _full_set(text: str) -> frozenset[str]:
    return frozenset(t.norm for t in _full(text))


_Head = tuple[frozenset[str], str] | None


@lru_cache(maxsize=4096)
def _head(text: str) -> tuple[_Head, _Head]:
    """The label (``Imports:`` …) and the defined subject (```main` is`` …) of a rule, as
    token sets of at most four words with the words as written, or ``None``."""
    out: list[_Head] = []
    for pattern in (_LABEL, _DEFINITION):
        match = pattern.match(text)
        head = match.group(1) if match else ""
        tokens = _full_set(head) if head else frozenset()
        out.append((tokens, head.strip()) if tokens and len(tokens) <= 4 else None)
    return out[0], out[1]


def _judge(old: _Rule, new: _Rule) -> tuple[int, str] | None:
    """(priority, reason) when ``new`` restates (2) or contradicts (1) ``old``; else None."""
    if not _may_relate(old, new):
        return None  # the write path scans every entry of the category: keep that cheap
    if _is_duplicate(old, new):
        swaps = _value_swaps(_full(old.text), _full(new.text))[0]
        if swaps:  # the rules agree but an aside changed: "(e.g. `npm run x`)" -> "`bun run x`"
            return 1, "changed value: " + ", ".join(swaps)
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
    return _is_duplicate(_parse(a), _parse(b))


def classify(new_text: str, existing: Sequence[tuple[str, str]]) -> Verdict:
    """Say whether ``new_text`` is added, replaces or reinforces one of ``existing``.

    ``existing`` holds ``(entry_id, text)`` pairs of the entries in the new fact's category,
    oldest first.
    """
    _check_text(new_text, "new_text")
    new = _parse(new_text)
    best: tuple[int, float, int, str, str] | None = None
    for index, item in enumerate(existing):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise TypeError("existing must hold (entry_id, text) pairs")
        entry_id = _check_text(item[0], "entry id")
        old = _parse(_check_text(item[1], "existing text"))
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
    return Verdict("reinforced" if priority == 2 else "replaced", entry_id, reason)
