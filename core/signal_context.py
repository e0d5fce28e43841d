"""Context inference for signal detection (``core/signals.py``): a project fact or practice
stated without a signal word, which the spec scores 0.5.

* **Stated facts** (``CONTEXT_FACTS``): "We use Linear for tickets", "This project uses Vitest",
  "SQLite is the default backend", "Tests live in tests/", "Jotai for atomic state management".
* **Named roles and conventions**: a name (a known tool, a code span, or a word with an inner
  capital, digit, dot or hyphen) then "for"/"in"/"with"/"throughout" and what it covers ("JSDoc
  comments for public APIs", "kebab-case for file names", "PostgreSQL in production, SQLite for
  dev only") or its settings in parentheses ("Biome (tabs for code, 2 spaces for JSON)"); "This
  is a … monorepo managed with pnpm"; a
  requirement stated as a participle ("Type hints required for all code", "Strict mypy type
  checking enabled"); a subject that uses something ("E2E tests use Playwright").
* **Modal rules** with a subject ("Branch names must start with claude/").
* **Practices**: an imperative of a practice verb (``lexicon.PRACTICE_VERBS``: use, keep,
  follow, ensure, maintain …) whose object is general, not one thing now ("Use American English
  spelling", not "Use the mock for this"); a task verb (``GENERAL_TASK_VERBS``: add, implement,
  update, create) only with a general object and a cue such as "new", "changed", "every",
  "user-facing" ("Add tests for changed behavior", not "Add Redis caching to get_user").

A clause that starts with a task or practice verb is never read as a named role (the verb is
the sentence's head, not a name).
"""

from __future__ import annotations

import re

from .lexicon import (
    BARE_OBJECT_VERBS,
    FILLER,
    GENERAL_TASK_VERBS,
    NOT_IMPERATIVE,
    PRACTICE_VERBS,
    TASK_VERBS,
)
from .rule_reading import FAMILIES
from .signal_patterns import (
    ADVERBIAL_LEAD,
    AGENT_MUST,
    CONTEXT_FACTS,
    FUTURE_HEDGE,
    GENERAL_CUE,
    GENERAL_TASK_CUE,
    IN_PROGRESS,
    NAME_FOR_ROLE,
    NAMED_OBJECT,
    NAMED_ROLE,
    NOT_SUBJECT,
    PATHLIKE,
    POSITIVE_MODAL,
    PROJECT_IS,
    REQUIREMENT,
    SPECIFIC_OBJECT,
    SUBJECT_USES,
    TOOL_SETTINGS,
    WORD,
)

__all__ = ["context_kind", "first_word", "has_content", "stated_fact"]


def has_content(text: str) -> bool:
    """True when ``text`` holds at least one word that is not a signal or function word."""
    for index, token in enumerate(WORD.findall(text)):
        t = token.lower().strip(".'-")
        if not t:
            continue
        if "\ue000" in t or (t not in FILLER and len(t) > 1):
            return True
        if index > 0 and token[:1].isupper() and t != "i" and not t.startswith("i'"):
            return True  # a name that looks like a function word: "never use Any"
    return False


def first_word(text: str) -> str:
    match = WORD.search(text)
    return match.group(0).lower() if match else ""


def _named(head: str) -> bool:
    """A name rather than a word: a code span, a known tool, or a word with an inner capital,
    digit, dot or hyphen ("PostgreSQL", "kebab-case", "2-space"), not "Multiple" or "Stream"."""
    return (
        head.startswith("\ue000")
        or head.lower() in FAMILIES
        or bool(re.search(r".[A-Z.\d]|-", head))
    )


def _content_words(text: str) -> list[str]:
    return [w for w in WORD.findall(text) if w.lower() not in FILLER]


def _practice(clause: str) -> bool:
    """A durable imperative without a signal word: ``Use American English spelling``."""
    body = re.sub(r"^only\s+", "", clause, flags=re.I)
    only = body is not clause and body != clause
    verb = first_word(body)
    if not body[len(verb) : len(verb) + 1].isspace():
        return False  # "NAME)AO)0": not a verb and its object
    rest = body[len(verb) :].strip()
    if verb in GENERAL_TASK_VERBS and not only:
        # "Add tests for changed behavior": a task verb with a general object and a cue.
        return (
            bool(GENERAL_TASK_CUE.search(rest))
            and not SPECIFIC_OBJECT.match(rest)
            and not PATHLIKE.search(rest)
            and len(_content_words(rest)) >= 2
        )
    if verb not in PRACTICE_VERBS and not (only and verb not in NOT_IMPERATIVE):
        return False
    if not has_content(rest) or PATHLIKE.search(rest) or not re.search(r"[A-Za-z]{3}|\ue000", rest):
        return False  # "Name 00)0" names nothing
    if any(w in TASK_VERBS for w in re.findall(r"\band\s+(\w+)", rest.lower())):
        return False  # "run make verify and fix all errors": a task
    if verb not in BARE_OBJECT_VERBS and len(_content_words(rest)) < 2 and not only:
        return False
    if verb in BARE_OBJECT_VERBS and NAMED_OBJECT.match(rest):
        return True  # "Use the template at `.github/…`": a named thing, not "use it"
    return only or bool(GENERAL_CUE.search(rest)) or not SPECIFIC_OBJECT.match(rest)


def stated_fact(clause: str) -> bool:
    """True when ``clause`` states a project fact with a subject of its own (``CONTEXT_FACTS``:
    "We use Linear for tickets", "This is my app, built for the game Stationeers"), as opposed
    to a bare name and its role ("Jest for tests"), which a task's text also holds."""
    return any(p.match(clause) for p in CONTEXT_FACTS) and has_content(clause)


def context_kind(clause: str) -> str | None:
    """``"fact"`` or ``"rule"`` when ``clause`` states a project fact or practice plainly."""
    if IN_PROGRESS.search(clause) or FUTURE_HEDGE.search(clause):
        return None
    if stated_fact(clause) or (NAME_FOR_ROLE.match(clause) and has_content(clause)):
        return "fact"
    agent = AGENT_MUST.match(clause)  # "You must be able to explain every line of your diff"
    if agent and (
        GENERAL_CUE.search(agent.group("rest")) or not SPECIFIC_OBJECT.match(agent.group("rest"))
    ):
        return "rule"
    modal = POSITIVE_MODAL.match(clause)
    if (
        modal
        and not NOT_SUBJECT.search(modal.group("subject"))
        and first_word(clause) not in TASK_VERBS
        and has_content(modal.group("rest"))
    ):
        return "rule"
    lead = ADVERBIAL_LEAD.match(clause)
    if _practice(lead.group("rest") if lead else clause):
        return "rule"
    verb = first_word(clause)
    if verb in TASK_VERBS or verb in PRACTICE_VERBS or not has_content(clause):
        return None
    role = NAMED_ROLE.match(clause) or TOOL_SETTINGS.match(clause)
    if role and _named(role.group("head")) and role.group("head").lower() not in NOT_IMPERATIVE:
        return "fact"
    if PROJECT_IS.match(clause):
        return "fact"
    if REQUIREMENT.match(clause) or SUBJECT_USES.match(clause):
        return "fact"
    return None
