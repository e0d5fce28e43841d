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
  ``remember that X``/``remember: X``/``keep in mind that X``/``remember to X`` -> 1.0, the fact
  is ``X``; ``I/we prefer X``/``I'd rather X``/``prefer X`` -> 0.9, fact ``Prefers X``;
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
* **Categories** come from keyword groups (``_CATEGORY_WORDS``): the category with most hits
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
    BARE_OBJECT_VERBS,
    ED_BASE_VERBS,
    FILLER,
    NOT_IMPERATIVE,
    OUTPUT_LABELS,
    PAST_FORMS,
    PRACTICE_VERBS,
    PREFERENCE_VERBS,
    STATIVE_VERBS,
    TASK_VERBS,
    normalise,
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


# --------------------------------------------------------------------------------------------
# Masking code, URLs and identifiers
# --------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"\b(?:https?://|www\.)\S+")
_PLACEHOLDER = re.compile(r"\ue000(\d+)\ue001")


def _code(code: str) -> str:
    """A code span as the fact shows it: a command (with spaces) keeps its backticks."""
    return f"`{code}`" if any(ch.isspace() for ch in code) else code


def _mask(text: str) -> tuple[str, list[str]]:
    """Replace inline code and URLs by placeholders; return the text and the originals."""
    kept: list[str] = []

    def hide(value: str) -> str:
        kept.append(value)
        return f"\ue000{len(kept) - 1}\ue001"

    text = _FENCE.sub("\n", text)
    text = _INLINE_CODE.sub(lambda m: hide(_code(m.group(1).strip())), text)
    text = _URL.sub(lambda m: hide(m.group(0)), text)
    return text, kept


def _unmask(text: str, kept: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], text)


# --------------------------------------------------------------------------------------------
# Splitting into sentences and clauses
# --------------------------------------------------------------------------------------------

_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|incl|esp|cf|ca)\.", re.I)
_BULLET = re.compile(r"^\s*(?:[-*\u2022+>]|\d{1,3}[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")
_DOT = "\ue002"

# Words that begin a new rule inside a sentence: a clause boundary is put in front of them.
_SIGNAL_HEAD = (
    r"(?:(?:please|also|just|and|then)\s+)*"
    r"(?:always|never|don'?t|do\s+not|stop\s+\w+ing|avoid|from\s+now\s+on|going\s+forward|"
    r"remember\s+(?:that|to)|keep\s+in\s+mind|(?:i|we)\s+(?:also\s+)?prefer|prefer|"
    r"use\s+\S+(?:\s+\S+){0,3}\s+(?:instead\s+of|rather\s+than))\b"
)
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*"
    r"|\s+(?:\u2014|\u2013|--|-)\s+"
    r"|\s*:\s+(?=" + _SIGNAL_HEAD + r")"
    r"|,?\s+(?:and|but|plus|also|then)\s+(?:also\s+)?(?=" + _SIGNAL_HEAD + r")",
    re.I,
)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line)
        line = _ABBREVIATIONS.sub(lambda m: m.group(1) + _DOT, line)
        for part in _SENTENCE_END.split(line):
            part = part.replace(_DOT, ".").strip()
            if part:
                out.append(part)
    return out


def _clauses(sentence: str) -> list[str]:
    """Split a sentence at clause boundaries, keeping a boundary's text out of the clauses."""
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(sentence)]
    return [p for p in parts if p]


# --------------------------------------------------------------------------------------------
# Lead-ins, questions, narration
# --------------------------------------------------------------------------------------------

_LEADIN_WORDS = (
    r"ok(?:ay)?|k|kk|thanks(?:\s+a\s+lot)?|thank\s+you(?:\s+so\s+much)?|thx|ty|cheers|"
    r"hey|hi|hello|oh|ah|hmm+|um+|uh|so|and|also|plus|but|btw|by\s+the\s+way|fyi|"
    r"one\s+more\s+thing|another\s+thing|just|please|pls|plz|kindly|actually|honestly|"
    r"in\s+general|generally|as\s+a\s+(?:general\s+)?rule|for\s+the\s+record|"
    r"just\s+so\s+you\s+know|ps|p\.s\.?"
)
# Labels that are lead-ins only when punctuated: "Note: never ...", "Rule - always ...".
_LABEL_WORDS = (
    r"note|important|reminder|gentle\s+reminder|quick\s+note|side\s+note|heads\s+up|rule|"
    r"new\s+rule|general\s+rule|house\s+rule|tip|correction|update|fyi"
)
# Acknowledgements that are lead-ins only when punctuated: "Great, ..." but not "Good tests ...".
_ACK_WORDS = (
    r"cool|great|perfect|nice|awesome|good|excellent|alright|all\s+right|right|yes|yeah|yep|"
    r"yup|sure|well|fine|got\s+it|understood|noted|lgtm|looks\s+good|sounds\s+good|works"
)
_LEADIN = re.compile(
    r"^(?:(?:"
    + _LEADIN_WORDS
    + r")\b\s*[,:!.\u2014\u2013-]*|no+(?:[\s,]+no+)*\s*[,:!.\u2014\u2013-]+"
    r"|(?:" + _LABEL_WORDS + r")\s*[:!\u2014\u2013-]+"
    r"|(?:" + _ACK_WORDS + r")\s*[,:!.\u2014\u2013-]+)"
    r"\s*",
    re.I,
)
_REQUEST_LEADIN = re.compile(
    r"^(?:i\s+(?:really\s+)?(?:want|need|would\s+like|'d\s+like|d\s+like)\s+you\s+to|"
    r"i'd\s+like\s+you\s+to|can\s+you|could\s+you|would\s+you|will\s+you|"
    r"make\s+sure\s+(?:that\s+)?(?:you\s+|we\s+)?(?:to\s+)?(?=always|never|don|do\s+not)|"
    r"be\s+sure\s+to(?=\s+(?:always|never))|try\s+to(?=\s+(?:always|never))|"
    r"remember\s+to(?=\s+(?:always|never))|i\s+think|i\s+guess|i\s+believe|"
    r"i\s+feel\s+like|let'?s|let\s+us)\b\s*,?\s*",
    re.I,
)
_TRAILING_POLITE = re.compile(
    r"(?:[,\s]+(?:please|pls|thanks|thank\s+you|thx|ok(?:ay)?|cheers))+\s*[.!]*\s*$", re.I
)


