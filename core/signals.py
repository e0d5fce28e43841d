"""Detection of semantic signals: the rules and preferences a person states in a message.

``detect_signals(user_message)`` returns the facts worth saving to semantic memory, in order of
appearance, each with a category and the spec's confidence. It is a pure function: it reads no
file and saves nothing. The rules, written down once:

* **Normalised first** (``lexicon.normalise``): emphasis marks, links, typographic quotes and
  dashes, bullets and hard line breaks are gone before anything is matched.
* **Units.** The message is cut into sentences (``.``/``!``/``?`` followed by space, newlines,
  list bullets) and sentences into clauses (``;``, a spaced dash, ``, and``/``but``/``also`` or a
  colon in front of a new signal word). Each clause yields at most one fact; the halves of a
  correction split by punctuation (``No, don't use axios. Use fetch.``) are joined first.
  Sentences ending in ``?`` are skipped; a clause over 600 characters is a paste, not a rule.
* **Code is not speech.** Fenced blocks are dropped; inline code and URLs are masked while
  matching, so a keyword inside backticks never triggers, and put back in the fact (a command,
  code with a space in it, keeps its backticks; a single identifier loses them). A keyword
  inside an identifier or flag (``never_expire``, ``ALWAYS_ON=1``, ``--never-fail``,
  ``neverExpire``) is not a keyword.
* **Lead-ins are removed**: acknowledgements and politeness (``ok thanks.``, ``please``,
  ``also``, ``btw``, ``great,`` — the last kind only when punctuated), labels (``Note:``),
  request wrappers (``I want you to``, ``make sure to``, ``can you``, ``let's``) and hedges
  (``I think``). ``from now on`` is removed wherever it stands. What is left is the fact: first
  letter capitalised, trailing punctuation and ``please``/``thanks`` stripped.
* **Patterns and confidence** (the spec's mapping; the first that applies wins):
  ``always``/``never`` -> 1.0 (imperative, after ``we``, after ``you``/a noun + modal:
  ``Tests should always pass``); ``from now on``/``going forward`` -> 1.0, the fact is the rest;
  ``remember that X``/``remember: X``/``remember we …``/``keep in mind that X``/``remember to
  X`` -> 1.0, the fact is ``X``; ``I/we prefer X``/``I'd rather X``/``prefer X`` -> 0.9, fact
  ``Prefers X``;
  ``use X instead of/rather than Y`` and the corrections ``no, not Y - use X``, ``use X, not Y``,
  ``not Y, X`` -> 0.9, fact ``Use X instead of Y``; ``don't X``/``do not X``/``we don't X``/
  ``stop doing X``/``avoid X``/``X must not Y`` -> 0.9.
* **Chatter is not a rule.** Questions (``?``, an inverted auxiliary such as ``should we …``, a
  wh-word, ``I wonder if``); ``never mind``; self-description (``I always forget``, ``I don't
  know``: ``I`` + always/never counts only before want/like/prefer/need); narration and
  descriptions of behaviour (``it never crashed``, ``it's always been``, ``the build always
  fails``, ``you never run the tests``: a keyword after any other subject, or followed by a past,
  participle or third-person verb, an adjective or a determiner); ``remember that bug we fixed``
  (a noun followed by a relative clause, or no verb at all); one-off requests (``for now``,
  ``yet``, ``this time``, ``when you're done``, ``stop working on that``); ``don't worry``-type
  phrases; and clauses with no content word beside the signal and function words.
* **Context inference** (0.5, ``signal_context.py``) is not read from a reference entry (a
  line that starts with a code span, perhaps after a short label, then a dash or colon:
  "`make test` - Run all test suites"), nor from the plain imperative right after a prohibition
  ("Do not use X - write Y": the alternative, not a second rule); "no need to …" asks nothing;
  a trailing rejected alternative ("uv (not pip)", "explain why, not what") makes it 0.9.
* **Categories** come from keyword groups (``CATEGORY_WORDS``): the category with most hits
  wins; a tie or no hit falls back to what the pattern implies (a preference ->
  ``user_preference``, ``X instead of Y`` -> ``architecture_decision``, ``remember that`` ->
  ``project_context``, any other rule -> ``quality_rule``). Preferences are always
  ``user_preference``.
* Only the user's words carry signals; ``assistant_response`` is accepted and type-checked, never
  mined (an agent must not talk its own words into memory).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .lexicon import (
    CODE_SPAN,
    ED_BASE_VERBS,
    NOT_IMPERATIVE,
    OUTPUT_LABELS,
    PAST_FORMS,
    PREFERENCE_VERBS,
    STATIVE_VERBS,
    TASK_VERBS,
    normalise,
)
from .signal_context import context_kind, stated_fact
from .signal_context import first_word as _first_word
from .signal_context import has_content as _has_content
from .signal_languages import foreign_rules
from .signal_patterns import (
    ABBREVIATIONS,
    ADVERBIAL,
    AVOID,
    BARE_NOT,
    BARE_REJECT,
    BARE_VALUES,
    BULLET,
    CATEGORY_PATTERNS,
    CLAUSE_SPLIT,
    CORRECTION_BARE,
    CORRECTION_NOT_FIRST,
    CORRECTION_NOT_LAST,
    DANGLING_PRONOUN,
    DONT_EXCEPTIONS,
    DOT,
    ENSURE,
    FENCE,
    FINITE,
    FORBIDDEN_LABEL,
    FROM_NOW_ON,
    FUTURE_HEDGE,
    HEDGE,
    I_DONT_WANT,
    I_PREFERENCE,
    IN_PROGRESS,
    INSTEAD,
    INSTEAD_END,
    KIND_DEFAULT,
    LABEL,
    LABELLED_CHOICE,
    LEADIN,
    LETS_NOT,
    MAX_CLAUSE,
    MAX_KEYWORDS,
    MODAL_END,
    MODAL_NEGATIVE,
    NEGATIVE_START,
    NEVER_MIND,
    NO_NEED,
    NOT_ALTERNATIVE,
    NOT_HEAD,
    NUMBER_VALUE,
    OBJECT,
    ONE_OFF,
    PAST_VERB,
    PLACEHOLDER,
    PREFER,
    PREFER_IMPERATIVE,
    PREFERENCE_IS,
    PREFERRED,
    PROHIBITION,
    PRONOUN_SUBJECT,
    QUESTION_START,
    REFERENCE_ENTRY,
    RELATIVE_NOUN,
    REMEMBER,
    REMEMBER_TO,
    REMEMBER_TRAILING,
    REQUEST_LEADIN,
    SENTENCE_END,
    SHOUTED,
    SPECULATION,
    STOP,
    SUBJECT_WE,
    SUBJECT_YOU_MODAL,
    TIE_ORDER,
    TIME_PHRASE,
    TRAILING_ALWAYS,
    TRAILING_POLITE,
    URL,
    USE_HEAD,
    WE_USE,
)

__all__ = [
    "CONFIDENCE_ALWAYS",
    "CONFIDENCE_CONTEXT",
    "CONFIDENCE_RULE",
    "DetectedSignal",
    "detect_signals",
]

CONFIDENCE_ALWAYS = 1.0  # always / never / from now on / remember that
CONFIDENCE_RULE = 0.9  # prefer / use X instead of Y / corrections / don't / stop
CONFIDENCE_CONTEXT = 0.5  # context inference: a project fact or practice with no signal word


@dataclass(frozen=True)
class DetectedSignal:
    """One fact found in a user message, ready for ``save_semantic``."""

    fact: str
    category: str
    confidence: float
    # The prompt door's verdict on it (core/durable.py) and why: "instruction", "proposal"
    # or "refused" (never saved).
    verdict: str = "instruction"
    reason: str = ""


# --------------------------------------------------------------------------------------------
# Masking code, URLs and identifiers
# --------------------------------------------------------------------------------------------


def _code(code: str) -> str:
    """A code span as the fact shows it: a command (with spaces) keeps its backticks."""
    return f"`{code}`" if any(ch.isspace() for ch in code) else code


def _mask(text: str) -> tuple[str, list[str]]:
    """Replace inline code and URLs by placeholders; return the text and the originals."""
    kept: list[str] = []

    def hide(value: str) -> str:
        kept.append(value)
        return f"\ue000{len(kept) - 1}\ue001"

    text = FENCE.sub("\n", text)
    text = CODE_SPAN.sub(lambda m: hide(_code(m.group(1).strip())), text)
    text = URL.sub(lambda m: hide(m.group(0)), text)
    return text, kept


def _unmask(text: str, kept: list[str]) -> str:
    return PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], text)


# --------------------------------------------------------------------------------------------
# Splitting into sentences and clauses
# --------------------------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = BULLET.sub("", line)
        line = ABBREVIATIONS.sub(lambda m: m.group(1) + DOT, line)
        for part in SENTENCE_END.split(line):
            part = part.replace(DOT, ".").strip()
            if part:
                out.append(part)
    return out


def _clauses(sentence: str) -> list[str]:
    """Split a sentence at clause boundaries, keeping a boundary's text out of the clauses."""
    parts = [p.strip() for p in CLAUSE_SPLIT.split(sentence)]
    return [p for p in parts if p]


