"""Tests of ``core.contradiction``: the labelled dev set, each rule, the precision traps."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro_memory.core.contradiction import Verdict, classify, same_rule

EVAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
DEV_SET = EVAL_DIR / "contradictions_dev.jsonl"


def _dev_cases() -> list[Any]:
    if not DEV_SET.is_file():
        return [pytest.param(None, id="dev-set-missing")]
    lines = DEV_SET.read_text(encoding="utf-8").splitlines()
    return [
        pytest.param(json.loads(line), id=f"dev{n}")
        for n, line in enumerate(lines, 1)
        if line.strip()
    ]


@pytest.mark.parametrize("case", _dev_cases())
def test_dev_set(case: dict[str, Any] | None) -> None:
    if case is None:
        pytest.skip(f"dev set not found at {DEV_SET}")
    new = case["new"]
    existing = [
        (str(i), e["text"])
        for i, e in enumerate(case["existing"])
        if e["category"] == new["category"]
    ]
    verdict = classify(new["text"], existing)
    assert verdict.action == case["expect"], verdict
    if case["expect"] == "added":
        assert verdict.target is None
    else:
        assert verdict.target == str(case["target"]), verdict


# ---------------------------------------------------------------------------------------------
# One existing entry, one new text: (old, new, expected action, fragment of the reason)
# ---------------------------------------------------------------------------------------------

PAIRS: list[tuple[str, str, str, str]] = [
    # reinforced: wording, articles, plurals/stems, abbreviations, a missing parenthetical
    (
        "Always run tests before committing",
        "Run the tests before you commit",
        "reinforced",
        "same rule",
    ),
    (
        "Always run tests before committing",
        "always run the tests before committing.",
        "reinforced",
        "same rule",
    ),
    (
        "Rate limiting: 10 req/min on public endpoints",
        "Rate limiting: 10 requests per minute on public endpoints",
        "reinforced",
        "same rule",
    ),
    ("API timeout is 500ms", "API timeout is 500 milliseconds", "reinforced", "same rule"),
    (
        "Session expiry is 15 minutes",
        "Session expiry is fifteen minutes",
        "reinforced",
        "same rule",
    ),
    (
        "Store configs in the config directory",
        "Store configuration in the config dir",
        "reinforced",
        "same rule",
    ),
    (
        "Always check the db connection",
        "Always check the database connection",
        "reinforced",
        "same rule",
    ),
    (
        "Never commit to the repo without review",
        "Never commit to the repository without review",
        "reinforced",
        "same rule",
    ),
    ("Load secrets from the env", "Load secrets from the environment", "reinforced", "same rule"),
    ("Always squash merge pull requests", "Always squash merge PRs", "reinforced", "same rule"),
    (
        "Prefers Sonnet for all execution tasks (cost reason)",
        "Prefers Sonnet for all execution tasks",
        "reinforced",
        "same rule",
    ),
    (
        "Test files must follow *.test.ts naming (not *.spec.ts)",
        "Test files must follow *.test.ts naming",
        "reinforced",
        "same rule",
    ),
    ("Main branch is develop, not main", "Main branch is develop", "reinforced", "same rule"),
    ("Never use default exports", "Avoid default exports", "reinforced", "same rule"),
    # a final e: "overcomplicated" and "overcomplicate" are one word (a typo fixed, real edit)
    (
        "Keep things simple do not overcomplicated",
        "Keep things simple; do not overcomplicate.",
        "reinforced",
        "same rule",
    ),
    (
        "Never use default exports",
        "Never use default exports in this project",
        "reinforced",
        "same rule",
    ),
    ("Likes terse commit messages", "Prefers terse commit messages", "reinforced", "same rule"),
    (
        "Store config in env vars",
        "Store configuration in environment variables",
        "reinforced",
        "same rule",
    ),
    ("Run e2e tests nightly", "Run end-to-end tests nightly", "reinforced", "same rule"),
    ("Min coverage is 80%", "Minimum coverage is 80%", "reinforced", "same rule"),
    (
        "CI must pass before merge",
        "CI must pass before merge (no exceptions)",
        "reinforced",
        "same rule",
    ),
    ("Use ruff for linting", "Use ruff instead of flake8 for linting", "reinforced", "same rule"),
    (
        "Rate limiting: 10 req/min",
        "Rate limiting: no more than 10 req/min",
        "reinforced",
        "same rule",
    ),
    ("Max line length is 100", "Line length: at most 100", "reinforced", "same rule"),
    (
        "Prefers Sonnet for all execution tasks (cost reason)",
        "Prefers Sonnet for execution",
        "reinforced",
        "same rule",
    ),
    (
        "Always check for null relations before accessing nested properties",
        "Always check null relations before nested access",
        "reinforced",
        "same rule",
    ),
    # replaced: a changed value
    ("Max line length is 100", "Max line length is 120", "replaced", "100 -> 120"),
    ("Timeout is 30s", "Timeout is 60s", "replaced", "30s -> 60s"),
    ("API timeout is 500ms", "API timeout is 2s", "replaced", "500ms -> 2s"),
    ("Node version is 18", "Node version is 20", "replaced", "18 -> 20"),
    ("Use Python 3.11", "Use Python 3.12", "replaced", "3.11 -> 3.12"),
    ("Deploy on Fridays", "Deploy on Mondays", "replaced", "Fridays -> Mondays"),
    (
        "Release on the first Monday of each month",
        "Release on the first Tuesday of each month",
        "replaced",
        "Monday -> Tuesday",
    ),
    (
        "Rate limiting: 10 req/min on public endpoints",
        "Rate limiting: 20 req/min",
        "replaced",
        "10 -> 20",
    ),
    ("Keep PRs under 400 lines", "Keep PRs under 200 lines", "replaced", "400 -> 200"),
    (
        "Never exceed 100 lines per function",
        "Never exceed 80 lines per function",
        "replaced",
        "100 -> 80",
    ),
    ("Always use pnpm", "Always use yarn", "replaced", "pnpm -> yarn"),
    ("Use Jest", "Use Vitest", "replaced", "Jest -> Vitest"),
    ("Use React for the frontend", "Use Vue for the frontend", "replaced", "React -> Vue"),
    (
        "Always use tabs for indentation",
        "Always use spaces for indentation",
        "replaced",
        "tabs -> spaces",
    ),
    ("Use 2 spaces for indentation", "Use 4 spaces for indentation", "replaced", "2 -> 4"),
    ("Always use double quotes", "Always use single quotes", "replaced", "double -> single"),
    (
        "Prefers terse commit messages",
        "Prefers detailed commit messages",
        "replaced",
        "terse -> detailed",
    ),
    (
        "Commit messages must be in English",
        "Commit messages must be in German",
        "replaced",
        "English -> German",
    ),
    ("Main branch is develop", "The main branch is called trunk", "replaced", "develop -> trunk"),
    ('Main branch is "develop", not "main"', "Main branch is main", "replaced", "develop -> main"),
    ("Secrets live in 1Password", "Secrets live in Vault", "replaced", "1Password -> Vault"),
    (
        "The API lives in services/api",
        "The API lives in apps/api",
        "replaced",
        "services/api -> apps/api",
    ),
    ("Min coverage is 80%", "Minimum coverage is 90%", "replaced", "80 -> 90"),
    ("Code review needs 2 approvals", "Code review needs 1 approval", "replaced", "2 -> 1"),
    ("Answer in English", "Answer in French", "replaced", "English -> French"),
    (
        "Use Postgres for new services",
        "Use MySQL for new services",
        "replaced",
        "Postgres -> MySQL",
    ),
    ("Use GitHub Actions for CI", "Use GitLab CI for CI", "replaced", "GitHub Actions -> GitLab"),
    ("Package manager: pnpm", "Package manager: yarn", "replaced", "pnpm -> yarn"),
    # replaced: flipped polarity
    ("Use pnpm", "Never use pnpm", "replaced", "flipped polarity (use -> never)"),
    (
        "Never use default exports",
        "Always use default exports",
        "replaced",
        "flipped polarity (never -> always)",
    ),
    (
        "Use Postgres for new services",
        "Don't use Postgres for new services",
        "replaced",
        "(use -> don't)",
    ),
    (
        "Never push directly to main",
        "Always push directly to main",
        "replaced",
        "(never -> always)",
    ),
    (
        "Tests must pass before merge",
        "Tests must not pass before merge",
        "replaced",
        "(must -> must not)",
    ),
    ("Prefers named exports", "Avoid named exports", "replaced", "(prefers -> avoid)"),
    ("Never commit .env files", "Always commit .env files", "replaced", "flipped polarity"),
    # replaced: reversed preference, "use X instead of Y"
    ("Prefers tabs over spaces", "Prefers spaces over tabs", "replaced", "tabs -> spaces"),
    (
        "Prefer REST over GraphQL for public APIs",
        "Prefer GraphQL over REST for public APIs",
        "replaced",
        "REST -> GraphQL",
    ),
    (
        "Supabase Auth chosen over Auth0 for cost and integration",
        "Auth0 chosen over Supabase Auth",
        "replaced",
        "reversed preference: now Auth0 over Supabase Auth",
    ),
    (
        "Use async/await instead of callbacks",
        "Use callbacks instead of async/await",
        "replaced",
        "reversed preference",
    ),
    (
        "Use axios",
        "Use the built-in fetch instead of axios",
        "replaced",
        "now built-in fetch instead of axios",
    ),
    (
        "Use axios for HTTP requests",
        "Use fetch instead of axios for HTTP requests",
        "replaced",
        "axios -> fetch",
    ),
    (
        "Use ruff instead of flake8 for linting",
        "Use flake8 for linting",
        "replaced",
        "ruff -> flake8",
    ),
    (
        "Prefers Sonnet for all execution tasks (cost reason)",
        "Prefers Opus over Sonnet for all execution tasks",
        "replaced",
        "Sonnet -> Opus",
    ),
    # added: precision traps
    ("Always use tabs for indentation", "Always use pnpm", "added", ""),
    ("Max line length is 100", "Timeout is 30s", "added", ""),
    ("Max line length is 100", "Max function length is 50 lines", "added", ""),
    ("Timeout is 30s", "Retry delay is 30s", "added", ""),
    ("Always run tests before committing", "Always run lint before committing", "added", ""),
    ("Always write tests for new functions", "Never mock the database in tests", "added", ""),
    (
        "Always add type hints to new functions",
        "Always add docstrings to new functions",
        "added",
        "",
    ),
    ("Always use tabs for indentation", "Never use spaces for indentation", "added", ""),
    ("Prefers Sonnet for all execution tasks", "Prefers Sonnet for planning", "added", ""),
    ("Prefers Sonnet for all execution tasks", "Prefers dark mode in the terminal", "added", ""),
    ("Keep functions under 50 lines", "Keep files under 500 lines", "added", ""),
    ("Never push directly to main", "Never push directly to develop", "added", ""),
    ("Never deploy on Fridays", "Never deploy on weekends", "added", ""),
    ("Never use var in JavaScript", "Never use eval in JavaScript", "added", ""),
    ("Never commit .env files", "Never commit .pem files", "added", ""),
    ("Never use default exports", "Never use default exports in React components", "added", ""),
    ("Use vitest instead of jest", "Use ruff instead of flake8 for linting", "added", ""),
    ("Use vitest instead of jest", "Use jest for e2e tests", "added", ""),
    ("Use React for the frontend", "Use Express for the backend", "added", ""),
    ("Use 2 spaces for indentation in YAML", "Use 4 spaces for indentation in Python", "added", ""),
    ("Prefer composition over inheritance", "Use inheritance for error classes", "added", ""),
    ("CI runs on GitHub Actions", "Deploys run on GitHub Actions", "added", ""),
    ("Always use named exports", "Never use default exports", "added", ""),
    ("Use Sonnet for execution tasks", "Use Opus for planning tasks", "added", ""),
    ("Package manager: pnpm", "Timeout: 30s", "added", ""),
    ("Always use pnpm", "Always use pnpm workspaces", "added", ""),
    ("Always run tests before committing", "Always run tests before pushing", "added", ""),
    (
        "Staging is deployed from the release branch",
        "Production is deployed from the main branch",
        "added",
        "",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "action", "reason"), PAIRS, ids=[f"{p[2]}:{p[1][:40]}" for p in PAIRS]
)
def test_pair(old: str, new: str, action: str, reason: str) -> None:
    verdict = classify(new, [("e1", old)])
    assert verdict.action == action, verdict
    assert verdict.target == (None if action == "added" else "e1")
    assert reason in verdict.reason, verdict.reason
    assert verdict.reason


def test_reason_examples_from_the_brief() -> None:
    jwt = "JWT with 15min expiry, refresh tokens in httpOnly cookies"
    verdict = classify(jwt.replace("15min", "30min"), [("a", jwt)])
    assert verdict == Verdict("replaced", "a", "changed value: 15min -> 30min")
    verdict = classify("Never use tabs for indentation", [("b", "Always use tabs for indentation")])
    assert verdict == Verdict("replaced", "b", "flipped polarity (always -> never)")
    verdict = classify(
        "Always run the tests before committing", [("c", "Always run tests before committing")]
    )
    assert verdict == Verdict("reinforced", "c", "same rule restated")


# ---------------------------------------------------------------------------------------------
# Choosing among several entries
# ---------------------------------------------------------------------------------------------


def test_no_entries_means_added() -> None:
    assert classify("Never use default exports", []) == Verdict(
        "added", None, "no existing entry on this topic"
    )


def test_duplicate_beats_contradiction() -> None:
    existing = [
        ("old", "Always use tabs for indentation"),  # a contradiction (value changed)
        ("dup", "Always use spaces for indentation"),  # the same rule
        ("other", "Never use default exports"),
    ]
    verdict = classify("Always use spaces for indentation.", existing)
    assert (verdict.action, verdict.target) == ("reinforced", "dup")
    # Order does not matter: the duplicate still wins when it comes first.
    verdict = classify("Always use spaces for indentation.", existing[::-1])
    assert (verdict.action, verdict.target) == ("reinforced", "dup")


def test_highest_overlap_wins() -> None:
    existing = [
        ("close", "JWT with 15min expiry, refresh tokens in httpOnly cookies"),
        ("far", "Session timeout is 15min"),
    ]
    verdict = classify("JWT with 30min expiry, refresh tokens in httpOnly cookies", existing)
    assert (verdict.action, verdict.target) == ("replaced", "close")


def test_tie_goes_to_the_newest() -> None:
    existing = [("first", "Always use pnpm"), ("second", "Always use pnpm")]
    verdict = classify("Always use yarn", existing)
    assert (verdict.action, verdict.target) == ("replaced", "second")
    verdict = classify("always use pnpm", existing)
    assert (verdict.action, verdict.target) == ("reinforced", "second")


def test_unrelated_entries_are_skipped() -> None:
    existing = [
        ("a", "Always check for null relations before accessing nested properties"),
        ("b", "Test files must follow *.test.ts naming"),
        ("c", "Never use default exports"),
    ]
    verdict = classify("Test files must follow *.spec.ts naming", existing)
    assert (verdict.action, verdict.target) == ("replaced", "b")
    assert "*.test.ts -> *.spec.ts" in verdict.reason


# ---------------------------------------------------------------------------------------------
# same_rule (also used for tombstones)
# ---------------------------------------------------------------------------------------------

SAME = [
    ("Always run tests before committing", "Always run the tests before committing"),
    (
        "Rate limiting: 10 req/min on public endpoints",
        "Rate limiting: 10 requests/min on public endpoints",
    ),
    (
        "Prefers Sonnet for all execution tasks (cost reason)",
        "Prefers Sonnet for all execution tasks",
    ),
    ("Never use default exports", "never use default exports."),
    ("Use the built-in fetch instead of axios", "Use the built-in fetch rather than axios"),
    ("Timeout is 30 seconds", "Timeout is 30s"),
]
DIFFERENT = [
    ("Always use tabs for indentation", "Never use tabs for indentation"),
    ("Prefers tabs over spaces", "Prefers spaces over tabs"),
    ("Use vitest instead of jest", "Use jest instead of vitest"),
    ("JWT with 15min expiry", "JWT with 30min expiry"),
    ("Always use tabs for indentation", "Always use pnpm"),
    ("Max line length is 100", "Timeout is 30s"),
    ("Timeout is 30 seconds", "Timeout is 30 minutes"),
]


@pytest.mark.parametrize(("a", "b"), SAME)
def test_same_rule_true(a: str, b: str) -> None:
    assert same_rule(a, b)
    assert same_rule(b, a)


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_same_rule_false(a: str, b: str) -> None:
    assert not same_rule(a, b)
    assert not same_rule(b, a)


# ---------------------------------------------------------------------------------------------
# Contract
# ---------------------------------------------------------------------------------------------


def test_bad_input_raises() -> None:
    with pytest.raises(TypeError, match="new_text must be a string"):
        classify(None, [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="existing text must be a string"):
        classify("Always test", [("a", 3)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="pairs"):
        classify("Always test", ["Always test"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="must be a string"):
        same_rule("Always test", None)  # type: ignore[arg-type]


def test_verdict_is_frozen() -> None:
    verdict = classify("Always test", [])
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.action = "replaced"  # type: ignore[misc]


@pytest.mark.parametrize(
    "text",
    ["(" * 2000 + "never" + ")" * 2000, "use x instead of " * 2000, "Always " * 5000, "%" * 100],
    ids=["parens", "instead", "always", "percent"],
)
def test_pathological_input_is_handled(text: str) -> None:
    assert same_rule(text, text)
    assert classify(text, [("a", "Always use pnpm")]).action in ("added", "replaced")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_text_restates_itself(text: str) -> None:
    assert same_rule(text, text)
    verdict = classify(text, [("x", text)])
    assert (verdict.action, verdict.target) == ("reinforced", "x")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.lists(st.text(max_size=120), max_size=5))
def test_verdicts_are_well_formed(new: str, olds: list[str]) -> None:
    existing = [(f"id{i}", text) for i, text in enumerate(olds)]
    verdict = classify(new, existing)
    assert verdict.action in ("added", "replaced", "reinforced")
    assert verdict.reason
    if verdict.action == "added":
        assert verdict.target is None
    else:
        assert verdict.target in {eid for eid, _ in existing}