def _strip_leadins(clause: str) -> str:
    previous = None
    while previous != clause:
        previous = clause
        clause = _LEADIN.sub("", clause, count=1)
        clause = _REQUEST_LEADIN.sub("", clause, count=1)
        clause = clause.lstrip(" ,.;:!\u2014\u2013-")
    return clause


_AUXILIARIES = (
    "should|shall|do|does|did|is|are|was|were|am|can|could|would|will|have|has|had|may|might|"
    "must|isn't|aren't|wasn't|weren't|doesn't|didn't|don't|won't|wouldn't|shouldn't|couldn't|"
    "can't|haven't|hasn't"
)
_QUESTION_START = re.compile(
    r"^(?:(?:" + _AUXILIARIES + r")\s+(?:we|you|i|it|they|he|she|this|that|these|those|there|"
    r"the|a|an|our|your|my|any|anyone|anybody|everyone|people)\b"
    r"|(?:what|why|how|which|who|whom|whose|where)\b"
    r"|when\s+(?:" + _AUXILIARIES + r")\b"
    r"|(?:any\s+idea|is\s+there|i\s+wonder|wondering|not\s+sure\s+(?:if|whether)|"
    r"do\s+you\s+know|how\s+about|what\s+about)\b)",
    re.I,
)
_HEDGE = re.compile(r"\b(?:wonder(?:ing)?\s+(?:if|whether)|not\s+sure\s+(?:if|whether))\b", re.I)


def _is_question(clause: str) -> bool:
    stripped = clause.rstrip()
    if stripped.endswith("?"):
        return True
    return bool(_QUESTION_START.match(stripped)) or bool(_HEDGE.search(stripped))


_NEVER_MIND = re.compile(r"\bnever\s*mind(?:\s+(?:that|this|it)(?=\s*[,.!;:]))?\b[,.!;:]*\s*", re.I)
_ONE_OFF = re.compile(
    r"\b(?:for\s+now|(?:just\s+)?(?:this|that)\s+(?:time|once)|right\s+now|today|tonight|"
    r"at\s+the\s+moment|for\s+the\s+moment|yet|just\s+yet|"
    r"(?:for|in|on)\s+this\s+(?:one|task|pr|commit|branch|change|session|ticket|issue|run)|"
    r"until\b|when\s+you(?:'re|\s+are)\s+done|when\s+(?:you(?:'ve)?\s+)?finish\w*|"
    r"once\s+you(?:'re|\s+are)\s+done|(?<!only\s)(?<!than\s)once\s*$|"
    r"after\s+(?:this|that)|afterwards|mid-\w+|"
    r"(?:that|this|it)(?:'s|\s+is)\s+(?:next|later)|next\s+(?:sprint|week|time))\b",
    re.I,
)
# A bug report or narration in progress: "X is throwing a 500", "the build keeps failing".
_IN_PROGRESS = re.compile(
    r"\b(?:is|are|was|were|keeps|kept|been)\s+"
    r"(?:(?!(?:every|any|some|no)?thing\b|string\b)\w+ing|broken|slow|stuck|missing)\b",
    re.I,
)
# Future talk and hedges: "we can always add caching later", "we might not always need".
_FUTURE_HEDGE = re.compile(
    r"^(?:we|you|i|it|this|that|they)\s+(?:can|could|might|may|would|will|'ll)\b"
    r"|\b(?:later|eventually|someday|some\s+day|perhaps|maybe|probably)\b",
    re.I,
)


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

_WORD = re.compile(r"[A-Za-z0-9\ue000-\ue001][A-Za-z0-9_'.*/+#\-\ue000\ue001]*")


def _has_content(text: str) -> bool:
    """True when ``text`` holds at least one word that is not a signal or function word."""
    for index, token in enumerate(_WORD.findall(text)):
        t = token.lower().strip(".'-")
        if not t:
            continue
        if "\ue000" in t or (t not in FILLER and len(t) > 1):
            return True
        if index > 0 and token[:1].isupper() and t != "i" and not t.startswith("i'"):
            return True  # a name that looks like a function word: "never use Any"
    return False


def _first_word(text: str) -> str:
    match = _WORD.search(text)
    return match.group(0).lower() if match else ""


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


_SHOUTED = re.compile(r"\b(ALWAYS|NEVER|DON'T|DO NOT|NOT|STOP|AVOID|PLEASE)\b")


_TIME_PHRASE = re.compile(
    r"[,\s]*\b(?:from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?|"
    r"henceforth)\b[,]*",
    re.I,
)


def _clean_fact(text: str) -> str:
    text = _TIME_PHRASE.sub(" ", text)
    text = _SHOUTED.sub(lambda m: m.group(1).lower(), text)
    text = _TRAILING_POLITE.sub("", text)
    text = re.sub(r"\s+", " ", text).strip()
    text = text.strip(" ,;:\u2014\u2013-")
    text = re.sub(r"[.!?,;:\s]+$", "", text)
    text = text.strip("\"'")
    return _capitalise(text)


# --------------------------------------------------------------------------------------------
# Patterns
# --------------------------------------------------------------------------------------------

_Found = tuple[str, float, str]  # (fact, confidence, kind)
_MAX_CLAUSE = 600  # characters: a stated rule is a sentence, not a page
_MAX_KEYWORDS = 4  # always/never occurrences examined per clause