# --------------------------------------------------------------------------------------------
# Lead-ins, questions, narration
# --------------------------------------------------------------------------------------------


_LEADING_MARKS = re.compile(r"^(?:[ ,;:!\u2014\u2013-]|\.(?![A-Za-z0-9]))+")


def _strip_leadins(clause: str) -> str:
    previous = None
    while previous != clause:
        previous = clause
        clause = LEADIN.sub("", clause, count=1)
        clause = REQUEST_LEADIN.sub("", clause, count=1)
        clause = _LEADING_MARKS.sub("", clause)  # not the dot of ".NET", ".env"
    return clause


def _is_question(clause: str) -> bool:
    stripped = clause.rstrip()
    if stripped.endswith("?"):
        return True
    return bool(QUESTION_START.match(stripped)) or bool(HEDGE.search(stripped))


def _verb_is_narration(word: str) -> bool:
    """True when ``word`` (after always/never) is a past, participle or third-person form."""
    w = word.lower().strip(",.;:!?")
    if w in PAST_FORMS:
        return True
    if w.endswith("ed") and w not in ED_BASE_VERBS:
        return True
    return (
        len(w) > 3
        and w.endswith("s")
        and not w.endswith(("ss", "us", "is", "'s", "ics"))
        and w not in ("always", "does", "yes", "this", "has")
    )


