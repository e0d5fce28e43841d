"""The labelled real prompts of issue 35 through the prompt door (``bench/prompts.py``): the
dev half holds the scores reached when the door was tuned on it (a regression fails); the
validation half is reported. ``bench.labels.shared_corpus()`` fails in CI when the corpus is
missing and skips elsewhere."""

from __future__ import annotations

import pytest

from bench.labels import prompt_cases, shared_corpus
from bench.prompts import PromptScore, score_prompts

# Measured on the dev half when the gate (core/durable.py) was written; raise when it improves.
DEV_ORDINARY_LEAVING_MAX = 0.01
DEV_SERVED_PRECISION = 0.85  # 7/7 now; 5/6 at the start of stop 47, 5/9 before the paste fixes
DEV_RULES_CAPTURED = 0.65  # 11/16 now (other languages proposed, reasons kept); 6/16 before
DEV_RULES_SERVED = 0.4  # 7/16 now ("let's not use X", a rule with its reason); 5/16 before
DEV_FACTS_CAPTURED = 0.2  # 11/52 now (facts offered inside a request, other languages); 1/52 before


def _score(split: str) -> PromptScore:
    directory = shared_corpus()
    if directory is None:
        pytest.skip("the prompt corpus is not present (set MAESTRO_SHARED_DIR)")
    return score_prompts(prompt_cases(directory, split))


def test_dev_prompts_hold_their_scores() -> None:
    score = _score("dev")
    assert score.ordinary_leaving / score.ordinary <= DEV_ORDINARY_LEAVING_MAX, score.wrong[:5]
    assert score.served_right / max(score.served, 1) >= DEV_SERVED_PRECISION, score.wrong[:5]
    assert score.rules_captured / score.rules >= DEV_RULES_CAPTURED, score.missed[:5]
    assert score.rules_served / score.rules >= DEV_RULES_SERVED, score.missed[:5]
    assert score.facts_captured / score.facts >= DEV_FACTS_CAPTURED, score.missed[:5]


def test_val_prompts_are_reported() -> None:
    score = _score("val")
    for name, n, d in score.rows():
        print(f"val {name}: {n}/{d}")
    assert score.ordinary_leaving / score.ordinary <= 0.05  # issue 35's target