_FROM_NOW_ON = re.compile(
    r"(?:^|,\s*|\s)(?:from\s+now\s+on|going\s+forward|moving\s+forward|from\s+here\s+on(?:\s+out)?"
    r"|henceforth|in\s+(?:the\s+)?future)\b\s*,?\s*",
    re.I,
)
_REMEMBER = re.compile(
    r"^(?:remember|keep\s+in\s+mind|bear\s+in\s+mind|don'?t\s+forget|do\s+not\s+forget)"
    r"(?:\s+that\b|(?:\s+this)?\s*[:,\u2014\u2013-])\s*(?P<fact>.+)$",
    re.I,
)
_REMEMBER_TRAILING = re.compile(
    r"^(?P<fact>.+?)[,\s\u2014\u2013-]+(?:please\s+)?(?:remember|keep\s+in\s+mind|"
    r"don'?t\s+forget)\s+(?:that|this)\s*[.!]*$",
    re.I,
)
_REMEMBER_TO = re.compile(
    r"^(?:remember|don'?t\s+forget|do\s+not\s+forget)\s+to\s+(?P<x>.+)$", re.I
)
_FINITE = re.compile(
    r"\b(?:is|are|isn't|aren't|'s|'re|must|should|shall|needs?|has|have|can|cannot|can't|"
    r"doesn't|don't|won't|will|only|always|never|lives?|runs?|uses?|goes|go|belongs?|sits?|"
    r"points?|means?|requires?|depends?|expects?|contains?|holds?|deploys?|ships?|happens?|"
    r"works?|takes?|stays?|comes?|lands?|breaks?|fails?|stores?|keeps?|calls?)\b",
    re.I,
)
# "remember that bug we fixed": a bare noun (phrase) followed by a relative clause, or an event.
_RELATIVE_NOUN = re.compile(
    r"^(?:[a-z][\w-]*\s+){1,2}(?:we|you|i|they|he|she|that\s+we|that\s+you)\s+\w+"
    r"|^(?:time|day|night|week|month|meeting|conversation|call|chat|talk|discussion|incident|"
    r"outage|one|thing|issue|bug|error|problem)\b",
)
_PAST_VERB = re.compile(
    r"^(?:we|you|i|they|he|she|it|the\s+[\w-]+|our\s+[\w-]+)\s+(?:\w+ed|"
    + "|".join(sorted(PAST_FORMS))
    + r")\b",
    re.I,
)

_PREFER = re.compile(
    r"^(?:i|we|the\s+team|our\s+team|my\s+team|everyone|the\s+user)"
    r"(?:'d|\s+would|\s+really|\s+generally|\s+usually|\s+strongly|\s+also|\s+do|\s+kind\s+of|"
    r"\s+definitely|\s+much|\s+all|\s+always|\s+still)*\s+"
    r"(?P<verb>prefers?|rather)\b\s*:?\s*(?P<rest>.*)$",
    re.I,
)
_PREFER_IMPERATIVE = re.compile(r"^(?:always\s+)?prefer\s+(?P<rest>.+)$", re.I)
_PREFERENCE_IS = re.compile(
    r"^(?:my|our)\s+preference\s+(?:is\s+(?:to\s+)?|:\s*)(?P<rest>.+)$", re.I
)
_PREFERRED = re.compile(r"^(?P<x>.+?)\s+(?:is|are)\s+(?:always\s+)?preferred\b(?P<rest>.*)$", re.I)

_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\b", re.I)
_INSTEAD_END = re.compile(r"\binstead\s*$", re.I)
_CORRECTION_NOT_FIRST = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:not|don'?t\s+use|do\s+not\s+use|never\s+use|stop\s+using)\s+"
    r"(?P<x>.+?)\s*(?:[,;:\u2014\u2013]|--|\s-\s)\s*(?:please\s+|just\s+|instead\s+)*"
    r"(?P<verb>use|try|go\s+with|switch\s+to|prefer|pick|choose|we\s+use)"
    r"\s+(?P<y>.+?)(?:\s+instead)?$",
    re.I,
)
_CORRECTION_NOT_LAST = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:(?:we|i)\s+(?:only\s+|always\s+)?)?(?P<verb>use|try|go\s+with|switch\s+to|pick|choose)\s+(?P<y>.+?)"
    r"\s*(?:,|;|\u2014|\u2013|--|\s-)?\s+(?:and\s+|but\s+)?not\s+(?P<x>[^,;]+?)"
    r"(?:\s*,\s*(?P<tail>(?:for|in|on|when|with|across|throughout)\b[^,;]*))?$",
    re.I,
)
# "not jest, vitest": a bare correction between two short names.
_CORRECTION_BARE = re.compile(
    r"^not\s+(?P<x>[^,;\s]+(?:\s+[^,;\s]+){0,2})\s*(?:[,;:\u2014\u2013]|--|\s-)\s*(?:but\s+)?"
    r"(?:use\s+)?(?P<y>[^,;\s]+(?:\s+[^,;\s]+){0,2})$",
    re.I,
)
_BARE_REJECT = re.compile(
    r"\b(?:the|a|an|this|that|these|those|my|our|your|it|me|you|i|we|now|yet|really|sure|"
    r"quite|exactly|necessarily|bad|good|great|thanks|thank|please|sorry|ok|okay|much|only|"
    r"all|everything|everyone|today|here|there|again|anymore|really|so|too|very)\b",
    re.I,
)

_NEGATIVE_START = re.compile(
    r"^(?:(?P<we>we|you\s+all)\s+)?(?P<neg>don'?t|do\s+not|dont)\s+(?:ever\s+)?(?P<rest>.+)$",
    re.I,
)
_I_DONT_WANT = re.compile(
    r"^i\s+(?:really\s+)?(?:don'?t|do\s+not)\s+want\s+(?:you\s+to\s+|to\s+see\s+|any\s+)"
    r"(?P<rest>.+)$",
    re.I,
)
_LETS_NOT = re.compile(r"^(?:let'?s|let\s+us)\s+not\s+(?P<rest>.+)$", re.I)
_MODAL_NEGATIVE = re.compile(
    r"^(?P<subject>.+?)\s+(?:should\s+not|shouldn't|must\s+not|mustn't|shall\s+not|"
    r"may\s+not|are\s+not\s+to|is\s+not\s+to|are\s+not\s+allowed\s+to|is\s+not\s+allowed\s+to)"
    r"\s+(?:ever\s+)?(?P<rest>.+)$",
    re.I,
)
_STOP = re.compile(r"^(?:stop|quit)\s+(?P<ger>\w+ing)\b(?P<rest>.*)$", re.I)
_AVOID = re.compile(r"^(?:always\s+)?avoid\s+(?P<rest>.+)$", re.I)
_DONT_EXCEPTIONS = re.compile(
    r"^(?:(?:worry|bother)(?!\s+(?:about|with)\s+(?!it\b|that\b|this\b|them\b)\w)|mind|panic|apologi[sz]e|be\s+sorry|sweat|stress|know|think|care|forget|"
    r"remember|understand|see|get\s+it|get\s+why|like\s+(?:it|this|that)|need\s+(?:it|that)|"
    r"have|do\s+(?:it|that|this)|touch\s+(?:it|that|this))\b",
    re.I,
)