# --------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------


def _keyword_positions(text: str, keyword: str) -> list[int]:
    """Start offsets of ``keyword`` used as a word, not as part of an identifier or flag."""
    pattern = r"(?i)(?<![\w\-=$./\\@#])" + keyword + r"(?![\w=(/\\@]|-\w|\.\w)"
    return [m.start() for m in re.finditer(pattern, text)]


def _capitalise(text: str) -> str:
    text = text.strip()
    for i, ch in enumerate(text):
        if ch.isalpha():
            return text[:i] + ch.upper() + text[i + 1 :]
        if ch == "\ue000":
            return text
    return text


def _clean_fact(text: str) -> str:
    text = TIME_PHRASE.sub(" ", text)
    text = SHOUTED.sub(lambda m: m.group(1).lower(), text)
    text = TRAILING_POLITE.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = text.strip(" ,;:\u2014\u2013-")
    text = re.sub(r"[.!?,;:\s]+$", "", text)
    text = text.strip("\"'")
    return _capitalise(text)


# --------------------------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------------------------

_Found = tuple[str, float, str]  # (fact, confidence, kind)


def _segment_prefix(clause: str, position: int) -> tuple[int, str]:
    """Start and text of what lies between the last comma/colon/dash and ``position``."""
    head = clause[:position]
    cut = max(head.rfind(","), head.rfind(":"), head.rfind("\u2014"), head.rfind("\u2013"))
    start = cut + 1
    while start < position and head[start].isspace():
        start += 1
    return start, head[start:].strip()


def _verb_is_narration_after_subject(word: str) -> bool:
    """Past forms only: after a subject a third-person ``-s`` is the normal present."""
    w = word.lower()
    return w in PAST_FORMS or (w.endswith("ed") and w not in ED_BASE_VERBS)


