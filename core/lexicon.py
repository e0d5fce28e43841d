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
* ``DETERMINERS``: a part of ``STOP_WORDS`` the contradiction rules name on their own.

Below them, the lists one module uses (signal detection, contradiction, the session digest, the
secret screen), each named for what it holds. Regular expressions stay with their module: a
list here is plain words.

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
    "ABBREVIATION_FILLER",
    "ADMIN_NAMES",
    "ANCHOR_PLAIN_WORDS",
    "BARE_OBJECT_VERBS",
    "CREDENTIAL_NOUNS",
    "DETERMINERS",
    "ED_BASE_VERBS",
    "EXCEPTION_WORDS",
    "FILLER",
    "GENERAL_TASK_VERBS",
    "GRAMMAR_ENDINGS",
    "LOGIN_NAMES",
    "NEGATIONS",
    "NEGATIVE_MARKERS",
    "NOT_IMPERATIVE",
    "ORDINARY_VALUES",
    "OUTPUT_LABELS",
    "PAST_FORMS",
    "POSITIVE_MARKERS",
    "PRACTICE_VERBS",
    "PREFERENCE_VERBS",
    "RULE_WORDS",
    "SLOT_WORDS",
    "STATIVE_VERBS",
    "STOP_WORDS",
    "TASK_VERBS",
    "TASK_WORDS",
    "TRIVIAL_REPLIES",
    "WEEKDAYS_MONTHS",
    "normalise",
]

# Determiners: the words before a noun that pick which one (a part of ``STOP_WORDS``).
DETERMINERS: frozenset[str] = frozenset(
    "a an the our my your their its this that these those".split()
)

