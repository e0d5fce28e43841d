"""Reading a rule for the contradiction checks (``core/contradiction.py``): a text becomes a
``Rule`` (content tokens, polarity, rejected alternatives, marker). Lexical and deterministic:

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
"""

from __future__ import annotations

import re
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
from .text import stem, tokens

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
UNIT_NAMES = frozenset(_UNITS.values())


# Known alternatives: two members of one family are two answers to the same question.
FAMILIES: dict[str, str] = {}
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
        FAMILIES[_member] = _family
_KNOWN_NAMES = frozenset(FAMILIES)

# --------------------------------------------------------------------------------------------
# Parsing a rule
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    norm: str  # canonical, stemmed form: what comparisons use
    raw: str  # the word as written, for reasons
    value: bool  # a number, pattern, name, …: a rule's conclusion
    slot: bool  # in a complement slot (after "is", "use", "prefer", ":", …)
    unit: bool  # a unit following a number ("minute" in "15min")


DEFAULT_MARKER = "do"  # the marker of a positive rule with no word that marks it


@dataclass(frozen=True)
class Rule:
    text: str
    core: tuple[Tok, ...]
    rejected: tuple[Tok, ...]
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
        found = {FAMILIES.get(t.norm) for t in (*self.core, *self.rejected)}
        found |= {FAMILIES.get(t.raw.lower()) for t in (*self.core, *self.rejected)}
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


def quoted_words(text: str) -> frozenset[str]:
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
    return _SYNONYMS.get(stemmed, _final_e(stemmed))


def _final_e(base: str) -> str:
    """ "overcomplicate" and "overcomplicated" are one word (``stem`` leaves "overcomplicat"
    and "overcomplicate"): a final ``e`` goes, from five letters ("note", "make" stay)."""
    if len(base) <= 4 or not base.endswith("e") or base.endswith("ee") or base in FAMILIES:
        return base  # a known tool or setting keeps its name ("space", "gradle")
    return base[:-1]


def agent_base(word: str) -> str:
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


def rule_tokens(text: str, quoted: frozenset[str]) -> tuple[list[Tok], list[str]]:
    """Content tokens of ``text`` and the negation words met on the way."""
    out: list[Tok] = []
    negations: list[str] = []
    previous = ""
    after_number = False
    position = 0
    pieces: list[tuple[str, str]] = []  # (raw piece, raw word it came from)
    for raw_word in tokens(text, marks=True):
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
            out.append(Tok(number, source, True, slot, False))
            out.append(Tok(_UNITS[unit], source, False, False, True))
            previous, after_number, position = unit, False, position + 1
            continue
        if (after_number or "/" in source) and word in _UNITS:
            # "10 req/min", "10 requests per minute": a unit, maybe "per" and another unit.
            out.append(Tok(_UNITS[word], source, False, False, True))
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
        out.append(Tok(norm, source, value, slot, False))
        after_number = norm.replace(".", "", 1).isdigit()
        previous = word
        position += 1
    return out, negations


def read_limits(text: str) -> str:
    """Rewrite bounds so that their "no"/"not" is not read as a negation."""
    text = _UPPER_BOUND.sub(" maximum ", text)
    return _LOWER_BOUND.sub(" minimum ", text)


@lru_cache(maxsize=4096)
def parse_rule(text: str) -> Rule:
    text = normalise(text)
    quoted = quoted_words(text)
    body, rejected_phrases = _split_asides(read_limits(text))
    body, more = _extract_rejected(body)
    rejected_phrases.extend(more)
    core, negations = rule_tokens(body, quoted)
    rejected: list[Tok] = []
    for phrase in rejected_phrases:
        toks, _ = rule_tokens(phrase, quoted)
        rejected.extend(Tok(t.norm, t.raw, t.value, True, t.unit) for t in toks if not t.unit)
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
        marker = next((w for w in lower_words if w in POSITIVE_MARKERS), DEFAULT_MARKER)
    return Rule(text, tuple(core), tuple(rejected), negative, marker)