_SUBJECT_WE = re.compile(
    r"^(?:we|we\s+all|all\s+of\s+us|the\s+team|our\s+team|everyone|everybody)"
    r"(?:\s+(?:should|must|shall|will|'ll|need\s+to|have\s+to|ought\s+to|are\s+to|want\s+to|"
    r"always\s+want\s+to|try\s+to|can))?$",
    re.I,
)
_SUBJECT_YOU_MODAL = re.compile(
    r"^(?:you|y'all|you\s+all|you\s+guys)\s+(?:should|must|shall|will|'ll|need\s+to|have\s+to|"
    r"ought\s+to|are\s+to|want\s+to)$",
    re.I,
)
_MODAL_END = re.compile(
    r"\s(?:should|must|shall|needs?\s+to|has\s+to|have\s+to|ought\s+to|is\s+to|are\s+to|"
    r"will\s+have\s+to)$",
    re.I,
)
_PRONOUN_SUBJECT = re.compile(
    r"^(?:it|this|that|they|he|she|i|things|stuff|there|which|what|someone|somebody|nobody)\b",
    re.I,
)
_I_PREFERENCE = re.compile(r"^i(?:'d|\s+would)?$", re.I)


def _segment_prefix(clause: str, position: int) -> tuple[int, str]:
    """Start and text of what lies between the last comma/colon/dash and ``position``."""
    head = clause[:position]
    cut = max(head.rfind(","), head.rfind(":"), head.rfind("\u2014"), head.rfind("\u2013"))
    start = cut + 1
    while start < position and head[start].isspace():
        start += 1
    return start, head[start:].strip()


_ENSURE = re.compile(r"^(?:make\s+sure|ensure|be\s+sure|check\s+that|see\s+to\s+it)\b", re.I)
_TRAILING_ALWAYS = re.compile(r"^(?P<head>.+?)[,\s]+always\s*[.!]*$", re.I)


def _verb_is_narration_after_subject(word: str) -> bool:
    """Past forms only: after a subject a third-person ``-s`` is the normal present."""
    w = word.lower()
    return w in PAST_FORMS or (w.endswith("ed") and w not in ED_BASE_VERBS)


def _always_never(clause: str) -> _Found | None:
    """``always``/``never`` used as an instruction (imperative, ``we``, or subject + modal)."""
    positions = sorted(_keyword_positions(clause, "always") + _keyword_positions(clause, "never"))
    for pos in positions[:_MAX_KEYWORDS]:
        keyword = clause[pos : pos + 6].lower().strip()
        after = clause[pos + len(keyword) :].lstrip(" ,")
        after = re.sub(r"^(?:ever|,)\s*", "", after, flags=re.I)
        next_word = _first_word(after)
        if not next_word or not _has_content(after):
            continue
        start, prefix = _segment_prefix(clause, pos)
        if _ENSURE.match(prefix) and not _verb_is_narration_after_subject(next_word):
            return clause, CONFIDENCE_ALWAYS, "rule"
        if not prefix:
            # Imperative: "Always run the tests", "For the UI, never use inline styles".
            if next_word in NOT_IMPERATIVE or _verb_is_narration(next_word):
                continue
            return clause, CONFIDENCE_ALWAYS, "rule"
        if _SUBJECT_WE.match(prefix) or _SUBJECT_YOU_MODAL.match(prefix):
            if next_word in STATIVE_VERBS or _verb_is_narration(next_word):
                continue
            return clause[:start] + clause[pos:], CONFIDENCE_ALWAYS, "rule"
        if _I_PREFERENCE.match(prefix):
            if next_word.rstrip("s") in PREFERENCE_VERBS:
                return clause, CONFIDENCE_ALWAYS, "preference"
            continue
        if _MODAL_END.search(" " + prefix) and not _PRONOUN_SUBJECT.match(prefix):
            # "Tests should always pass before merge", "Secrets must never be committed".
            return clause, CONFIDENCE_ALWAYS, "rule"
    trailing = _TRAILING_ALWAYS.match(clause)
    if trailing and _starts_like_instruction(trailing.group("head")):
        head = trailing.group("head")
        if _has_content(head) and not re.match(r"^(?:we|you)\b", head, re.I):
            return "Always " + head[0].lower() + head[1:], CONFIDENCE_ALWAYS, "rule"
    return None


_SPECULATION = re.compile(
    r"\b(?:might|may|could|would|maybe|perhaps|probably|possibly|hopefully)\b", re.I
)