STOP_WORDS: frozenset[str] = DETERMINERS | frozenset(
    """
    and or but if then else of to in on at by for with from into onto over under as is
    are was were be been being am do does did doing have has had having it
    it's they them there here we us you i me he she his her so such than
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

# What follows a subject's identifier in a rule's frame ("Service A runs …", "step 2 is …";
# core/frame.py); a count is not one ("needs 2 approvals").
SUBJECT_VERBS: frozenset[str] = frozenset(
    """
    is are was runs run uses lives handles listens serves builds must should will needs
    requires has takes calls does goes starts deploys publishes pushes stores reads writes
    sends returns owns
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


# -- signal detection (core/signals.py) ----------------------------------------------------------
# Irregular past forms and participles that make "X always/never <verb>" narration.
PAST_FORMS: frozenset[str] = frozenset(
    """
    been was were had did got gotten went gone made saw seen came took taken thought knew known
    found ran wrote written broke broken told said left felt kept gave given began begun built
    heard meant understood became brought bought caught taught fell fallen forgot forgotten
    stood sat lost won spent sent held led paid read going gonna getting
    """.split()
)
# Verbs whose base form ends in "ed" (so "-ed" is not their past).
ED_BASE_VERBS: frozenset[str] = frozenset(
    "need embed feed seed proceed exceed succeed speed shred heed bleed breed".split()
)
# Verbs of knowing, feeling and happening that narrate ("I always forget …"), never instruct.
STATIVE_VERBS: frozenset[str] = frozenset(
    """
    forget forgets remember remembers know knows seem seems get gets wonder wonders
    understand understands find finds think thinks feel feels mix mixes confuse confuses
    struggle struggles manage manages end ends lose loses miss misses mess messes
    have has care cares mind minds notice notices realise realize see sees hear hears
    worry worries wish wishes hope hopes guess guesses believe believes doubt doubts
    """.split()
)
# Verbs a person states a preference with ("I want …", "we prefer …").
PREFERENCE_VERBS: frozenset[str] = frozenset("want like prefer expect need love".split())
# First words that do not make a clause an instruction ("Only the …", "Only fun …").
NOT_IMPERATIVE: frozenset[str] = frozenset(
    """
    the a an this that these those it its it's there here so like same true again ever mind
    when if then yes no i me my you your we our they them their he she his her what which who
    how why fun good bad easy hard sure right wrong fine nice worth enough too very happy glad
    welcome great amazing awesome helpful useful interesting annoying busy late available
    possible impossible tricky weird confusing something someone somebody somewhere lol
    """.split()
)
# Verbs a durable practice is stated with; task verbs (fix, add, create …) are not among them.
PRACTICE_VERBS: frozenset[str] = frozenset(
    """
    use keep follow write run put place name default stick format document comment structure
    organise organize store target pin limit wrap split group sort prefix suffix indent mark
    ensure maintain pass import render edit sync export include track read cite assess suppress
    leave label distinguish handle treat reference validate prove
    """.split()
)
# Verbs that make a sentence a request for work now (a task), not a standing rule. Not
# ``TASK_WORDS``: those are words any task contains (relevance); these start a request.
# Task verbs that state a standing practice when their object is general ("Add tests for changed
# behavior", "Update the docs for user-facing changes").
GENERAL_TASK_VERBS: frozenset[str] = frozenset("add implement update create".split())
TASK_VERBS: frozenset[str] = frozenset(
    """
    fix implement add create refactor update investigate profile replace delete remove rename
    move debug explain summarize summarise show suggest consider look go build start finish close
    try check find help review analyze analyse migrate upgrade convert port rewrite change clean
    """.split()
)
# Verbs whose bare object is enough for a standing rule ("Use pnpm"); the others need more
# ("Keep functions small", not "Keep going"; "Run X before Y", not "Run tests").
BARE_OBJECT_VERBS: frozenset[str] = frozenset("use default stick pin target".split())
# Labels of pasted program output ("error: …", "stdout: …"): never a rule's label.
OUTPUT_LABELS: frozenset[str] = frozenset(
    "error errors warning warnings exception traceback failed failure fail stderr stdout output "
    "log logs result expected actual got assertionerror typeerror valueerror q question".split()
)

# -- contradiction (core/contradiction.py) -------------------------------------------------------
# The words that state a positive rule, in the order a rule's marker is looked for.
POSITIVE_MARKERS: tuple[str, ...] = (
    "always",
    "must",
    "should",
    "prefers",
    "prefer",
    "likes",
    "use",
    "uses",
)
# Negation words and the marker each states a negative rule with.
NEGATIVE_MARKERS: dict[str, str] = {
    "never": "never",
    "don't": "don't",
    "dont": "don't",
    "not": "not",
    "no": "no",
    "avoid": "avoid",
    "avoids": "avoid",
    "stop": "stop",
    "mustn't": "must not",
    "shouldn't": "should not",
    "without": "without",
    "doesn't": "doesn't",
    "isn't": "isn't",
    "cannot": "cannot",
    "can't": "cannot",
    "won't": "won't",
}
# Words after which the next token is where a rule states its conclusion.
SLOT_WORDS: frozenset[str] = frozenset(
    """
    is are be was were 's called named use uses using used prefer prefers preferred like likes
    on via follow follows choose chose chosen pick picks set equals = : runs uses over than
    """.split()
)
# Day and month names: a time, never a tool or a value.
WEEKDAYS_MONTHS: frozenset[str] = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays weekday weekdays weekend weekends january february march
    april may june july august september october november december
    """.split()
)
# Abbreviations that carry no topic ("e.g", "vs").
ABBREVIATION_FILLER: frozenset[str] = frozenset({"e.g", "i.e", "etc", "vs", "w", "w/", "eg", "ie"})

# -- anchored reading of rule edits (core/anchors.py) ---------------------------------------------
# Words too common to tell two rules apart by: a code span of only these is emphasis, not code.
ANCHOR_PLAIN_WORDS: frozenset[str] = frozenset(
    """
    a an the of to in on at for with by from and or but not no is are be it its this that these
    those as if when then than so do does use using used always never must should can may will
    please only also all any each every your you we our their they them some most many few
    """.split()
)
# Words that add an exception to a rule: a rule that gains one is narrowed, not restated.
EXCEPTION_WORDS: frozenset[str] = frozenset("except exception unless only explicitly".split())

# -- session digest (core/digest.py) -------------------------------------------------------------
# Follow-ups that carry no subject of their own.
TRIVIAL_REPLIES: frozenset[str] = frozenset(
    "yes no ok okay thanks thank continue go ahead please sure right".split()
)

# -- secret screen (core/secrets.py) -------------------------------------------------------------
# Words after a credential word ("password is required") that are words, not credentials.
ORDINARY_VALUES: frozenset[str] = frozenset(
    """
    a an the this that these those it its is was be been being not no none null nil empty
    blank missing required optional invalid valid wrong right correct incorrect expired
    expiring revoked rotated stored hashed encrypted salted set unset changed reset
    needed necessary mandatory ok okay fine good bad weak strong long short too very
    in on at for from with without of to by as into via and or but if when then
    here there where what which who how why still now also only just always never
    same different new old current default random secret private public hidden
    masked redacted shown visible sent saved kept checked verified generated
    managed handled provided given passed injected read loaded fetched
    env environment variable variables config configured configuration file vault
    true false yes undefined unknown placeholder example sample dummy test tests
    flow flows field fields form input prompt screen page policy policies rules rule
    length format type types value values string strings hash hashes
    see use ask check get look refer follow run call enter type pick choose paste copy
    contact go try rotate store keep change update must should will can may please
    whatever whichever one two three four five six seven eight nine ten twelve
    await yield return raise lambda function self this cls super require import
    """.split()
)
# Endings of a lower-case word that is grammar, not a credential ("the password is stored").
GRAMMAR_ENDINGS: frozenset[str] = frozenset("ed ing ly able ible tion ment ness er".split())
# The nouns a credential goes by: "user:password lines" names one, it is not one.
CREDENTIAL_NOUNS: frozenset[str] = frozenset(
    "password passwords passwd pass passphrase pin token secret key credentials".split()
)
# User names that make "NAME/X" or "NAME:X" a login even without a login word nearby.
LOGIN_NAMES: frozenset[str] = frozenset(
    "admin administrator root sa postgres ubnt pi guest test user demo ops ci deploy".split()
)
# Administrator names: "root:toor" with a login word is a credential even with a weak value.
ADMIN_NAMES: frozenset[str] = frozenset("admin administrator root sa".split())

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
# A dash between words, with the spaces around it. Each branch starts only where a run of
# spaces starts (or right at a dash), so a long run of spaces is scanned once, not once per
# space: ``\s*`` tried at every position of a 20,000-space line took 26 s.
_DASH = re.compile(
    r"(?:(?<!\s)\s*|(?=[\u2013\u2014\u2015]))[\u2013\u2014\u2015]+\s*|(?<!\s)\s+--\s+"
)
# An inline code span, its text in group 1: the one pattern every reader of rules uses.
CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"!?\[([^\[\]\n]+)\]\(([^()\s]*)\)")
# Emphasis: the marked text starts and ends with a letter/digit/backtick and the marks are not
# inside a word (snake_case, a*b) or a pattern (*.test.ts). The span is at most 400 characters,
# so an opener without a closer scans a bounded stretch (an unbounded one made "**a " * n
# quadratic).
_EMPHASIS = [
    re.compile(r"(?<![\w*\\])\*\*(?=[\w`\"'(])(.{1,400}?)(?<=[\w`\"').!?:])\*\*(?![\w*])"),
    re.compile(r"(?<![\w\\])__(?=[\w`\"'(])(.{1,400}?)(?<=[\w`\"').!?:])__(?!\w)"),
    re.compile(r"(?<![\w*\\])\*(?=[A-Za-z0-9`\"'(])([^*\n]{1,400}?)(?<=[\w`\"').!?])\*(?![\w*])"),
    re.compile(r"(?<![\w\\])_(?=[A-Za-z0-9`\"'(])([^_\n]{1,400}?)(?<=[\w`\"').!?])_(?!\w)"),
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

    line = CODE_SPAN.sub(hide, line)
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
