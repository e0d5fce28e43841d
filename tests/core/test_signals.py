"""Tests of ``core.signals.detect_signals``: the labelled dev set plus cases of our own."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro_memory.core.model import CATEGORIES
from maestro_memory.core.signals import (
    CONFIDENCE_ALWAYS,
    CONFIDENCE_CONTEXT,
    CONFIDENCE_RULE,
    DetectedSignal,
    detect_signals,
)

EVAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
DEV_SET = EVAL_DIR / "signals_dev.jsonl"

ALL = list(CATEGORIES)
PREF = ["user_preference"]
ARCH = ["architecture_decision"]
QUAL = ["quality_rule"]
PROJ = ["project_context"]


def _dev_cases() -> list[Any]:
    if not DEV_SET.is_file():
        return [pytest.param(None, id="dev-set-missing")]
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [
        pytest.param(json.loads(line), id=f"dev{n}")
        for n, line in enumerate(lines, 1)
        if line.strip()
    ]


def _check(found: list[DetectedSignal], expected: list[tuple[float, list[str], list[str]]]) -> None:
    assert len(found) == len(expected), [s.fact for s in found]
    for signal, (confidence, contains, categories) in zip(found, expected, strict=True):
        assert signal.confidence == confidence, signal
        for fragment in contains:
            assert fragment.lower() in signal.fact.lower(), (fragment, signal.fact)
        assert signal.category in categories, signal


@pytest.mark.parametrize("case", _dev_cases())
def test_dev_set(case: dict[str, Any] | None) -> None:
    if case is None:
        pytest.skip(f"dev set not found at {DEV_SET}")
    found = detect_signals(case["user"], case.get("assistant", ""))
    expected = [(s["confidence"], s["fact_contains"], s["categories"]) for s in case["signals"]]
    _check(found, expected)


# ---------------------------------------------------------------------------------------------
# Our own positive cases: message -> [(confidence, fact fragments, accepted categories)]
# ---------------------------------------------------------------------------------------------

POSITIVE: list[tuple[str, list[tuple[float, list[str], list[str]]]]] = [
    # always / never, imperative
    ("Always write tests for new endpoints.", [(1.0, ["always", "tests", "endpoints"], QUAL)]),
    ("NEVER commit secrets to the repo.", [(1.0, ["never commit secrets"], QUAL + PROJ)]),
    ("never force-push to the release branch", [(1.0, ["force-push", "release branch"], PROJ)]),
    ("Always use absolute imports.", [(1.0, ["absolute imports"], QUAL)]),
    ("Never log personal data.", [(1.0, ["never log personal data"], QUAL)]),
    ("Never, ever push secrets.", [(1.0, ["push secrets"], QUAL + PROJ)]),
    ("Never ever use `eval`.", [(1.0, ["eval"], QUAL)]),
    ("Always be explicit about return types.", [(1.0, ["return types"], QUAL)]),
    (
        "Important: always validate user input on the server.",
        [(1.0, ["validate user input"], QUAL)],
    ),
    # always / never after a subject that makes it a rule
    ("We always squash merge pull requests.", [(1.0, ["always squash"], PROJ + QUAL)]),
    # a plain project fact is the spec's context inference (issue 12)
    ("We use tabs.", [(0.5, ["we use tabs"], ALL)]),
    ("We never deploy on Fridays.", [(1.0, ["never deploy on fridays"], PROJ)]),
    ("You should always run mypy before pushing.", [(1.0, ["always run mypy"], QUAL)]),
    ("Tests should always pass before merging.", [(1.0, ["tests should always pass"], QUAL)]),
    ("Secrets must never be committed.", [(1.0, ["secrets must never"], QUAL)]),
    ("We should never store tokens in localStorage.", [(1.0, ["tokens", "localstorage"], ALL)]),
    ("I never want to see print statements in production code.", [(1.0, ["print"], PREF + QUAL)]),
    ("Make sure the tests always pass before you merge.", [(1.0, ["tests always pass"], QUAL)]),
    ("Run the linter before pushing, always.", [(1.0, ["always run the linter"], QUAL)]),
    # lead-ins and politeness removed
    ("thanks! also, always write docstrings", [(1.0, ["always write docstrings"], QUAL)]),
    ("Be sure to never log tokens.", [(1.0, ["never log tokens"], QUAL + ARCH)]),
    ("I think we should always pin dependency versions.", [(1.0, ["pin dependency"], ALL)]),
    ("Let's always use async/await.", [(1.0, ["always use async/await"], QUAL + ARCH)]),
    ("Can you always run the linter before committing.", [(1.0, ["always run the linter"], QUAL)]),
    ("Thanks! One more thing: never use `var` in JavaScript.", [(1.0, ["never use var"], QUAL)]),
    # from now on / going forward: the fact is the rest
    ("From now on please reply in English.", [(1.0, ["reply in english"], PREF)]),
    ("Going forward, use pnpm for everything.", [(1.0, ["use pnpm"], ALL)]),
    ("Use pnpm from now on.", [(1.0, ["use pnpm"], ALL)]),
    ("ok cool. also, from now on, keep responses short", [(1.0, ["keep responses short"], PREF)]),
    ("From now on, run the linter before every commit.", [(1.0, ["run the linter"], QUAL)]),
    ("OK so from now on we deploy from the release branch.", [(1.0, ["release branch"], PROJ)]),
    # remember that / keep in mind / remember to
    (
        "Remember: staging is deployed from the release branch.",
        [(1.0, ["staging is deployed"], PROJ)],
    ),
    ("Remember that staging uses a separate database.", [(1.0, ["staging uses"], PROJ + ARCH)]),
    ("Remember, we use pnpm here.", [(1.0, ["we use pnpm"], PROJ)]),
    ("Remember we are on macOS.", [(1.0, ["we are on macos"], PROJ)]),  # no "that" (prompts)
    ("remember: the staging DB is wiped every Sunday", [(1.0, ["wiped every sunday"], PROJ)]),
    ("Main branch is called trunk, remember that.", [(1.0, ["main branch is called trunk"], PROJ)]),
    ("Keep in mind that the legacy module uses Python 2.", [(1.0, ["python 2"], ALL)]),
    ("Remember to update the changelog with every release.", [(1.0, ["changelog"], PROJ)]),
    # prefer
    ("I'd prefer shorter answers.", [(0.9, ["prefers shorter answers"], PREF)]),
    ("I prefer small, focused PRs.", [(0.9, ["prefers small, focused prs"], PREF)]),
    ("We prefer composition over inheritance.", [(0.9, ["composition over inheritance"], PREF)]),
    ("We'd rather keep everything in one repo.", [(0.9, ["prefers", "one repo"], PREF)]),
    ("My preference is small, focused pull requests.", [(0.9, ["prefers small"], PREF)]),
    ("Prefer `const` over `let`.", [(0.9, ["prefer const over let"], PREF + QUAL)]),
    ("For tests, I prefer pytest fixtures over setUp methods.", [(0.9, ["pytest fixtures"], PREF)]),
    # use X instead of Y and corrections
    ("Use pytest rather than unittest for new tests.", [(0.9, ["pytest", "unittest"], ALL)]),
    ("We use vitest instead of jest.", [(0.9, ["use vitest instead of jest"], ALL)]),
    ("Actually, use httpx instead of requests.", [(0.9, ["use httpx instead of requests"], ALL)]),
    ("Use tabs instead of spaces, please.", [(0.9, ["use tabs instead of spaces"], QUAL)]),
    ("use `pnpm` instead of `npm`", [(0.9, ["use pnpm instead of npm"], ALL)]),
    ("Use pnpm, not npm.", [(0.9, ["use pnpm instead of npm"], ALL)]),
    ("Not npm, use pnpm.", [(0.9, ["use pnpm instead of npm"], ALL)]),
    ("No — not moment.js, use date-fns.", [(0.9, ["date-fns instead of moment.js"], ARCH)]),
    ("No. Use Postgres, not MySQL.", [(0.9, ["use postgres instead of mysql"], ARCH)]),
    ("Use ruff, not flake8, for linting.", [(0.9, ["ruff instead of flake8 for linting"], ALL)]),
    ("Hmm, no — not jest, vitest.", [(0.9, ["use vitest instead of jest"], ALL)]),
    (
        "No no, don't use lodash; use native array methods.",
        [(0.9, ["native array methods instead of lodash"], ALL)],
    ),
    # don't / do not / stop / avoid
    ("Don't use inline styles.", [(0.9, ["don't use inline styles"], QUAL + ARCH)]),
    ("do not hardcode API keys", [(0.9, ["do not hardcode api keys"], QUAL)]),
    ("Please don't leave TODO comments in the code.", [(0.9, ["don't leave todo"], QUAL)]),
    ("Don't ever commit directly to main!", [(0.9, ["commit directly to main"], PROJ + QUAL)]),
    ("Stop adding emojis to commit messages.", [(0.9, ["stop adding emojis"], PREF + QUAL)]),
    ("Please stop using var.", [(0.9, ["stop using var"], QUAL)]),
    ("Stop doing manual deploys.", [(0.9, ["manual deploys"], PROJ)]),
    ("Avoid global state in React components.", [(0.9, ["avoid global state"], ARCH + QUAL)]),
    ("We don't use semicolons in this codebase.", [(0.9, ["don't use semicolons"], QUAL)]),
    ("I don't want you to add comments to obvious code.", [(0.9, ["don't add comments"], QUAL)]),
    ("In tests, don't mock the database.", [(0.9, ["don't mock the database"], QUAL + ARCH)]),
    ("You shouldn't ever use eval.", [(0.9, ["don't use eval"], QUAL)]),
    ("Commits should not include generated files.", [(0.9, ["generated files"], QUAL + PROJ)]),
    ("Users should never see a stack trace.", [(1.0, ["never see a stack trace"], QUAL)]),
    ("Stop running the full test suite on every change.", [(0.9, ["full test suite"], QUAL)]),
    ("If tests fail, don't merge.", [(0.9, ["if tests fail, don't merge"], QUAL + PROJ)]),
    (
        "Always make sure the build is green before you tag a release.",
        [(1.0, ["build is green"], PROJ + QUAL)],
    ),
    ("From now on the main branch is develop.", [(1.0, ["main branch is develop"], PROJ)]),
    ("Remember that we switched to pnpm last month.", [(1.0, ["switched to pnpm"], ALL)]),
    # corrections split over clauses or sentences are one fact
    ("No, don't use axios. Use fetch.", [(0.9, ["use fetch instead of axios"], ALL)]),
    ("Use fetch. Not axios.", [(0.9, ["use fetch instead of axios"], ALL)]),
    ("Stop using moment, use date-fns instead.", [(0.9, ["date-fns instead of moment"], ALL)]),
    ("Don't use jest; we use vitest here.", [(0.9, ["vitest", "instead of jest"], ALL)]),
    # several signals in one message, in order
    (
        "Always run lint and tests before pushing, and never push directly to main.",
        [(1.0, ["run lint and tests"], QUAL), (1.0, ["never push directly to main"], PROJ)],
    ),
    (
        "Always squash commits. Never merge without review.",
        [(1.0, ["squash commits"], PROJ + QUAL), (1.0, ["never merge without review"], ALL)],
    ),
    (
        "always use type hints; never use Any",
        [(1.0, ["type hints"], QUAL), (1.0, ["never use any"], QUAL)],
    ),
    (
        "Don't use default exports and don't use barrel files.",
        [(0.9, ["default exports"], QUAL), (0.9, ["barrel files"], QUAL)],
    ),
    (
        "- Always use UTC for timestamps\n- Never store passwords in plain text",
        [(1.0, ["utc"], ALL), (1.0, ["passwords"], QUAL)],
    ),
    (
        "Thanks, that works! From now on use ruff. Also, I prefer terse answers.",
        [(1.0, ["use ruff"], ALL), (0.9, ["prefers terse answers"], PREF)],
    ),
]


@pytest.mark.parametrize(("message", "expected"), POSITIVE, ids=[p[0][:40] for p in POSITIVE])
def test_positive(message: str, expected: list[tuple[float, list[str], list[str]]]) -> None:
    _check(detect_signals(message), expected)


# ---------------------------------------------------------------------------------------------
# Chatter: none of these is a rule
# ---------------------------------------------------------------------------------------------

NEGATIVE = [
    # questions
    "Is it always this slow?",
    "Would it always return a list?",
    "Can you check why it always times out?",
    "Why do you always do that",
    "What should we always do before a release?",
    "Which testing library do you prefer?",
    "Do you prefer tabs or spaces?",
    "Don't you think that's too slow?",
    "Should we never use default exports?",
    "I wonder if we should always squash.",
    # never mind, thanks, acknowledgements
    "Never mind, it works now.",
    "Yeah, never mind, it's fine now.",
    "Thanks a lot!",
    "Great job, thanks!",
    "Always happy to help.",
    "Always a pleasure.",
    # self-description
    "I never remember the flags for tar.",
    "I never know which config file is used, can you check?",
    "I'm never sure which branch to use.",
    "I don't remember where that file lives.",
    "I don't mind either way.",
    "I always use vim.",
    # narration, past tense, descriptions of behaviour
    "It never crashed before.",
    "it always fails on CI",
    "The build always fails on CI.",
    "The tests never pass on the first try.",
    "This always happens when I run the build.",
    "It never used to be this slow.",
    "We never got that working.",
    "We always had issues with the old cache.",
    "You always add too many comments.",
    "You never run the tests.",
    "Never seen this before.",
    "Never heard of it.",
    "Never thought about that.",
    "Honestly it never worked.",
    "It's always DNS.",
    "Always the same error with this thing.",
    "It uses axios instead of fetch.",
    "The function returns null instead of throwing.",
    "It should never return null.",
    # remember that + a past event or noun phrase
    "Remember that bug we fixed last week.",
    "remember that meeting yesterday? it went well",
    "Remember that time the deploy broke prod",
    "Remember the outage last month? Same thing.",
    "remember we fixed that bug yesterday?",
    "Remember my last message",
    "remember that!",
    # identifiers and code
    "Set ALWAYS_ON=1 in the env file.",
    "set NEVER_CACHE=true in the env",
    "Call `neverExpire()` on the token.",
    "Check the --never-fail flag.",
    "Run `git commit --no-verify` and `always-true` once.",
    "```\n# always run this\nnever_expire = True\n```",
    # one-off requests and content-free instructions
    "Deploy it to staging and tell me the URL.",
    "Write the migration and then run it.",
    "Fix the failing test in auth.py.",
    "Don't merge it yet.",
    "Don't touch the migrations for now.",
    "Don't bother with the docs for now.",
    "Don't worry about it.",
    "Don't do that.",
    "Please don't.",
    "Stop it.",
    "Stop the server.",
    "Stop doing that.",
    "Always.",
    "Never again.",
    "Not now, thanks.",
    "not really, it's fine",
    "Not bad, pretty good actually.",
    "Stop working on that and look at the bug.",
    "Remember to push when you're done.",
    "never gonna give you up",
    "It's broken, don't merge.",
    "Thanks as always!",
    "Make it always return a list.",
    "This should never happen.",
    "I never asked for that.",
    "Please never do this again.",
    "Don't forget the tests.",
    "No, that's wrong.",
    "From now on it should be fine.",
    "Not the staging URL, the prod one.",
    "   \n\t ",
]


@pytest.mark.parametrize("message", NEGATIVE)
def test_negative(message: str) -> None:
    assert detect_signals(message) == []


# ---------------------------------------------------------------------------------------------
# Contract
# ---------------------------------------------------------------------------------------------


def test_fact_is_cleaned() -> None:
    [signal] = detect_signals("ok thanks. and never commit `.env` files!!")
    assert signal.fact == "Never commit .env files"
    [signal] = detect_signals("please always add type hints to new functions, thanks.")
    assert signal.fact == "Always add type hints to new functions"
    # An aside's marker at the end is the person talking, not part of the rule.
    [signal] = detect_signals("DO NOT BUILD BTW")
    assert signal.fact == "Do not BUILD"  # shouted words other than the operator stay
    [signal] = detect_signals("never push to main, by the way")
    assert signal.fact == "Never push to main"


def test_code_keeps_its_spelling_and_time_phrase_goes() -> None:
    [signal] = detect_signals("`npm test` must always pass before merge.")
    assert signal.fact == "`npm test` must always pass before merge"  # a command keeps its marks
    [signal] = detect_signals("Great, always use pnpm from now on.")
    assert signal.fact == "Always use pnpm"


def test_correction_names_both_sides() -> None:
    [signal] = detect_signals("No, not axios \u2014 use the built-in fetch.")
    assert signal.fact == "Use the built-in fetch instead of axios"
    assert signal.confidence == 0.9


def test_always_beats_other_patterns() -> None:
    [signal] = detect_signals("Always use pnpm instead of npm.")
    assert signal.confidence == 1.0
    [signal] = detect_signals("From now on, don't add emojis.")
    assert signal.confidence == 1.0
    assert "emojis" in signal.fact


def test_repeated_rule_is_one_fact() -> None:
    found = detect_signals("Never push to main. never push to main!")
    assert [s.fact for s in found] == ["Never push to main"]


def test_assistant_response_is_never_mined() -> None:
    assert detect_signals("Thanks!", "Always run the tests. Never commit secrets.") == []
    with_reply = detect_signals("Never use default exports.", "I will always remember that.")
    assert with_reply == detect_signals("Never use default exports.")


@pytest.mark.parametrize("bad", [None, 42, b"always test", ["always"], {"a": 1}])
def test_non_string_user_message_raises(bad: object) -> None:
    with pytest.raises(TypeError, match="user_message must be a string"):
        detect_signals(bad)  # type: ignore[arg-type]


def test_non_string_assistant_response_raises() -> None:
    with pytest.raises(TypeError, match="assistant_response must be a string"):
        detect_signals("Always test.", None)  # type: ignore[arg-type]


def test_empty_message() -> None:
    assert detect_signals("") == []
    assert detect_signals("", "") == []


def test_detected_signal_is_frozen() -> None:
    [signal] = detect_signals("Never use default exports.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        signal.fact = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    [
        "always " * 5000,
        "never use x, " * 3000,
        "for x, " * 3000 + "I prefer y",
        "use " + "not x " * 3000,
        "`" * 5001,
        "(" * 2000 + "never" + ")" * 2000,
    ],
    ids=["always-x5000", "never-x3000", "nested-adverbials", "nots", "backticks", "parens"],
)
def test_pathological_input_is_handled(text: str) -> None:
    for signal in detect_signals(text):
        assert signal.fact


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_well_formed_signals(text: str) -> None:
    for signal in detect_signals(text):
        assert signal.category in CATEGORIES
        # The spec's three: a signal word (1.0, 0.9) or a plain practice inferred (0.5).
        assert signal.confidence in (CONFIDENCE_ALWAYS, CONFIDENCE_RULE, CONFIDENCE_CONTEXT)
        assert signal.fact.strip() == signal.fact
        assert signal.fact
        assert "\ue000" not in signal.fact and "`" not in signal.fact


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["Always", "Never", "From now on,", "Please never", "Don't"]),
    st.sampled_from(["commit", "use", "deploy", "write", "run"]),
    st.from_regex(r"[a-z]{3,10}( [a-z]{3,10}){0,3}", fullmatch=True),
)
def test_generated_rules_are_found(lead: str, verb: str, rest: str) -> None:
    found = detect_signals(f"{lead} {verb} {rest}.")
    assert len(found) == 1
    assert rest.split()[-1] in found[0].fact
