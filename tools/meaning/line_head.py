"""Measure a linear head over the meaning model on the labelled instruction-file lines.

    .venv/bin/python tools/meaning/line_head.py [--val]

Asks one question of issue 35's "a small linear head is fine": does a logistic regression over
a line's vector (``core/meaning``) plus what the pattern detector found tell a durable rule or
fact from reference text better than the patterns alone? Trained on the dev half only; scored
there by 5-fold cross-validation grouped by repository owner (a repository's lines are never
both trained and scored on), at the signal level of ``bench.corpus`` (confidence and every
``fact_contains`` fragment must match). Two uses of the head are scored:

* *gate*: a 0.5 (inferred) signal the detector found is dropped when the head's probability is
  below ``lo``;
* *add*: a line where the detector found nothing becomes one 0.5 fact, the whole line, when the
  probability is ``hi`` or more.

``--val`` also trains on all of dev and scores the val half once (the held-out estimate: read
it at the end, never tune on it). Nothing here is used at run time; the numbers decide whether
the head is worth shipping.
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.corpus import true_positives  # noqa: E402
from bench.labels import line_cases, shared_corpus  # noqa: E402
from maestro_memory.core.lexicon import normalise  # noqa: E402
from maestro_memory.core.meaning import embed  # noqa: E402
from maestro_memory.core.signals import DetectedSignal, detect_signals  # noqa: E402

FOLDS = 5
STEPS = 3000
RATE = 2.0
POLICIES = ((0.0, 2.0), (0.3, 2.0), (0.5, 2.0), (0.0, 0.8), (0.0, 0.7), (0.3, 0.8), (0.4, 0.7))


def features(cases: list[dict[str, Any]]) -> tuple[Any, list[list[DetectedSignal]]]:
    """Each line's vector, then what the detector found (any; strongest confidence), as rows."""
    found = [detect_signals(c["user"]) for c in cases]
    form = np.array(
        [
            [bool(f), max((s.confidence for s in f), default=0.0) >= 0.9, len(c["user"]) / 200]
            for c, f in zip(cases, found, strict=True)
        ],
        dtype=np.float64,
    )
    return np.hstack([embed([c["user"] for c in cases]), form]), found


def fit(x: Any, y: Any, l2: float) -> Any:
    """Logistic regression by plain gradient descent: deterministic, no library."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-xb @ w))
        w -= RATE * (xb.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0] / len(y))
    return w


def predict(w: Any, x: Any) -> Any:
    return 1 / (1 + np.exp(-np.hstack([x, np.ones((len(x), 1))]) @ w))


def score(
    cases: list[dict[str, Any]], found: list[list[DetectedSignal]], p: Any, lo: float, hi: float
) -> tuple[float, float]:
    tp = detected = expected = 0
    for case, signals, prob in zip(cases, found, p, strict=True):
        kept = [s for s in signals if prob >= lo or s.confidence != 0.5]
        if not kept and prob >= hi:
            kept = [DetectedSignal(normalise(case["user"]), "project_context", 0.5)]
        wanted = [(s["confidence"], s["fact_contains"]) for s in case["signals"]]
        tp += true_positives(kept, wanted)
        detected += len(kept)
        expected += len(wanted)
    return tp / max(detected, 1), tp / max(expected, 1)


def report(name: str, cases: list[dict[str, Any]], found: Any, p: Any) -> None:
    y = np.array([bool(c["signals"]) for c in cases])
    print(f"  {name}: line accuracy {((p >= 0.5) == y).mean():.3f}")
    for lo, hi in POLICIES:
        precision, recall = score(cases, found, p, lo, hi)
        what = "patterns alone" if (lo, hi) == (0.0, 2.0) else f"gate < {lo}, add >= {hi}"
        print(f"    {what:24} P {precision:.3f}  R {recall:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--val", action="store_true", help="score the val half once, too")
    parser.add_argument("--l2", type=float, default=0.1)
    args = parser.parse_args()
    corpus = shared_corpus(required=True)
    assert corpus is not None
    dev = line_cases(corpus, "dev")
    x, found = features(dev)
    y = np.array([1.0 if c["signals"] else 0.0 for c in dev])
    owner = np.array([zlib.crc32(c["source"].split("/")[0].encode()) % FOLDS for c in dev])
    p = np.zeros(len(dev))
    for k in range(FOLDS):
        w = fit(x[owner != k], y[owner != k], args.l2)
        p[owner == k] = predict(w, x[owner == k])
    print(f"dev: {len(dev)} lines, {FOLDS}-fold by repository owner, l2 {args.l2}")
    report("dev (cross-validated)", dev, found, p)
    if args.val:
        val = line_cases(corpus, "val")
        xv, found_v = features(val)
        report("val (trained on all of dev)", val, found_v, predict(fit(x, y, args.l2), xv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
