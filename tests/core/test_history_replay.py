"""The history replay (``bench/replay.py``): real instruction files' histories saved into a
memory line by line, the final memory compared with the final file. Needs the shared corpus
(skips locally without it, fails in CI: ``bench.labels.shared_corpus``).

The floors hold what the memory reaches now on the dev half (raise them as it improves); issue
34's targets (0 wrong merges, 95 % of edited-away rules gone, 99 % of the final rules served) are
printed beside them. The val half is reported only.
"""

from __future__ import annotations

import pytest

from bench.labels import shared_corpus
from bench.replay import report, run

DEV_SERVED = 0.99  # 1.000 since a line never replaces one its file still holds (0.980 before)
DEV_GONE = 0.63  # 0.638 since a wider restatement keeps the newer wording (0.617 before)
DEV_WRONG_MERGES = 0  # issue 34's target; 105 before the held lines


def test_dev_histories_hold_their_scores(capsys: pytest.CaptureFixture[str]) -> None:
    corpus = shared_corpus()
    if corpus is None:
        pytest.skip("the shared corpus is not present (set MAESTRO_SHARED_DIR)")
    score = run(corpus, "dev")
    with capsys.disabled():
        print("\n" + report(score, "dev"))
    assert score.files > 100 and score.final_rules > 1000  # the corpus was read
    assert score.served_rate >= DEV_SERVED, score.lost[:5]
    assert score.gone_rate >= DEV_GONE, score.kept[:5]
    assert score.wrong_merges <= DEV_WRONG_MERGES, score.merged[:5]