def _from_now_on(clause: str) -> _Found | None:
    match = _FROM_NOW_ON.search(clause)
    if not match:
        return None
    rest = (clause[: match.start()] + " " + clause[match.end() :]).strip(" ,")
    rest = _strip_leadins(rest)
    rest = re.sub(r"^(?:(?:we|you)\s+(?:will|'ll|should|must|shall)\s+)", "", rest, flags=re.I)
    if not rest or _is_question(rest) or not _has_content(rest) or _SPECULATION.search(rest):
        return None
    subject_i = re.match(
        r"^i(?:'ll|\s+will|'d|\s+would|\s+want|\s+need|\s+prefer)?\s+(\w+)", rest, re.I
    )
    if subject_i:
        verb = subject_i.group(1).lower()
        if verb in STATIVE_VERBS or _verb_is_narration_after_subject(verb):
            return None
        return rest, CONFIDENCE_ALWAYS, "preference"
    if _PRONOUN_SUBJECT.match(rest):
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
    match = _REMEMBER.match(clause) or _REMEMBER_TRAILING.match(clause)
    if match:
        fact = match.group("fact").strip()
        if _is_question(fact) or not _has_content(fact):
            return None
        if not _FINITE.search(fact) and not _PAST_VERB.search(fact):
            return None
        if _RELATIVE_NOUN.match(fact):
            return None
        inner = _always_never(fact) or _negative(fact)
        return (inner[0] if inner else fact), CONFIDENCE_ALWAYS, "fact"
    match = _REMEMBER_TO.match(clause)
    if match:
        x = match.group("x").strip()
        if not _has_content(x) or _ONE_OFF.search(x):
            return None
        inner = _always_never(x)
        return (inner[0] if inner else x), CONFIDENCE_ALWAYS, "rule"
    return None


_ADVERBIAL = re.compile(
    r"^(?P<adv>(?:for|in|on|when|with|inside|within)\s[^,]{1,60}),\s*(?P<rest>.+)$", re.I
)


def _prefer(clause: str, *, nested: bool = False) -> _Found | None:
    adverbial = _ADVERBIAL.match(clause)
    if adverbial and not nested:
        inner = _prefer(adverbial.group("rest"), nested=True)
        if inner is not None:
            fact = inner[0]
            fact = fact[0].lower() + fact[1:] if fact.startswith("Prefers ") else fact
            return f"{adverbial.group('adv')}, {fact}", inner[1], inner[2]
    for pattern in (_PREFER, _PREFERENCE_IS):
        match = pattern.match(clause)
        if not match:
            continue
        rest = match.group("rest").strip()
        if pattern is _PREFER and match.group("verb").lower() == "rather":
            rest = re.sub(r"^(?:not\s+)", "not to ", rest, flags=re.I)
            if re.match(r"^(?:you|we|they|it)\b", rest, re.I):
                rest = "that " + rest
            elif not rest.lower().startswith(("to ", "not to ", "that ")):
                rest = "to " + rest
        rest = re.sub(r"^(?:it\s+)?(?:if|when)\s+you\b", "that you", rest, flags=re.I)
        if not _has_content(rest):
            return None
        return "Prefers " + rest, CONFIDENCE_RULE, "preference"
    match = _PREFER_IMPERATIVE.match(clause)
    if match and _has_content(match.group("rest")):
        return clause, CONFIDENCE_RULE, "preference"
    match = _PREFERRED.match(clause)
    if match and _has_content(match.group("x")) and not _PRONOUN_SUBJECT.match(clause):
        return clause, CONFIDENCE_RULE, "preference"
    return None


def _starts_like_instruction(clause: str) -> bool:
    first = _first_word(clause)
    if not first or first in NOT_IMPERATIVE:
        return False
    return not _verb_is_narration(first)


def _trim(text: str) -> str:
    return text.strip().strip(".,;:!\u2014\u2013- ").strip()


_WE_USE = re.compile(
    r"^(?:we|you)\s+(?:should\s+|must\s+|will\s+|need\s+to\s+|have\s+to\s+)?", re.I
)


def _instead(clause: str) -> _Found | None:
    match = _CORRECTION_NOT_FIRST.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        if _has_content(x) and _has_content(y):
            return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"
    match = _CORRECTION_NOT_LAST.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        tail = f" {_trim(match.group('tail'))}" if match.group("tail") else ""
        if _has_content(x) and _has_content(y):
            return f"Use {y} instead of {x}{tail}", CONFIDENCE_RULE, "choice"
    match = _CORRECTION_BARE.match(clause)
    if match:
        x, y = _trim(match.group("x")), _trim(match.group("y"))
        if _has_content(x) and _has_content(y) and not _BARE_REJECT.search(x + " " + y):
            return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"
    if _INSTEAD.search(clause) or _INSTEAD_END.search(clause):
        body = clause
        if re.match(r"^(?:we|you)\s", body, re.I):
            body = _WE_USE.sub("", body, count=1)
            if _verb_is_narration(_first_word(body)):
                return None
        elif not _starts_like_instruction(body):
            return None
        if _has_content(_INSTEAD.split(body)[0]) and _has_content(body):
            return body, CONFIDENCE_RULE, "choice"
    return None


def _negative(clause: str) -> _Found | None:
    match = _I_DONT_WANT.match(clause) or _LETS_NOT.match(clause)
    if match:
        rest = match.group("rest").strip()
        if _has_content(rest) and not _DONT_EXCEPTIONS.match(rest):
            return "Don't " + rest, CONFIDENCE_RULE, "rule"
        return None
    match = _NEGATIVE_START.match(clause)
    if match:
        rest = match.group("rest").strip()
        if _DONT_EXCEPTIONS.match(rest) or not _has_content(rest):
            return None
        if match.group("we"):
            first = _first_word(rest)
            if first in STATIVE_VERBS or first in NOT_IMPERATIVE or _verb_is_narration(first):
                return None
            return "Don't " + rest, CONFIDENCE_RULE, "rule"
        return clause, CONFIDENCE_RULE, "rule"
    match = _STOP.match(clause)
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
    match = _AVOID.match(clause)
    if match and _has_content(match.group("rest")):
        return clause, CONFIDENCE_RULE, "rule"
    match = _MODAL_NEGATIVE.match(clause)
    if match and _has_content(match.group("rest")):
        subject = match.group("subject").strip()
        if _PRONOUN_SUBJECT.match(subject) or _is_question(clause):
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
        inner = _NEGATIVE_START.match(tail)
        head = clause[: sep.start()]
        if inner and not inner.group("we") and not _PRONOUN_SUBJECT.match(head):
            rest = inner.group("rest")
            if _has_content(rest) and not _DONT_EXCEPTIONS.match(rest):
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


