"""Issue 27, measured: a labelled set of prompts with pasted content (``tests/data/
pasted_prompts.jsonl``) run through the one detection path every door uses
(``MemoryStore.detect_semantic_signals``), and the real-phrasing sets scored with and without
the split, so that recall never drops.

Each line of the set: ``prompt``; ``own_rules`` (substrings of the rules the person states
themselves, which must be saved); ``pasted_rules`` (substrings of imperatives in what they
pasted, which must never be saved); ``shape`` and ``source``; ``half``. The halves were fixed
before any result was looked at: within each shape every other case (by position) is
validation, never tuned on. Its numbers, as first measured: 3 of 96 pasted rules saved, 0 of
24 own rules lost; after a fix found by ``test_shown.py``'s Rust-panic case (not by the
validation half), 2 of 96 — the bound asserted below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_real_phrasing import SIGNALS_REAL, _load, _true_positives

from maestro_memory.core import MemoryStore
from maestro_memory.core.injected import strip_injected
from maestro_memory.core.shown import split_shown
from maestro_memory.core.signals import detect_signals

SET = Path(__file__).resolve().parents[1] / "data" / "pasted_prompts.jsonl"
SIGNALS_DEV = SIGNALS_REAL.parent / "signals_dev.jsonl"
DAY = "2026-12-04"


def _cases(half: str) -> list[dict[str, Any]]:
    cases = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line]
    return [c for c in cases if c["half"] == half]


def _run(tmp_path: Path, half: str) -> tuple[list[str], list[str], int, int]:
    """Pasted rules saved and own rules lost (as ``id: fragment``), and how many of each."""
    saved_pasted: list[str] = []
    lost_own: list[str] = []
    pasted = own = 0
    for case in _cases(half):
        store = MemoryStore(tmp_path / case["id"], clock=lambda: DAY)
        store.detect_semantic_signals(case["prompt"])
        facts = [e.text.lower() for e in store.semantic_entries()]
        for fragment in case["pasted_rules"]:
            pasted += 1
            if any(fragment.lower() in f for f in facts):
                saved_pasted.append(f"{case['id']}: {fragment}")
        for fragment in case["own_rules"]:
            own += 1
            if not any(fragment.lower() in f for f in facts):
                lost_own.append(f"{case['id']}: {fragment}")
    return saved_pasted, lost_own, pasted, own


def test_the_set_is_large_varied_and_would_poison_memory_without_the_split() -> None:
    dev, val = _cases("dev"), _cases("val")
    assert len(dev) + len(val) >= 100
    assert {c["shape"] for c in dev} == {c["shape"] for c in val}
    assert sum(bool(c["own_rules"] and c["pasted_rules"]) for c in dev + val) >= 30  # mixed
    # Not a set of easy cases: mined whole, most pasted rules would be saved.
    poisoned = sum(
        any(p.lower() in s.fact.lower() for s in detect_signals(c["prompt"]))
        for c in dev + val
        for p in c["pasted_rules"]
    )
    assert poisoned >= 0.6 * sum(len(c["pasted_rules"]) for c in dev + val)


def test_dev_half_no_pasted_rule_saved_no_own_rule_lost(tmp_path: Path) -> None:
    saved_pasted, lost_own, pasted, own = _run(tmp_path, "dev")
    assert (pasted, own) == (107, 31)
    assert saved_pasted == [] and lost_own == []


def test_validation_half_stays_at_its_measured_numbers(tmp_path: Path) -> None:
    saved_pasted, lost_own, pasted, own = _run(tmp_path, "val")
    assert (pasted, own) == (96, 24)
    assert len(saved_pasted) <= 2, saved_pasted
    assert lost_own == [], lost_own


def _scored(path: Path, *, split: bool) -> tuple[int, int, int]:
    tp = detected = expected = 0
    for case in _load(path):
        message = case["user"]
        if split:
            message = split_shown(strip_injected(message)).own
        found = detect_signals(message)
        wanted = [(s["confidence"], s["fact_contains"]) for s in case["signals"]]
        tp += _true_positives(found, wanted)
        detected += len(found)
        expected += len(wanted)
    return tp, detected, expected


@pytest.mark.parametrize("path", [SIGNALS_REAL, SIGNALS_DEV], ids=["real", "dev"])
def test_real_phrasing_recall_and_precision_do_not_drop(path: Path) -> None:
    before = _scored(path, split=False)
    after = _scored(path, split=True)
    assert after == before, (before, after)  # (true positives, detected, expected)
