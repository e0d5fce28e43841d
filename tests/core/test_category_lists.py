"""The lists a save compares a new fact with (``state.CategoryLists``) are the ones a walk over
semantic.md gives, after every kind of change: saves that add, link, replace and reinforce,
forgets, the prompt door (held), imports, a maintenance that resolves links, and a file with a
category's heading twice."""

from __future__ import annotations

import random

import pytest
from test_related import generated_corpus

from maestro_memory.core import frame
from maestro_memory.core.memory import Memory
from maestro_memory.core.model import CATEGORY_HEADINGS

CATEGORIES = tuple(CATEGORY_HEADINGS)


def walked(memory: Memory, category: str) -> tuple[list[object], list[object], list[object]]:
    blocks = [b for b in memory.docs["semantic"].entries() if b.category == category]
    pairs = [(b.id, b.text) for b in blocks]
    return blocks, pairs, [p for b, p in zip(blocks, pairs, strict=True) if "sup" not in b.meta]


def assert_lists_right(memory: Memory) -> None:
    doc = memory.docs["semantic"]
    for category in CATEGORIES:
        blocks, pairs, open_pairs = memory.categories.of(doc, memory.generation, category)
        want = walked(memory, category)
        assert [id(b) for b in blocks] == [id(b) for b in want[0]]
        assert (pairs, open_pairs) == (want[1], want[2])


TWICE = """# Semantic Memory

## Project Context
- [2026-11-01] [0.90] The billing webhooks retry at most 5 retries <!-- mm:id=s-00000001 -->

## Quality Rule
- [2026-11-01] [0.90] Always lint test files <!-- mm:id=s-00000002 -->

## Project Context
- [2026-11-01] [0.90] Use pnpm for the deploy job <!-- mm:id=s-00000003 -->
"""


@pytest.mark.parametrize("text", [None, TWICE])
def test_the_kept_lists_equal_a_walk_after_every_change(
    text: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(frame, "_similar", frame._similar)  # restored afterwards
    monkeypatch.setattr(frame, "_batched", frame._batched)
    frame.use_meaning()  # links by meaning, as the daemon saves
    corpus = generated_corpus(500, seed=3636)
    rng = random.Random(3636)
    memory = Memory.load({"semantic.md": text}, today="2026-12-01")
    seen: dict[str, int] = {}
    for k in range(600):
        r = rng.random()
        entries = memory.semantic_entries()
        if r < 0.7 or not entries:
            result = memory.save_semantic(
                rng.choice(corpus), rng.choice(CATEGORIES), rng.choice([0.5, 0.9, 1.0])
            )
            seen[result.action] = seen.get(result.action, 0) + 1
            seen["linked"] = seen.get("linked", 0) + (result.may_replace is not None)
        elif r < 0.8:
            memory.forget([rng.choice(entries).id])
        elif r < 0.87:
            memory.reinforce(rng.choice(entries).id, confirmed=rng.random() < 0.5)
        elif r < 0.95:
            said = "Always " + rng.choice(corpus).lower() + ". Never " + rng.choice(corpus)
            memory.detect_semantic_signals(said.lower() + ".")
        else:
            memory.memory_maintenance()
        assert_lists_right(memory)
        if k % 7 == 6:
            memory.changed_files()
            memory.mark_clean()  # a commit: the lists stay right across it
            assert_lists_right(memory)
    assert min(seen.get(a, 0) for a in ("added", "replaced", "reinforced")) >= 50, seen
    assert seen["linked"] >= 3, seen