# ---- Context inference (0.5): project facts and practices stated without a signal word ----

_NAME = (
    r"(?!(?i:this|that|it|there|here|these|those|they|he|she|we|you|i|which|what|who|the|a|an)\b)"
    r"(?:\ue000\d+\ue001|[A-Z][\w.+#/-]*|[a-z][\w.+#-]*[A-Z0-9.][\w.+#-]*|\d[\w.+-]*)"
)
_PROJECT_NOUN = (
    r"(?:project|repo|repository|codebase|app|application|library|package|service|monorepo|team|"
    r"extension|code|site|api|backend|frontend|server|cli|tool)"
)
_CONTEXT_FACTS = (
    # "We use Linear as a ticket tracking system", "Our team follows trunk-based development".
    re.compile(
        r"^(?:we|our\s+team|the\s+team)\s+(?:only\s+|mainly\s+|mostly\s+)?"
        r"(?:use|follow|rely\s+on|deploy\s+(?:to|on|with)|host\s+(?:on|with)|target|"
        r"support|ship\s+(?:to|with|on)|store|build\s+with|write\s+in|track|manage)\s+"
        r"(?!(?:it|this|that|them|these|those|something|anything)\b)\S",
        re.I,
    ),
    # "This project uses Vitest as its testing framework", "The app is built with Next.js".
    re.compile(
        r"^(?:this|the|our)\s+(?:[\w-]+\s+)?" + _PROJECT_NOUN + r"\s+"
        r"(?:uses|is\s+(?:built|written|deployed|hosted|tested|managed)\s+(?:with|in|on|to|by)|"
        r"runs\s+on|relies\s+on|targets|requires|supports|follows|depends\s+on)\s+"
        r"(?!(?:too|a\s+lot|lots|more|less|much|many|so)\b)\S",
        re.I,
    ),
    # "SQLite is the default backend", "Bun is the package manager and runtime".
    re.compile(r"^" + _NAME + r"(?:\s+" + _NAME + r")?\s+(?:is|are)\s+(?:the|our)\s+\S"),
    # "The main branch is called main", "The default model is Sonnet".
    re.compile(
        r"^the\s+(?:[\w-]+\s+){0,4}?(?:[\w-]+)\s+(?:for\s+this\s+\w+\s+)?"
        r"(?:is|are)\s+(?:called|named|set\s+to)\s+\S"
        r"|^the\s+(?:default|main|primary|preferred|standard)\s+(?:[\w-]+\s+){1,3}(?:is|are)\s+\S",
        re.I,
    ),
    # "Tests live in tests/", "Tests run against an embedded PostgreSQL engine".
    re.compile(
        r"^(?!(?:it|this|that|they|there|we|you|i|he|she)\b)(?:[\w\ue000\ue001./*-]+\s+){0,3}?"
        r"(?:live|lives|run|runs|are\s+(?:stored|located|kept|defined|generated)|"
        r"is\s+(?:stored|located|kept|defined|generated)|belong|belongs|go|goes)\s+"
        r"(?:in|under|inside|against|on|with|at|into)\s+\S",
        re.I,
    ),
    # "Jotai for atomic state management": a name and its role.
    re.compile(r"^" + _NAME + r"(?:\s+" + _NAME + r")?\s+for\s+[a-z][\w -]{3,60}$"),
)
# "Branch names must start with claude/", "Every pull request MUST have 100% coverage".
_POSITIVE_MODAL = re.compile(
    r"^(?P<subject>(?:[\w\ue000\ue001./*'-]+\s+){1,4}?)"
    r"(?:must|should|shall|need\s+to|needs\s+to|have\s+to|has\s+to|are\s+to|is\s+to)\s+"
    r"(?!not\b|never\b|always\b)(?P<rest>\w.*)$",
    re.I,
)
_NOT_SUBJECT = re.compile(
    r"\b(?:i|you|we|it|they|he|she|this|that|there|what|which|who|one|someone|says?|said)\b", re.I
)
_GENERAL_CUE = re.compile(
    r"\b(?:all|every|each|any|whenever|when|unless|before|after|ideally|consistently|throughout|"
    r"across|only|otherwise)\b",
    re.I,
)
_SPECIFIC_OBJECT = re.compile(
    r"^(?:the|this|that|these|those|my|your|a|an|it|them|whatever|whichever|something|"
    r"anything|everything)\b",
    re.I,
)
_ADVERBIAL_LEAD = re.compile(
    r"^(?P<adv>(?:after|before|when|whenever|for|in|on|once|while)\b[^,]{2,80}),\s*(?P<rest>.+)$",
    re.I,
)
_PATHLIKE = re.compile(r"(?:^|\s)(?:[\w.-]+/)+[\w.-]+\.\w+\b")


def _practice(clause: str) -> bool:
    """A durable imperative without a signal word: ``Use American English spelling``."""
    body = re.sub(r"^only\s+", "", clause, flags=re.I)
    only = body is not clause and body != clause
    verb = _first_word(body)
    if verb not in PRACTICE_VERBS and not (only and verb not in NOT_IMPERATIVE):
        return False
    rest = body[len(verb) :].strip()
    if not _has_content(rest) or _PATHLIKE.search(rest):
        return False
    if any(w in TASK_VERBS for w in re.findall(r"\band\s+(\w+)", rest.lower())):
        return False  # "run make verify and fix all errors": a task
    content = [w for w in _WORD.findall(rest) if w.lower() not in FILLER]
    if verb not in BARE_OBJECT_VERBS and len(content) < 2 and not only:
        return False
    return only or bool(_GENERAL_CUE.search(rest)) or not _SPECIFIC_OBJECT.match(rest)