def _always_never(clause: str) -> _Found | None:
    """``always``/``never`` used as an instruction (imperative, ``we``, or subject + modal)."""
    positions = sorted(_keyword_positions(clause, "always") + _keyword_positions(clause, "never"))
    for pos in positions[:MAX_KEYWORDS]:
        keyword = clause[pos : pos + 6].lower().strip()
        after = clause[pos + len(keyword) :].lstrip(" ,")
        after = re.sub(r"^(?:ever|,)\s*", "", after, flags=re.I)
        next_word = _first_word(after)
        if not next_word or not _has_content(after):
            continue
        start, prefix = _segment_prefix(clause, pos)
        if ENSURE.match(prefix) and not _verb_is_narration_after_subject(next_word):
            return clause, CONFIDENCE_ALWAYS, "rule"
        if not prefix:
            # Imperative: "Always run the tests", "For the UI, never use inline styles".
            if next_word in NOT_IMPERATIVE or _verb_is_narration(next_word):
                continue
            return clause, CONFIDENCE_ALWAYS, "rule"
        if SUBJECT_WE.match(prefix) or SUBJECT_YOU_MODAL.match(prefix):
            if next_word in STATIVE_VERBS or _verb_is_narration(next_word):
                continue
            return clause[:start] + clause[pos:], CONFIDENCE_ALWAYS, "rule"
        if I_PREFERENCE.match(prefix):
            if next_word.rstrip("s") in PREFERENCE_VERBS:
                return clause, CONFIDENCE_ALWAYS, "preference"
            continue
        if MODAL_END.search(" " + prefix) and not PRONOUN_SUBJECT.match(prefix):
            # "Tests should always pass before merge", "Secrets must never be committed".
            return clause, CONFIDENCE_ALWAYS, "rule"
    trailing = TRAILING_ALWAYS.match(clause)
    if trailing and _starts_like_instruction(trailing.group("head")):
        head = trailing.group("head")
        if _has_content(head) and not re.match(r"^(?:we|you)\b", head, re.I):
            return "Always " + head[0].lower() + head[1:], CONFIDENCE_ALWAYS, "rule"
    return None


def _from_now_on(clause: str) -> _Found | None:
    match = FROM_NOW_ON.search(clause)
    if not match:
        return None
    rest = (clause[: match.start()] + " " + clause[match.end() :]).strip(" ,")
    rest = _strip_leadins(rest)
    rest = re.sub(r"^(?:(?:we|you)\s+(?:will|'ll|should|must|shall)\s+)", "", rest, flags=re.I)
    if not rest or _is_question(rest) or not _has_content(rest) or SPECULATION.search(rest):
        return None
    subject_i = re.match(
        r"^i(?:'ll|\s+will|'d|\s+would|\s+want|\s+need|\s+prefer)?\s+(\w+)", rest, re.I
    )
    if subject_i:
        verb = subject_i.group(1).lower()
        if verb in STATIVE_VERBS or _verb_is_narration_after_subject(verb):
            return None
        return rest, CONFIDENCE_ALWAYS, "preference"
    if PRONOUN_SUBJECT.match(rest):
        return None
    inner = _match_rule(rest, allow_time=True)
    if inner is not None:
        return inner[0], CONFIDENCE_ALWAYS, inner[2]
    words = rest.split()
    first = _first_word(rest)
    if first in ("we", "you", "the", "our", "all", "every", "each") and len(words) > 2:
        # A statement of how things are from now on: "we deploy from the release branch".
        verb = words[1].lower() if first in ("we", "you") else ""
        if verb in STATIVE_VERBS or _verb_is_narration_after_subject(verb):
            return None
        return rest, CONFIDENCE_ALWAYS, "fact" if first != "you" else "rule"
    if first in NOT_IMPERATIVE or _verb_is_narration(first):
        return None
    return rest, CONFIDENCE_ALWAYS, "rule"


