"""The real corpus of issue 29 (public instruction files and their histories), scored as
``shared/eval/README.md`` says; see ``docs/labelling-guide.md`` and ``bench/corpus.py``.

The corpus text is the public repositories' own, so it is not part of this repository: the tests
skip when no corpus folder is found (``$MAESTRO_CORPUS_DIR``, ``../shared/corpus``,
``../corpus``). The dev half holds the scores reached when the rules were tuned on it, so a
regression fails; the validation half, never tuned on, is reported and held to a floor only.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus import corpus_dir, load, score_edits, score_signals

# What the rules reach on the dev half (issue 29, measured when this test was written); a
# change that scores lower is a regression. Raise these when the rules improve.
DEV_SIGNALS_PRECISION = 0.93
DEV_SIGNALS_RECALL = 0.60
DEV_EDITS = 0.77
DEV_REPLACED = 0.67
DEV_REINFORCED = 0.78
DEV_ADDED = 1.0
# The validation half is reported; only a floor far below the dev scores is asserted.
VAL_FLOOR = 0.3


def _dir() -> Path:
    directory = corpus_dir()
    if directory is None:
        pytest.skip("the real corpus is not present (set MAESTRO_CORPUS_DIR)")
    return directory


def test_dev_signals_hold_their_scores() -> None:
    score = score_signals(load(_dir(), "signals_dev.jsonl"))
    assert score.precision >= DEV_SIGNALS_PRECISION, (score.precision, score.false_alarms[:5])
    assert score.recall >= DEV_SIGNALS_RECALL, (score.recall, score.misses[:5])


def test_dev_edits_hold_their_scores() -> None:
    score = score_edits(load(_dir(), "contradictions_dev.jsonl"))
    assert score.accuracy >= DEV_EDITS, (score.accuracy, score.wrong[:5])
    assert score.of("replaced") >= DEV_REPLACED, score.wrong[:5]
    assert score.of("reinforced") >= DEV_REINFORCED, score.wrong[:5]
    assert score.of("added") >= DEV_ADDED, score.wrong[:5]


def test_validation_half_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    directory = _dir()
    signals = score_signals(load(directory, "signals_val.jsonl"))
    edits = score_edits(load(directory, "contradictions_val.jsonl"))
    with capsys.disabled():
        print(
            f"\n[val] signals P {signals.precision:.3f} R {signals.recall:.3f}; edits "
            f"{edits.accuracy:.3f} (replaced {edits.of('replaced'):.3f}, reinforced "
            f"{edits.of('reinforced'):.3f}, added {edits.of('added'):.3f})"
        )
    assert min(signals.precision, signals.recall, edits.accuracy) >= VAL_FLOOR