def _context_fact(clause: str) -> _Found | None:
    """A plain statement of project fact or practice: the spec's context inference (0.5)."""
    if _IN_PROGRESS.search(clause) or _FUTURE_HEDGE.search(clause):
        return None
    for pattern in _CONTEXT_FACTS:
        if pattern.match(clause) and _has_content(clause):
            return clause, CONFIDENCE_CONTEXT, "fact"
    modal = _POSITIVE_MODAL.match(clause)
    if (
        modal
        and not _NOT_SUBJECT.search(modal.group("subject"))
        and _first_word(clause) not in TASK_VERBS
        and _has_content(modal.group("rest"))
    ):
        return clause, CONFIDENCE_CONTEXT, "rule"
    lead = _ADVERBIAL_LEAD.match(clause)
    if _practice(lead.group("rest") if lead else clause):
        return clause, CONFIDENCE_CONTEXT, "rule"
    return None


_LABEL = re.compile(
    r"^(?P<label>[A-Za-z][\w.&/+#()-]*(?:\s+[\w.&/+#()-]+){0,3}?)\s*:\s+(?P<rest>\S.*)$"
)
_BARE_VALUES = re.compile(
    r"^(?:\ue000\d+\ue001|[\w.+#/@-]+)(?:\s*\([^()]{1,40}\))?"
    r"(?:\s*(?:,|and|or|/|\+)\s*(?:\ue000\d+\ue001|[\w.+#/@-]+)(?:\s*\([^()]{1,40}\))?){0,6}$",
    re.I,
)
# An object pronoun with nothing it could stand for in the fact: "Never leave them in".
_DANGLING_PRONOUN = re.compile(
    r"^(?:(?:never|always|don't|do\s+not|please|just)\s+)*(?:[\w'-]+\s+){1,2}?"
    r"(?:(?:them|it|these|those)(?=\s*$|\s+(?:in|out|up|on|off|to|with|at|for|again|anymore|"
    r"alone|unless|when|if|as|like)\b)|(?:this|that)\s*$)"
    r"|\b(?:these|those|both|the\s+above)\s+(?:\w+\s+)?(?:things|ones|items|points|steps)\b"
    r"|\b(?:of|with|to|for|about|on)\s+(?:this|that|it|them)\s*$",
    re.I,
)


_OBJECT = re.compile(
    r"^(?:(?:never|always|don'?t|do\s+not|please|just|only|we|you|should|must)\s+)*"
    r"[\w'-]+\s+(?P<object>(?:(?:the|all|any|our|your)\s+)?[\w\ue000\ue001.-]+"
    r"(?:\s+(?!(?:by|in|on|with|for|to|at|from|into|unless|when|if|and|or)\b)"
    r"[\w\ue000\ue001.-]+)?)",
    re.I,
)


def _resolve_pronoun(fact: str, previous: str) -> str | None:
    """Put the previous rule's object in place of ``them``/``it`` ("always generate them with
    alembic" after "never edit migrations by hand"), or ``None`` when there is none."""
    match = _OBJECT.match(_strip_leadins(previous))
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


# "Linting: ruff, not flake8": under a label, a bare choice is a correction.
_LABELLED_CHOICE = re.compile(
    r"^(?P<y>[^,;\s]+(?:\s+[^,;\s]+){0,2})\s*(?:,|;|\s-)?\s+(?:but\s+)?not\s+"
    r"(?P<x>[^,;\s]+(?:\s+[^,;\s]+){0,2})$",
    re.I,
)


def _labelled_choice(rest: str) -> _Found | None:
    match = _LABELLED_CHOICE.match(rest)
    if not match:
        return None
    x, y = _trim(match.group("x")), _trim(match.group("y"))
    if not _has_content(x) or not _has_content(y) or _BARE_REJECT.search(x + " " + y):
        return None
    return f"Use {y} instead of {x}", CONFIDENCE_RULE, "choice"


def _with_label(label: str, fact: str) -> str:
    if fact[:1].isupper() and not fact.split()[0].isupper():
        fact = fact[0].lower() + fact[1:]
    return f"{label}: {fact}"


def _match_rule(clause: str, *, allow_time: bool = False) -> _Found | None:
    """The first pattern that turns ``clause`` into a fact, or ``None``."""
    if len(clause) > _MAX_CLAUSE:
        return None  # a paste (log, code, prose), not a stated rule
    clause = _NEVER_MIND.sub("", clause).strip()
    clause = _strip_leadins(clause)
    if not clause or _is_question(clause):
        return None
    clause = clause.rstrip(" .!")
    found = _match_plain(clause, allow_time=allow_time)
    label = _LABEL.match(clause)
    if found is None and label:
        # "Async testing: use anyio, not asyncio": the label stays in the fact as its topic.
        if _first_word(label.group("label")) in OUTPUT_LABELS:
            return None  # "Error: tests must pass" is output pasted in, not a rule
        rest = _strip_leadins(label.group("rest"))
        inner = (
            _match_plain(rest, allow_time=allow_time)
            or _labelled_choice(rest)
            or _context_fact(rest)
        )
        if inner is not None:
            found = (_with_label(label.group("label"), inner[0]), inner[1], inner[2])
        elif _BARE_VALUES.match(rest) and _has_content(rest):
            found = clause, CONFIDENCE_CONTEXT, "fact"  # "Package manager: pnpm"
    if found is None and not label:
        found = _context_fact(clause)
    if found is None:
        return None
    if found[1] < CONFIDENCE_ALWAYS and _ONE_OFF.search(clause):
        return None  # "Don't merge yet", "use the mock for now": a one-off request
    if _FUTURE_HEDGE.match(clause) or _IN_PROGRESS.search(clause):
        return None  # "we can always add caching later", "X is throwing a 500 instead of a 404"
    return found


def _is_task_request(clause: str) -> bool:
    """A request for work now ("Fix the TypeScript error …"): it scopes the message's rules."""
    clause = _strip_leadins(clause.strip())
    return _first_word(clause) in TASK_VERBS and _match_rule(clause) is None


# --------------------------------------------------------------------------------------------
# Categories
# --------------------------------------------------------------------------------------------