def _remember(clause: str) -> _Found | None:
    match = REMEMBER.match(clause) or REMEMBER_TRAILING.match(clause)
    if match:
        fact = match.group("fact").strip()
        if _is_question(fact) or not _has_content(fact):
            return None
        if not FINITE.search(fact) and not PAST_VERB.search(fact):
            return None
        if RELATIVE_NOUN.match(fact):
            return None
        inner = _always_never(fact) or _negative(fact)
        return (inner[0] if inner else fact), CONFIDENCE_ALWAYS, "fact"
    match = REMEMBER_TO.match(clause)
    if match:
        x = match.group("x").strip()
        if not _has_content(x) or ONE_OFF.search(x):
            return None
        inner = _always_never(x)
        return (inner[0] if inner else x), CONFIDENCE_ALWAYS, "rule"
    return None


def _prefer(clause: str, *, nested: bool = False) -> _Found | None:
    adverbial = ADVERBIAL.match(clause)
    if adverbial and not nested:
        inner = _prefer(adverbial.group("rest"), nested=True)
        if inner is not None:
            fact = inner[0]
            fact = fact[0].lower() + fact[1:] if fact.startswith("Prefers ") else fact
            return f"{adverbial.group('adv')}, {fact}", inner[1], inner[2]
    for pattern in (PREFER, PREFERENCE_IS):
        match = pattern.match(clause)
        if not match:
            continue
        rest = match.group("rest").strip()
        if pattern is PREFER and match.group("verb").lower() == "rather":
            rest = re.sub(r"^(?:not\s+)", "not to ", rest, flags=re.I)
            if re.match(r"^(?:you|we|they|it)\b", rest, re.I):
                rest = "that " + rest
            elif not rest.lower().startswith(("to ", "not to ", "that ")):
                rest = "to " + rest
        rest = re.sub(r"^(?:it\s+)?(?:if|when)\s+you\b", "that you", rest, flags=re.I)
        if not _has_content(rest):
            return None
        return "Prefers " + rest, CONFIDENCE_RULE, "preference"
    match = PREFER_IMPERATIVE.match(clause)
    if match and _has_content(match.group("rest")):
        return clause, CONFIDENCE_RULE, "preference"
    match = PREFERRED.match(clause)
    if match and _has_content(match.group("x")) and not PRONOUN_SUBJECT.match(clause):
        return clause, CONFIDENCE_RULE, "preference"
    return None


def _starts_like_instruction(clause: str) -> bool:
    first = _first_word(clause)
    if not first or first in NOT_IMPERATIVE:
        return False
    return not _verb_is_narration(first)


def _trim(text: str) -> str:
    return text.strip().strip(".,;:!\u2014\u2013- ").strip()


def _instead(clause: str) -> _Found | None:
    match = CORRECTION_NOT_FIRST.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        if _has_content(x) and _has_content(y):
            return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"
    match = CORRECTION_NOT_LAST.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        tail = f" {_trim(match.group('tail'))}" if match.group("tail") else ""
        if _has_content(x) and _has_content(y):
            return f"Use {y} instead of {x}{tail}", CONFIDENCE_RULE, "choice"
    match = CORRECTION_BARE.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        if _has_content(x) and _has_content(y) and not BARE_REJECT.search(x + " " + y):
            return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"
    if INSTEAD.search(clause) or INSTEAD_END.search(clause):
        body = clause
        if re.match(r"^(?:we|you)\s", body, re.I):
            body = WE_USE.sub("", body, count=1)
            if _verb_is_narration(_first_word(body)):
                return None
        elif not _starts_like_instruction(body):
            return None
        if _has_content(INSTEAD.split(body)[0]) and _has_content(body):
            return body, CONFIDENCE_RULE, "choice"
    return None


