"""One home for the vocabularies and the normalisation that signal detection, contradiction
checks and relevance ranking share.

Word lists (each written once; the modules that need a variant compose it from these):

* ``STOP_WORDS``: English function words; they carry no topic.
* ``NEGATIONS``: words that turn a rule round (``never``, ``not``, ``don't``, ``avoid`` …). They
  set a rule's polarity and are never topic words.
* ``RULE_WORDS``: the words a rule is stated with (``always``, ``must``, ``use``, ``prefer``,
  ``please``, ``project`` …): never the topic of a rule.
* ``TASK_WORDS``: words nearly every task description contains (``fix``, ``add``, ``code`` …);
  sharing only these does not make an entry relevant to a task.
* ``FILLER``: what signal detection does not count as content beside a trigger word.

``normalise(text)`` is the one normalisation step used before judging text, by detection and by
the contradiction rules alike. It keeps the text readable (backticks around code stay; only
marks that carry no meaning go):

* typographic quotes and apostrophes become ASCII (U+2019 -> ``'``, U+201C -> ``"``), en and em
  dashes become a spaced hyphen (``a—b`` -> ``a - b``), non-breaking and odd spaces a space;
* markdown links keep their text (``[uv](https://…)`` -> ``uv``), emphasis marks go
  (``**Never**``, ``__x__``, ``*must*``, ``_must_`` -> the word) — but never inside code spans,
  and never a ``*`` that is part of a pattern (``*.test.ts``) or a ``_`` inside an identifier;
* a list bullet, checkbox or decorative symbol (``-``, ``*``, ``•``, ``1.``, ``[ ]``, ``✅``) at
  the start of a line goes; so does a heading's ``#``;
* a hard line break inside a sentence becomes a space: when the line does not end a sentence
  (``.``, ``!``, ``?``, ``:``, ``;``) and the next line is not a list item and either starts in
  lower case or a digit, or continues a line written in capitals;
* runs of spaces become one space; lines are stripped.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = [
    "FILLER",
    "NEGATIONS",
    "RULE_WORDS",
    "STOP_WORDS",
    "TASK_WORDS",
    "normalise",
]

STOP_WORDS: frozenset[str] = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto over under as is
    are was were be been being am do does did doing have has had having this that these those it
    its it's they them their there here we us our you your i me my he she his her so such than
    too very can could should would will shall may might must just also only all any each every
    some about above below up down out off again further once what which who whom whose when
    where why how both few more most other same own s t
    """.split()
)

NEGATIONS: frozenset[str] = frozenset(
    """
    never not no don't dont doesn't doesnt isn't isnt aren't arent avoid avoids avoiding stop
    stops mustn't mustnt shouldn't shouldnt cannot can't cant won't wont without nor neither
    didn't didnt wasn't weren't forbidden forbid prohibited
    """.split()
)

RULE_WORDS: frozenset[str] = frozenset(
    """
    always must should shall ensure make sure use prefer please project codebase here really
    ever strictly generally usually everywhere whenever thing stuff choose need needs
    require requires required kindly definitely called named known important
    """.split()
)

TASK_WORDS: frozenset[str] = frozenset(
    """
    add use make run fix file code new work get set need want change update implement
    write creat create build check test thing way help please project
    """.split()
)

# Function words, signal words and vague nouns: a clause made only of these states no rule.
FILLER: frozenset[str] = frozenset(
    """
    a an the and or but if then of to in on at by for with from into onto over under as is are
    was were be been being am do does did doing have has had this that these those it its it's
    they them their there here we us our you your i me my so than too very can could should
    would will shall may might must just also only all any each every some about up out off
    again ever once what which who when where why how both more most other same own please
    always never not no don't dont stop avoid use using prefer prefers from now on remember
    that thing things stuff anything something everything
    """.split()
)


# --------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------

_TRANSLATE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u00a0": " ",
        "\u2002": " ",
        "\u2003": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u200b": "",
        "\ufeff": "",
    }
)
_DASH = re.compile(r"\s*[\u2013\u2014\u2015]+\s*|\s+--\s+")
_CODE = re.compile(r"`[^`\n]+`")
_LINK = re.compile(r"!?\[([^\[\]\n]+)\]\(([^()\s]*)\)")
# Emphasis: the marked text starts and ends with a letter/digit/backtick and the marks are not
# inside a word (snake_case, a*b) or a pattern (*.test.ts).
_EMPHASIS = [
    re.compile(r"(?<![\w*\\])\*\*(?=[\w`\"'(])(.+?)(?<=[\w`\"').!?:])\*\*(?![\w*])"),
    re.compile(r"(?<![\w\\])__(?=[\w`\"'(])(.+?)(?<=[\w`\"').!?:])__(?!\w)"),
    re.compile(r"(?<![\w*\\])\*(?=[A-Za-z0-9`\"'(])([^*\n]+?)(?<=[\w`\"').!?])\*(?![\w*])"),
    re.compile(r"(?<![\w\\])_(?=[A-Za-z0-9`\"'(])([^_\n]+?)(?<=[\w`\"').!?])_(?!\w)"),
]
_LINE_MARK = re.compile(
    r"^\s*(?:#{1,6}\s+|>\s*|(?:[-*+\u2022\u25aa\u25e6\u2023]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?)"
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u25aa\u25e6\u2023]|\d{1,3}[.)])\s+")
_SENTENCE_END = (".", "!", "?", ":", ";")
_PLACEHOLDER = re.compile(r"\ue010(\d+)\ue011")


def _symbol_lead(line: str) -> str:
    """Drop decorative symbols (emoji, check marks) at the start of a line."""
    i = 0
    while i < len(line) and (
        unicodedata.category(line[i]) in ("So", "Cf", "Mn") or line[i].isspace()
    ):
        i += 1
    return line[i:]


def _strip_marks(line: str) -> str:
    kept: list[str] = []

    def hide(match: re.Match[str]) -> str:
        kept.append(match.group(0))
        return f"\ue010{len(kept) - 1}\ue011"

    line = _CODE.sub(hide, line)
    line = _LINK.sub(lambda m: m.group(1), line)
    for _ in range(2):  # nested emphasis: ***x***, **_x_**
        for pattern in _EMPHASIS:
            line = pattern.sub(lambda m: m.group(1), line)
    return _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], line)


def _continues(previous: str, line: str, raw: str) -> bool:
    """True when ``line`` continues the sentence ``previous`` broke off (a hard line break)."""
    if not previous or not line or previous.endswith(_SENTENCE_END) or _LIST_ITEM.match(raw):
        return False
    first = line[0]
    if first.islower() or first.isdigit():
        return True
    tail = previous.split()[-1]
    head = line.split()[0]
    return tail.isalpha() and tail.isupper() and head.isalpha() and head.isupper()


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """The judged form of ``text`` (see the module docstring); code spans are kept as written."""
    text = unicodedata.normalize("NFC", text).translate(_TRANSLATE)
    text = _DASH.sub(" - ", text)
    lines: list[str] = []
    in_fence = False
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
            lines.append(raw.rstrip())
            continue
        if in_fence:
            lines.append(raw.rstrip())
            continue
        line = _symbol_lead(_LINE_MARK.sub("", _symbol_lead(raw)))
        line = _strip_marks(line)
        line = " ".join(line.split())
        if lines and line and _continues(lines[-1], line, raw):
            lines[-1] = lines[-1] + " " + line
            continue
        lines.append(line)
    return "\n".join(lines).strip()