# Keyword groups, one regex alternative per word ("_" stands for a space).
_CATEGORY_WORDS: dict[str, str] = {
    "user_preference": r"""
        prefer\w* like[sd]? love[sd]? hate[sd]? want me my i myself ask(?:ing)? tell explain\w*
        explanations? answers? repl(?:y|ies) respon(?:d|ses?) summar\w+ verbose terse concise
        brief emojis? tone chatty wordy english commit_messages? messages? confirm\w* permission
        editor vim emacs vs_?code dark_mode theme fonts? workflow pair(?:ing)? imperative_mood
        sonnet opus haiku models?
    """,
    "architecture_decision": r"""
        databases? db postgres\w* mysql sqlite mongo\w* redis orm prisma sqlalchemy drizzle
        supabase firebase auth\w* jwt oauth\w* sessions? tokens? cookies? apis? rest(?:ful)?
        graphql grpc endpoints? services? microservices? backend frontend framework\w*
        librar(?:y|ies) react vue svelte angular next(?:\.?js)? express fastapi django flask
        rails fetch axios http websockets? queues? kafka rabbitmq cach(?:e|ing) redux zustand
        state_management architecture monolith layers? schemas? storage s3 lambdas? serverless
        typescript javascript python golang rust tailwind sdks? dependenc(?:y|ies) packages?
        events? pub/?sub uuids? ids? rate_limit\w* middleware clients? server_components? ssr
        stripe protobuf json yaml xml csv
    """,
    "quality_rule": r"""
        tests? testing tested unit integration e2e coverage tdd specs? mocks? mocking fixtures?
        lint\w* eslint ruff flake8 pylint prettier black format\w* types? typed typing
        type_hints? annotations? mypy pyright strict any null undefined none optional errors?
        exceptions? handl\w+ try catch comments? docstrings? jsdoc naming names? variables?
        functions? methods? class(?:es)? exports? imports? indent\w* tabs spaces line_length
        semicolons? quotes refactor\w* dead_code duplicat\w+ magic_numbers? debug\w* print\w*
        console\.log logs? logging loggers? asserts? reviews? secrets? var let const eval
        globals? \.env credentials? passwords? api_keys? hard-?cod\w+ validat\w+ sanitiz\w+
        security todos? fixme warnings? readab\w+ complexity code_style style_guide pep_?8
        relations? properties nested edge_cases? assertions? snapshots? flaky regression
        tests?_files? \*\.\w+
    """,
    "project_context": r"""
        branch(?:es)? main master develop trunk ci cd ci/cd pipelines? github(?:_actions)?
        gitlab circleci jenkins deploy\w* releas\w+ staging production prod environments?
        servers? host(?:ed|ing)? vercel netlify heroku aws gcp azure docker\w* containers?
        kubernetes k8s clusters? repo repository monorepo folders? director(?:y|ies) dir paths?
        located lives? stored src package\.json makefile scripts? push\w* merg\w+ pr prs
        pull_requests? rebas\w+ squash\w* tags? version node_\d+ python_3\.\d+ ports? urls?
        domains? localhost changelog readme workspaces? pnpm npm yarn bun uv poetry pip called
        named on-?call jira tickets? sprint fridays? mondays? weekends? migrations?
    """,
}
_CATEGORY_PATTERNS: dict[str, re.Pattern[str]] = {
    cat: re.compile(
        r"(?<![\w.])(?:" + "|".join(w.replace("_", r"\s+") for w in words.split()) + r")(?![\w])",
        re.I,
    )
    for cat, words in _CATEGORY_WORDS.items()
}
_KIND_DEFAULT = {
    "preference": "user_preference",
    "choice": "architecture_decision",
    "fact": "project_context",
    "rule": "quality_rule",
}


def _categorise(fact: str, kind: str) -> str:
    if kind == "preference":
        return "user_preference"
    scores = {cat: len(p.findall(fact)) for cat, p in _CATEGORY_PATTERNS.items()}
    default = _KIND_DEFAULT[kind]
    best = max(scores.values())
    if best == 0:
        return default
    leaders = [cat for cat, score in scores.items() if score == best]
    if default in leaders:
        return default
    for cat in ("project_context", "user_preference", "quality_rule", "architecture_decision"):
        if cat in leaders:
            return cat
    return default  # pragma: no cover - leaders is never empty


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


_USE_HEAD = re.compile(
    r"^(?:please\s+|just\s+|we\s+|we\s+only\s+)?(?:use|try|go\s+with|switch\s+to)\s", re.I
)
_NOT_HEAD = re.compile(
    r"^(?:no+\b[,.!]*\s*)?(?:not|don'?t\s+use|do\s+not\s+use|never\s+use|stop\s+using)\s", re.I
)
_BARE_NOT = re.compile(r"^not\s+\S+(?:\s+\S+){0,2}$", re.I)


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
                _USE_HEAD.match(clause)
                and _NOT_HEAD.match(previous)
                and not _INSTEAD.search(clause)
                and not _INSTEAD.search(previous)
            ):
                out[-1] = _join(out[-1], clause)
                continue
            if (
                _USE_HEAD.match(previous)
                and _BARE_NOT.match(clause.rstrip(" .!"))
                and not _INSTEAD.search(previous)
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
    clauses = [
        clause
        for sentence in _sentences(masked)
        if not sentence.rstrip().endswith("?")
        for clause in _clauses(sentence)
    ]
    merged = _merge_corrections(clauses)
    # A message that asks for work now scopes its other instructions to that work.
    task = any(_is_task_request(clause) for clause in merged)
    previous = ""
    for clause in merged:
        match = _match_rule(clause)
        if match is None:
            continue
        fact_text, confidence, kind = match
        if task and confidence < CONFIDENCE_ALWAYS:
            continue  # "implement X; do not change the storage format": part of the task
        if _DANGLING_PRONOUN.search(fact_text):
            fact_text = _resolve_pronoun(fact_text, previous) or ""
        previous = clause
        fact = _unmask(_clean_fact(fact_text), kept).strip()
        key = fact.lower()
        if not fact or key in seen or _DANGLING_PRONOUN.search(fact):
            continue
        seen.add(key)
        found.append(DetectedSignal(fact, _categorise(fact, kind), confidence))
    return found
