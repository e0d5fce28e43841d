"""The pre-filter in front of ``classify`` never changes a verdict.

``classify(new, may_relate(new, existing))`` must equal ``classify(new, existing)`` for every
new fact: checked on a large generated corpus built to produce every verdict (restatements,
changed values, flipped polarity, reversed choices, families, texts without words) and on the
shared evaluation sets when they are present.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from maestro_memory.core import related
from maestro_memory.core.contradiction import classify
from maestro_memory.core.memory import Memory
from maestro_memory.core.related import may_relate, relation_keys

EVAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "eval"

SUBJECTS = (
    "the billing webhooks",
    "API requests",
    "test files",
    "the deploy job",
    "database migrations",
    "pull requests",
    "the auth tokens",
    "lint errors",
    "the CI pipeline",
    "commit messages",
)
TOOLS = ("pnpm", "yarn", "npm", "jest", "vitest", "ruff", "eslint", "postgres", "sqlite", "Opus")
VALUES = ("15 minutes", "30 minutes", "2 retries", "5 retries", "*.test.ts", "*.spec.ts", "100%")
DAYS = ("Fridays", "Mondays", "weekends", "main", "release branches")
TEMPLATES = (
    "Always {verb} {subject}",
    "Never {verb} {subject}",
    "{Subject} must {verb} within {value}",
    "{Subject} must not {verb} within {value}",
    "Use {tool} for {subject}",
    "Prefer {tool} over {tool2} for {subject}",
    "Use {tool} instead of {tool2}",
    "Don't use {tool}",
    "Avoid {tool} in {subject}",
    "Never deploy on {day}",
    "Deploy only from {day}",
    "{Subject} time out after {value}",
    "{Subject} retry at most {value}",
    "Keep {subject} under {value} (team decision)",
    "{Subject} are reviewed by {tool}",
    "{tool}",
    "{value}",
    "the and of",
    "Always",
    "???",
)
VERBS = ("run", "squash", "sign", "rebase", "review", "cache", "retry", "lint")


def generated_corpus(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        subject = rng.choice(SUBJECTS)
        tool, tool2 = rng.sample(TOOLS, 2)
        out.append(
            rng.choice(TEMPLATES).format(
                verb=rng.choice(VERBS),
                subject=subject,
                Subject=subject[0].upper() + subject[1:],
                value=rng.choice(VALUES),
                tool=tool,
                tool2=tool2,
                day=rng.choice(DAYS),
            )
        )
    return out


def eval_texts() -> list[str]:
    texts: list[str] = []
    for name in ("contradictions_dev.jsonl", "contradictions_real_dev.jsonl"):
        path = EVAL_DIR / name
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                texts += [e["text"] for e in case["existing"]] + [case["new"]["text"]]
    return texts


def test_prefiltered_verdicts_equal_full_verdicts_on_a_large_corpus() -> None:
    corpus = generated_corpus(3000, seed=16) + eval_texts()
    rng = random.Random(1616)
    actions: dict[str, int] = {}
    differ = []
    for k in range(2500):
        existing = [(f"s-{k}-{j}", t) for j, t in enumerate(rng.sample(corpus, 60))]
        new = rng.choice(corpus)
        full = classify(new, existing)
        kept = may_relate(new, existing)
        assert [p for p in existing if p in kept] == kept  # a subset, in order
        if classify(new, kept) != full:
            differ.append((new, full))
        actions[full.action] = actions.get(full.action, 0) + 1
    assert differ == []
    # The corpus exercises every verdict, so the identity above means something.
    assert min(actions.get(a, 0) for a in ("added", "replaced", "reinforced")) >= 100, actions


def test_the_filter_drops_unrelated_entries() -> None:
    existing = [
        ("s-1", "Never deploy on Fridays"),
        ("s-2", "Use pnpm for installs"),
        ("s-3", "Commit messages follow the conventional format"),
    ]
    assert may_relate("Use yarn for installs", existing) == existing[1:2]
    assert may_relate("Deploy only on Mondays", existing) == existing[:1]
    # A text without words may relate to anything, and anything to it.
    assert relation_keys("the and of") is None
    assert may_relate("the and of", existing) == existing
    assert may_relate("Use yarn", [*existing, ("s-4", "???")])[-1] == ("s-4", "???")


def walked(new: str, existing: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The filter as one test per entry (what the key index stands for)."""
    keys = relation_keys(new)
    return [
        p
        for p in existing
        if keys is None or (k := relation_keys(p[1])) is None or not keys.isdisjoint(k)
    ]


@pytest.mark.parametrize("limit", [16384, 50, 7])
def test_the_key_index_stays_right_as_entries_are_added_replaced_and_removed(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    # A small limit: the index is full and starts again, and at 7 a category holds more texts
    # than it keeps (the walk then), mid-sequence.
    monkeypatch.setattr(related, "_INDEX", related._KeyIndex())
    monkeypatch.setattr(related._KeyIndex, "LIMIT", limit)
    corpus = generated_corpus(400, seed=36)
    rng = random.Random(36)
    memory = Memory.load({}, today="2026-12-01")
    actions: dict[str, int] = {}
    for k in range(400):
        if k % 9 == 8 and memory.semantic_entries():
            memory.forget([rng.choice(memory.semantic_entries()).id])
            actions["forgotten"] = actions.get("forgotten", 0) + 1
        else:
            result = memory.save_semantic(rng.choice(corpus), "project_context", 0.9)
            actions[result.action] = actions.get(result.action, 0) + 1
        existing = [(e.id, e.text) for e in memory.semantic_entries()]
        for new in (rng.choice(corpus), "the and of", "w1q1 w1k1", "Use pnpm for test files"):
            assert may_relate(new, existing) == walked(new, existing)
    assert min(actions.get(a, 0) for a in ("added", "replaced", "reinforced", "forgotten")) >= 20