def _negative(clause: str) -> _Found | None:
    match = I_DONT_WANT.match(clause) or LETS_NOT.match(clause)
    if match:
        rest = match.group("rest").strip()
        if _has_content(rest) and not DONT_EXCEPTIONS.match(rest):
            return "Don't " + rest, CONFIDENCE_RULE, "rule"
        return None
    match = NEGATIVE_START.match(clause)
    if match:
        rest = match.group("rest").strip()
        if DONT_EXCEPTIONS.match(rest) or not _has_content(rest):
            return None
        if match.group("we"):
            first = _first_word(rest)
            if first in STATIVE_VERBS or first in NOT_IMPERATIVE or _verb_is_narration(first):
                return None
            return "Don't " + rest, CONFIDENCE_RULE, "rule"
        return clause, CONFIDENCE_RULE, "rule"
    match = STOP.match(clause)
    if match and _has_content(match.group("ger") + match.group("rest")):
        if match.group("ger").lower() in ("doing", "being") and not _has_content(
            match.group("rest")
        ):
            return None
        if re.match(
            r"^\s*(?:on|with|at|about|for)?\s*(?:it|that|this|them|those|now)\b",
            match.group("rest"),
            re.I,
        ):
            return None  # "stop working on that": a one-off request
        return clause, CONFIDENCE_RULE, "rule"
    match = AVOID.match(clause)
    if match and _has_content(match.group("rest")):
        return clause, CONFIDENCE_RULE, "rule"
    match = MODAL_NEGATIVE.match(clause)
    if match and _has_content(match.group("rest")):
        subject = match.group("subject").strip()
        if PRONOUN_SUBJECT.match(subject) or _is_question(clause):
            return None
        if re.match(r"^(?:we|you|you\s+all|y'all)$", subject, re.I):
            return "Don't " + match.group("rest").strip(), CONFIDENCE_RULE, "rule"
        if not _has_content(subject):
            return None
        return clause, CONFIDENCE_RULE, "rule"
    # "..., don't X" after an adverbial: "In tests, don't mock the database".
    for sep in re.finditer(r"[,:]\s*(?=(?:please\s+)?(?:don'?t|do\s+not)\s)", clause, re.I):
        tail = clause[sep.end() :]
        tail = re.sub(r"^please\s+", "", tail, flags=re.I)
        inner = NEGATIVE_START.match(tail)
        head = clause[: sep.start()]
        if inner and not inner.group("we") and not PRONOUN_SUBJECT.match(head):
            rest = inner.group("rest")
            if _has_content(rest) and not DONT_EXCEPTIONS.match(rest):
                if re.search(r"\b(?:i|it|this|that)\s+\w+$", head, re.I):
                    continue
                return clause, CONFIDENCE_RULE, "rule"
    return None


_MATCHERS: tuple[Callable[[str], _Found | None], ...] = (
    _always_never,
    _from_now_on,
    _remember,
    _prefer,
    _instead,
    _negative,
)


def _context_fact(clause: str) -> _Found | None:
    """A plain statement of project fact or practice: the spec's context inference (0.5)."""
    kind = context_kind(clause)
    return None if kind is None else (clause, CONFIDENCE_CONTEXT, kind)


def _resolve_pronoun(fact: str, previous: str) -> str | None:
    """Put the previous rule's object in place of ``them``/``it`` ("always generate them with
    alembic" after "never edit migrations by hand"), or ``None`` when there is none."""
    match = OBJECT.match(_strip_leadins(previous))
    if not match:
        return None
    obj = match.group("object")
    plural = obj.lower().endswith("s")
    pronoun = re.search(r"\b(them|it|these|those)\b", fact, re.I)
    if not pronoun or (pronoun.group(1).lower() == "it") == plural or not _has_content(obj):
        return None
    return fact[: pronoun.start()] + obj + fact[pronoun.end() :]


def _match_plain(clause: str, *, allow_time: bool) -> _Found | None:
    for matcher in _MATCHERS:
        if allow_time and matcher is _from_now_on:
            continue
        found = matcher(clause)
        if found is not None:
            return found
    return None


def _labelled_choice(rest: str) -> _Found | None:
    match = LABELLED_CHOICE.match(rest)
    if not match:
        return None
    x, y = _trim(match.group("x")), _trim(match.group("y"))
    if not _has_content(x) or not _has_content(y) or BARE_REJECT.search(x + " " + y):
        return None
    return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"


def _with_label(label: str, fact: str) -> str:
    if fact[:1].isupper() and not fact.split()[0].isupper():
        fact = fact[0].lower() + fact[1:]
    return f"{label}: {fact}"


