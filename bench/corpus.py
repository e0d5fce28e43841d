"""Scores of the detectors on the labelled real corpus (issue 29), split dev / val by repository.

    python -m bench.corpus [--split dev|val] [--dir DIR] [--show N]

The corpus is built by ``tools/corpus/`` from public repositories' agent instruction files and
labelled by hand (``docs/labelling-guide.md``). Its text comes from those repositories, so it is
kept out of this repository: the sets are looked up in ``$MAESTRO_CORPUS_DIR``, then
``../shared/corpus`` and ``../corpus`` beside the checkout. Tune on ``dev`` only; ``val`` is
reported, not tuned on.

Scoring is that of ``shared/eval/README.md``: a detected signal is a true positive when it
matches a not yet matched expected one on confidence and every ``fact_contains`` fragment;
an edit is right when the action (and, unless ``added``, the target) matches.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro_memory.core.contradiction import classify
from maestro_memory.core.signals import DetectedSignal, detect_signals

ROOT = Path(__file__).resolve().parents[1]


def corpus_dir() -> Path | None:
    """The folder holding the corpus sets, or None when none is present."""
    env = os.environ.get("MAESTRO_CORPUS_DIR")
    candidates = [Path(env)] if env else []
    candidates += [ROOT.parent / "shared" / "corpus", ROOT.parent / "corpus"]
    for path in candidates:
        if (path / "signals_dev.jsonl").is_file():
            return path
    return None


def load(directory: Path, name: str) -> list[dict[str, Any]]:
    path = directory / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def true_positives(found: list[DetectedSignal], expected: list[tuple[float, list[str]]]) -> int:
    used: set[int] = set()
    for signal in found:
        for i, (confidence, fragments) in enumerate(expected):
            if i in used or signal.confidence != confidence:
                continue
            if all(f.lower() in signal.fact.lower() for f in fragments):
                used.add(i)
                break
    return len(used)


@dataclass
class SignalScore:
    tp: int = 0
    detected: int = 0
    expected: int = 0
    tp_inferred: int = 0  # expected at 0.5 (context inference) and found
    expected_inferred: int = 0
    wrong_category: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / max(self.detected, 1)

    @property
    def recall(self) -> float:
        return self.tp / max(self.expected, 1)

    @property
    def recall_inferred(self) -> float:
        return self.tp_inferred / max(self.expected_inferred, 1)


def score_signals(cases: list[dict[str, Any]]) -> SignalScore:
    score = SignalScore()
    for case in cases:
        found = detect_signals(case["user"])
        wanted = [(s["confidence"], s["fact_contains"]) for s in case["signals"]]
        tp = true_positives(found, wanted)
        inferred = [w for w in wanted if w[0] == 0.5]
        score.tp += tp
        score.detected += len(found)
        score.expected += len(wanted)
        score.expected_inferred += len(inferred)
        score.tp_inferred += true_positives(found, inferred)
        for signal, want in zip(found, case["signals"], strict=False):
            if signal.category not in want["categories"]:
                score.wrong_category += 1
        if tp < len(wanted):
            score.misses.append(
                f"{case['user']!r}\n    want {wanted}\n    got  "
                f"{[(s.confidence, s.fact) for s in found]}"
            )
        if len(found) > tp:
            score.false_alarms.append(
                f"{case['user']!r}\n    want {wanted}\n    got  "
                f"{[(s.confidence, s.fact) for s in found]}"
            )
    return score


@dataclass
class EditScore:
    total: Counter[str] = field(default_factory=Counter)
    right: Counter[str] = field(default_factory=Counter)
    # Cases linked to their target instead (may replace: both kept, in review), by the label
    # expected: never right, but nothing lost where a replacement was due.
    linked: Counter[str] = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return sum(self.right.values()) / max(sum(self.total.values()), 1)

    def of(self, label: str) -> float:
        return self.right[label] / max(self.total[label], 1)


def score_edits(cases: list[dict[str, Any]]) -> EditScore:
    score = EditScore()
    for case in cases:
        new = case["new"]
        existing = [
            (str(i), e["text"])
            for i, e in enumerate(case["existing"])
            if e["category"] == new["category"]
        ]
        verdict = classify(new["text"], existing)
        expect = case["expect"]
        ok = verdict.action == expect and (
            verdict.target is None if expect == "added" else verdict.target == str(case["target"])
        )
        score.total[expect] += 1
        score.right[expect] += ok
        score.linked[expect] += verdict.action == "linked" and verdict.target == str(
            case.get("target")
        )
        if not ok:
            score.wrong.append(
                f"[{expect} -> {verdict.action}] {case['source']}\n"
                f"    OLD {case['existing'][0]['text']!r}\n    NEW {new['text']!r}\n"
                f"    why {verdict.reason}"
            )
    return score


def report(directory: Path, split: str, show: int) -> str:
    sig = score_signals(load(directory, f"signals_{split}.jsonl"))
    edits = score_edits(load(directory, f"contradictions_{split}.jsonl"))
    lines = [
        f"[{split}] signals: P {sig.precision:.3f} R {sig.recall:.3f} "
        f"(tp {sig.tp}, detected {sig.detected}, expected {sig.expected}); "
        f"inferred (0.5) R {sig.recall_inferred:.3f} "
        f"({sig.tp_inferred}/{sig.expected_inferred}); wrong category {sig.wrong_category}",
        f"[{split}] edits: {edits.accuracy:.3f} overall; "
        + ", ".join(
            f"{label} {edits.of(label):.3f} ({edits.right[label]}/{edits.total[label]})"
            for label in ("replaced", "reinforced", "added")
        ),
    ]
    if show:
        lines += ["", "signal misses:", *sig.misses[:show]]
        lines += ["", "signal false alarms:", *sig.false_alarms[:show]]
        lines += ["", "wrong edits:", *edits.wrong[:show]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.corpus", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--split", choices=("dev", "val"), default="dev")
    parser.add_argument("--dir", type=Path, help="the corpus folder (default: see above)")
    parser.add_argument("--show", type=int, default=0, help="print this many failures of each kind")
    args = parser.parse_args(argv)
    directory = args.dir or corpus_dir()
    if directory is None:
        parser.error("no corpus found: set MAESTRO_CORPUS_DIR or pass --dir")
    print(report(directory, args.split, args.show))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
