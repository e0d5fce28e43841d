"""Durable or one-off: the verdict on a statement the prompt door found (issue 35 point 2).

A statement ``core/signals.py`` finds in a person's prompt is one of three things:

* ``instruction`` — very likely meant to last and in the person's own words: saved and served
  at once as their standing instruction;
* ``proposal`` — likely but not certain: saved, shown in ``review``, ``entries`` and the
  viewer, **not served**, until it is confirmed (``core/proposals.py``);
* ``refused`` — a one-off: scoped to the task at hand, an order for the current change, a line
  of output, part of a bug report. Not saved; the reason is reported.

Read by form, from what real prompts to coding agents show (``docs/prompt-labelling.md``): the
operator (always / never / from now on / remember, prefer / don't …), scope words ("for now",
"this file", "anything else", "in this PR"), reference to the task at hand ("this", "these",
"the above"), a generic subject versus a product one ("the navbar should …", "don't turn the
buttons grey"), and the shape of the whole message (a bug report, a long task specification, a
list of requirements). These cues are English: a statement in another language
(``core/signal_languages.py``) is at most a proposal, since its scope cannot be read. The same
statement said again on a later day confirms a proposal (``core/saving.py``).

Every verdict carries a short reason, shown by ``detect`` and logged by the prompt hook. A
pure function of the statement, its confidence and the person's own words of the prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .signal_languages import reads_english
from .signals import CONFIDENCE_ALWAYS, CONFIDENCE_RULE

__all__ = ["Verdict", "VerdictLevel", "judge", "prompt_shape"]

VerdictLevel = Literal["instruction", "proposal", "refused"]

# A statement longer than this is a piece of a specification, not a rule one keeps.
INSTRUCTION_MAX_WORDS = 18
STATEMENT_MAX_WORDS = 30
# The person's own words of a prompt above this are a task specification (or a paste).
SHORT_PROMPT_WORDS = 45
REQUIREMENT_LINES = 4  # this many list items or more: the requirements of the change at hand

# Scope: the statement holds for the task at hand only.
_SCOPE = re.compile(
    r"\b(?:for now|right now|just now|now\b|yet\b|for the moment|at the moment|this time"
    r"|for this (?!(?:project|repo|repository|codebase)\b)\w+"  # the project: what lasts
    r"|in this (?:pr|change|step|commit|branch|task|file|function|page)\b"
    r"|only (?:this|these|that) |this (?:file|function|page|component|pr|step|change|task"
    r"|screen|class|method|test|script|module|commit|section|feature|bug|issue|one|part)\b"
    r"|anything else|everything else|the rest\b|any changes? to|here\b|above|below"
    r"|these\b|those\b|same as before)",
    re.IGNORECASE,
)
# An order for the current change: the statement opens with a verb of work.
_TASK_VERB = re.compile(
    r"^(?:please\s+|now\s+|also\s+|then\s+)?(?:add|create|update|implement|fix|write|build"
    r"|make|run|organi[sz]e|read|include|change|remove|refactor|move|rename|generate|show"
    r"|display|put|set up|install|replace|delete|convert|check|test|look|see|find|give"
    r"|let|help|modify|edit|improve|integrate|design|prepare|copy|learn|try)\b",
    re.IGNORECASE,
)
# A line of output or data: "Vision Encoder: 217.30 ms", "Warning: …", "Pragma: no-cache"
# (not a sentence of the person's that goes on after a colon: "I have two repos: one for …").
_OUTPUT_LINE = re.compile(
    r"^(?!(?:i|we|it|this|our|my)\s)[\w .()/-]{1,40}:\s|\d+(?:\.\d+)?\s?(?:ms|s|kb|mb|gb|%)\b"
    r"|^(?:warning|error|note|info)\b"
    r"|[❌✅✓✗]|https?://",
    re.IGNORECASE,
)
# What a product shows, named in an order about how it looks or behaves ("Don't make the hover
# effect turn the buttons grey"): a requirement of the product under work, not a working rule.
_PRODUCT_LOOK = re.compile(
    r"\b(?:hover|buttons?|navbar|header|footer|modal|sidebar|dropdown|tooltip|icons?|logo"
    r"|colou?rs?|font|background|border|padding|margin|animation)\b.{0,40}?\b(?:grey|gray"
    r"|white|black|red|blue|green|bold|bigger|smaller|larger|visible|hidden|round(?:ed)?"
    r"|transparent|darker|lighter)\b|\b(?:grey|gray|bigger|smaller|darker|lighter)\b.{0,40}?"
    r"\b(?:buttons?|icons?|text|header|background)\b",
    re.IGNORECASE,
)
# A product subject: what the app shows or does, a requirement of the product.
_PRODUCT_SUBJECT = re.compile(
    r"^(?:the |a |an |all |each |every )?(?:\w+ ){0,2}(?:button|page|screen|navbar|header"
    r"|footer|modal|list|table|form|menu|sidebar|card|field|column|row|icon|logo|image|user"
    r"|users|app|site|website|dashboard|component|view|panel|tab|styling|layout|text|title"
    r"|results?|output|api|endpoint|row|members?|guests?)s?\b.{0,40}?\b(?:should|must|will"
    r"|shall|needs? to|has to|have to)\b",
    re.IGNORECASE,
)
_TIME_WORD = re.compile(
    r"\b(?:always|never|from now on|going forward|in (?:the )?future|remember|every time"
    r"|whenever|each time|by default)\b",
    re.IGNORECASE,
)
_BUG = re.compile(
    r"\b(?:error|errors|exception|traceback|doesn'?t work|does not work|not working|isn'?t"
    r"|broken|fails?|failed|failing|crash(?:es|ed)?|blank|still (?:getting|see|shows?|not)"
    r"|i get|i'm getting|getting an?|wrong|bug|undefined|null|returns? \d{3}|\b[45]\d\d\b)",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S")


@dataclass(frozen=True)
class Verdict:
    """What the door does with one statement, and why (a short reason a person can read)."""

    level: VerdictLevel
    reason: str


def prompt_shape(own: str) -> str | None:
    """What the person's own words of a prompt mostly are, when that scopes what they state:
    ``"a bug report"``, ``"a list of requirements"``, ``"a task specification"``, or None."""
    words = len(own.split())
    lines = [line for line in own.splitlines() if line.strip()]
    if sum(1 for line in lines if _LIST_ITEM.match(line)) >= REQUIREMENT_LINES:
        return "a list of requirements"
    if len(_BUG.findall(own)) >= (1 if words <= SHORT_PROMPT_WORDS else 2):
        return "a bug report"
    if words > SHORT_PROMPT_WORDS:
        return "a task specification"
    return None


def judge(statement: str, confidence: float, own: str) -> Verdict:
    """The verdict on ``statement`` (found at ``confidence`` in ``own``, the person's words of
    the prompt): see the module docstring."""
    words = len(statement.split())
    scope = _SCOPE.search(statement)
    timed = _TIME_WORD.search(statement) is not None
    if scope is not None and not (confidence >= CONFIDENCE_ALWAYS and timed):
        return Verdict("refused", f"scoped to the task at hand ({scope.group(0).strip()!r})")
    if _OUTPUT_LINE.search(statement) and confidence < CONFIDENCE_RULE:
        return Verdict("refused", "a line of output or data, not a statement")
    if confidence < CONFIDENCE_RULE and _TASK_VERB.match(statement):
        return Verdict("refused", "an order for the current task")
    if words > STATEMENT_MAX_WORDS:
        return Verdict("refused", f"a {words}-word sentence: part of a specification")
    if not reads_english(statement):
        return Verdict("proposal", "not in English: the door cannot read its scope; to confirm")
    shape = prompt_shape(own)
    if confidence < CONFIDENCE_RULE:
        if shape == "a bug report":
            return Verdict("refused", "said in a bug report")
        return Verdict("proposal", "a plain statement (no always/never/prefer): to confirm")
    if _PRODUCT_SUBJECT.match(statement) or _PRODUCT_LOOK.search(statement):
        return Verdict("proposal", "a requirement of the product, not a working rule: to confirm")
    if words > INSTRUCTION_MAX_WORDS:
        return Verdict("proposal", f"a long statement ({words} words): to confirm")
    if shape is not None and not (timed and shape == "a task specification"):
        return Verdict("proposal", f"said inside {shape}: to confirm")
    return Verdict("instruction", "stated as a rule in the person's own words")