def _match_rule(clause: str, *, allow_time: bool = False) -> _Found | None:
    """The first pattern that turns ``clause`` into a fact, or ``None``."""
    if len(clause) > MAX_CLAUSE:
        return None  # a paste (log, code, prose), not a stated rule
    clause = NEVER_MIND.sub("", clause).strip()
    clause = _strip_leadins(clause)
    if not clause or _is_question(clause):
        return None
    clause = clause.rstrip(" .!")
    found = _match_plain(clause, allow_time=allow_time)
    label = LABEL.match(clause)
    if found is None and label:
        # "Async testing: use anyio, not asyncio": the label stays in the fact as its topic.
        if _first_word(label.group("label")) in OUTPUT_LABELS:
            return None  # "Error: tests must pass" is output pasted in, not a rule
        rest = _strip_leadins(label.group("rest"))
        if FORBIDDEN_LABEL.match(label.group("label")) and _has_content(rest):
            return clause, CONFIDENCE_RULE, "rule"  # "FORBIDDEN: `uv pip install`"
        inner = (
            _match_plain(rest, allow_time=allow_time)
            or _labelled_choice(rest)
            or _context_fact(rest)
        )
        if inner is not None:
            found = (_with_label(label.group("label"), inner[0]), inner[1], inner[2])
        elif (BARE_VALUES.match(rest) or NUMBER_VALUE.match(rest)) and _has_content(rest):
            found = clause, CONFIDENCE_CONTEXT, "fact"  # "Package manager: pnpm"
    if found is None and (not label or stated_fact(clause)):
        found = _context_fact(clause)  # "I have two repos: one for the Mac build and …"
    if found is None or NO_NEED.match(clause):
        return None  # "No need to run it manually": nothing asked
    if found[1] == CONFIDENCE_CONTEXT and NOT_ALTERNATIVE.search(clause):
        found = (found[0], CONFIDENCE_RULE, found[2])  # "uv (not pip)", "why, not what"
    if found[1] < CONFIDENCE_ALWAYS and ONE_OFF.search(clause):
        return None  # "Don't merge yet", "use the mock for now": a one-off request
    if FUTURE_HEDGE.match(clause) or IN_PROGRESS.search(clause):
        return None  # "we can always add caching later", "X is throwing a 500 instead of a 404"
    return found


def _offered_fact(clause: str, found: _Found) -> bool:
    """A plain fact offered as information inside a request for work ("This is my Stationpedia
    app, built for the game Stationeers. Please gather context …"): it outlasts the task, so
    the request does not scope it (the prompt door proposes it: core/durable.py). A labelled
    role ("Jest for tests"), a labelled value ("Fields: email, password") stay part of the
    task they specify."""
    return found[1] == CONFIDENCE_CONTEXT and stated_fact(_strip_leadins(clause).rstrip(" .!"))


_REASON = re.compile(r"^(?:it|this|that|they|because|since)\s+\w+", re.IGNORECASE)
_TROUBLE = re.compile(r"\b(?:error|fail\w*|broken|crash\w*|bug|wrong|doesn'?t|isn'?t|not)\b", re.I)
REASON_MAX_WORDS = 10


def _reason(clause: str) -> str | None:
    """The short sentence after a rule that says why ("Don't build the project. It builds in
    CI."): kept with the rule, which is then served with its reason; None when ``clause`` is
    a rule of its own, a question, a report of trouble or longer than ``REASON_MAX_WORDS``."""
    text = _strip_leadins(clause).strip().rstrip(" .!")
    if (
        not _REASON.match(text)
        or len(text.split()) > REASON_MAX_WORDS
        or _is_question(clause)
        or _TROUBLE.search(text)
        or _match_rule(text) is not None
    ):
        return None
    return text[0].lower() + text[1:]  # "It", "Because": a word of the rule's sentence now


def _is_task_request(clause: str) -> bool:
    """A request for work now ("Fix the TypeScript error …"): it scopes the message's rules."""
    clause = _strip_leadins(clause.strip())
    return _first_word(clause) in TASK_VERBS and _match_rule(clause) is None


# --------------------------------------------------------------------------------------------
# Categories
# --------------------------------------------------------------------------------------------


def _categorise(fact: str, kind: str) -> str:
    if kind == "preference":
        return "user_preference"
    scores = {cat: len(p.findall(fact)) for cat, p in CATEGORY_PATTERNS.items()}
    default = KIND_DEFAULT[kind]
    best = max(scores.values())
    if best == 0:
        return default
    leaders = [cat for cat, score in scores.items() if score == best]
    if default in leaders:
        return default
    for cat in TIE_ORDER:
        if cat in leaders:
            return cat
    return default  # pragma: no cover - leaders is never empty


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _join(first: str, second: str) -> str:
    return first.rstrip(" .!;,") + ", " + second


