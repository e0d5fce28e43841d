"""The real corpus (public instruction files, their histories; ``../shared/corpus``) scored as
``shared/eval/README.md`` says, through the committed labels (``bench.labels``) and
``bench.corpus``'s scorers; and the real-phrasing evaluation sets of ``../shared/eval``.

The corpus text is the public repositories' own, so it is not part of this repository. Locally a
missing corpus skips these tests; in CI (``CI`` set) it is an error: ``bench.labels``'s
``shared_corpus()`` raises, and a gate that matters does not skip. The dev half holds the scores
reached when the rules were tuned on it, so a regression fails; the validation half, never tuned
on, is reported and held to a floor far below.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus import EditScore, load, score_edits, score_signals
from bench.labels import line_cases, pair_cases, read_labels, shared_corpus

# What the rules reach on the dev half (measured when the floors were set); a change that scores
# lower is a regression. Raise these when the rules improve.
DEV_EDITS = 0.735  # 0.741 now (0.758 before uncertain changes were linked: a link loses nothing)
DEV_REPLACED = 0.64  # 169/242 then, 157/242 and 10 linked now
DEV_REINFORCED = 0.67
DEV_ADDED = 0.96  # 120/124 on main at 2364d7e: a floor, not the target
DEV_LINES_PRECISION = 0.71
DEV_LINES_RECALL = 0.46
# The real-phrasing evaluation sets of ../shared/eval (tuned on in earlier rounds).
EVAL_EDITS = 0.94
EVAL_SIGNALS_PRECISION = 0.95
EVAL_SIGNALS_RECALL = 0.95
# The validation half is reported; only a floor far below the dev scores is asserted.
VAL_FLOOR = 0.3


def _corpus() -> Path:
    directory = shared_corpus()  # raises in CI when missing
    if directory is None:
        pytest.skip("the shared corpus is not present (set MAESTRO_SHARED_DIR)")
    return directory


def _labelled(kind: str) -> None:
    if not read_labels(kind):
        pytest.skip(f"no {kind} labels committed yet (tests/data/labels/{kind}.tsv)")


def _edits(score: EditScore) -> str:
    return f"{score.accuracy:.3f} " + ", ".join(
        f"{label} {score.of(label):.3f} ({score.right[label]}/{score.total[label]}"
        + (f", {score.linked[label]} linked" if score.linked[label] else "")
        + ")"
        for label in ("replaced", "reinforced", "added")
    )


def test_dev_rule_edits_hold_their_scores() -> None:
    directory = _corpus()
    _labelled("pairs")
    score = score_edits(pair_cases(directory, "dev"))
    assert score.accuracy >= DEV_EDITS, (_edits(score), score.wrong[:5])
    assert score.of("replaced") >= DEV_REPLACED, (_edits(score), score.wrong[:5])
    assert score.of("reinforced") >= DEV_REINFORCED, (_edits(score), score.wrong[:5])
    assert score.of("added") >= DEV_ADDED, (_edits(score), score.wrong[:5])


def test_dev_lines_hold_their_scores() -> None:
    directory = _corpus()
    _labelled("lines")
    score = score_signals(line_cases(directory, "dev"))
    assert score.precision >= DEV_LINES_PRECISION, (score.precision, score.false_alarms[:5])
    assert score.recall >= DEV_LINES_RECALL, (score.recall, score.misses[:5])


def test_real_phrasing_eval_sets_hold_their_scores() -> None:
    evaluation = _corpus().parent / "eval"
    edits = score_edits(load(evaluation, "contradictions_real_dev.jsonl"))
    signals = score_signals(load(evaluation, "signals_real_dev.jsonl"))
    assert edits.accuracy >= EVAL_EDITS, (_edits(edits), edits.wrong[:5])
    assert signals.precision >= EVAL_SIGNALS_PRECISION, signals.false_alarms[:5]
    assert signals.recall >= EVAL_SIGNALS_RECALL, signals.misses[:5]


def test_validation_half_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    directory = _corpus()
    _labelled("pairs")
    dev, val = score_edits(pair_cases(directory, "dev")), score_edits(pair_cases(directory, "val"))
    lines = score_signals(line_cases(directory, "val")) if read_labels("lines") else None
    with capsys.disabled():
        print(f"\n[dev] rule edits {_edits(dev)}\n[val] rule edits {_edits(val)}")
        if lines is not None:
            print(f"[val] lines P {lines.precision:.3f} R {lines.recall:.3f}")
    if sum(val.total.values()):
        assert val.accuracy >= VAL_FLOOR