def _merge_corrections(clauses: list[str]) -> list[str]:
    """Join the halves of a correction split by punctuation into one clause.

    "no - not X", "not X / don't use X" + "use Y", and "use Y" + "not X" each become one clause,
    also across a sentence boundary ("No, don't use axios. Use fetch.").
    """
    out: list[str] = []
    for clause in clauses:
        if out:
            previous = _strip_leadins(out[-1])
            if not previous and re.match(r"^not\s", clause, re.I):
                out[-1] = _join(out[-1], clause)  # "no - not jest, vitest"
                continue
            if (
                USE_HEAD.match(clause)
                and NOT_HEAD.match(previous)
                and not INSTEAD.search(clause)
                and not INSTEAD.search(previous)
            ):
                out[-1] = _join(out[-1], clause)
                continue
            if (
                USE_HEAD.match(previous)
                and BARE_NOT.match(clause.rstrip(" .!"))
                and not INSTEAD.search(previous)
            ):
                out[-1] = _join(out[-1], clause)
                continue
        out.append(clause)
    return out


def detect_signals(user_message: str, assistant_response: str = "") -> list[DetectedSignal]:
    """The rules and preferences stated in ``user_message``, in order of appearance."""
    if not isinstance(user_message, str):
        raise TypeError(f"user_message must be a string, got {type(user_message).__name__}")
    if not isinstance(assistant_response, str):
        raise TypeError(
            f"assistant_response must be a string, got {type(assistant_response).__name__}"
        )
    if not user_message.strip():
        return []
    masked, kept = _mask(normalise(user_message))
    found: list[DetectedSignal] = []
    seen: set[str] = set()
    clauses: list[str] = []
    reference: set[str] = set()  # the clauses of a reference entry ("`make test` - Run all")
    for line in masked.split("\n"):
        entry = REFERENCE_ENTRY.match(line) is not None
        for sentence in _sentences(line):
            if not sentence.rstrip().endswith("?"):
                parts = _clauses(sentence)
                reference.update(parts if entry else ())
                clauses.extend(parts)
    merged = _merge_corrections(clauses)
    # A message that asks for work now scopes its other instructions to that work.
    task = any(_is_task_request(clause) for clause in merged)
    previous = ""
    prohibited = False  # the clause before was a prohibition ("Do not use X - write Y")
    for index, clause in enumerate(merged):
        match = _match_rule(clause)
        after_prohibition = prohibited
        prohibited = match is not None and PROHIBITION.match(_strip_leadins(clause)) is not None
        if match is None:
            continue
        fact_text, confidence, kind = match
        if confidence == CONFIDENCE_CONTEXT and (clause in reference or after_prohibition):
            continue  # a reference entry's description; the alternative a prohibition names
        if task and confidence < CONFIDENCE_ALWAYS and not _offered_fact(clause, match):
            continue  # "implement X; do not change the storage format": part of the task
        if DANGLING_PRONOUN.search(fact_text):
            fact_text = _resolve_pronoun(fact_text, previous) or ""
        reason = _reason(merged[index + 1]) if index + 1 < len(merged) else None
        if reason and fact_text and confidence >= CONFIDENCE_RULE:
            fact_text = fact_text.rstrip(" .!") + "; " + reason  # "…; it builds in CI"
        previous = clause
        fact = _unmask(_clean_fact(fact_text), kept).strip()
        key = fact.lower()
        if not fact or key in seen or DANGLING_PRONOUN.search(fact):
            continue
        seen.add(key)
        found.append(DetectedSignal(fact, _categorise(fact, kind), confidence))
    for sentence, confidence in foreign_rules(masked):  # another language: the operators only
        fact = _unmask(sentence, kept).strip()
        if fact and fact.lower() not in seen and not any(f.fact in fact for f in found):
            seen.add(fact.lower())
            found.append(DetectedSignal(fact, _categorise(fact, "rule"), confidence))
    return found
