"""Turn labelled candidates into the evaluation sets, split by repository into dev and val.

    python tools/corpus/assemble.py pairs CANDIDATES.jsonl LABELS.txt OUT_DIR
    python tools/corpus/assemble.py lines CANDIDATES.jsonl LABELS.txt [...] OUT_DIR

A labels file has one line per candidate, ``<index> <label>`` with the candidate's 0-based
line number in the candidates file:

- pairs: ``R`` (replaced), ``F`` (reinforced: the same rule reworded), ``A`` (added: two
  different rules), ``x`` (dropped: not a rule, a code line, a cut-off fragment);
- lines: ``-`` (no signal), ``x`` (dropped), or signals joined by `` ; ``, each
  ``<confidence>|<categories>|<fragment>[,<fragment>]`` where categories is one letter of
  ``CATEGORY_SETS``.

For lines, several (candidates, labels) file pairs may be given before OUT_DIR. Output, in
the formats of ``shared/eval/README.md`` (plus ``split``): ``contradictions_dev.jsonl`` /
``contradictions_val.jsonl`` or ``signals_dev.jsonl`` / ``signals_val.jsonl``. Every fragment
must occur in its line (case-insensitive) and every candidate must carry a label, or nothing
is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

Case = dict[str, object]

ACTIONS = {"R": "replaced", "F": "reinforced", "A": "added"}
CATEGORY_SETS = {
    "q": ["quality_rule", "user_preference", "project_context"],
    "u": ["user_preference", "quality_rule"],
    "a": ["architecture_decision", "quality_rule", "project_context"],
    "p": ["project_context", "architecture_decision", "quality_rule"],
    "t": ["project_context", "architecture_decision", "user_preference", "quality_rule"],
}


def _read_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _read_labels(path: Path, count: int) -> dict[int, str]:
    labels: dict[int, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        index, _, label = line.partition(" ")
        i = int(index)
        if not 0 <= i < count or i in labels:
            raise SystemExit(f"{path}:{n}: bad or repeated index {i}")
        labels[i] = label.strip()
    return labels


def pair_cases(candidates: list[Case], labels: dict[int, str]) -> list[Case]:
    """Labelled pairs only (a pairs labels file may leave candidates out: not chosen)."""
    cases = []
    for i, label in sorted(labels.items()):
        if label == "x":
            continue
        if label not in ACTIONS:
            raise SystemExit(f"candidate {i}: unknown label {label!r}")
        cand = candidates[i]
        action = ACTIONS[label]
        cases.append(
            {
                "existing": [
                    {"category": "project_context", "text": cand["old"], "confidence": 0.9}
                ],
                "new": {"category": "project_context", "text": cand["new"], "confidence": 0.9},
                "expect": action,
                "target": None if action == "added" else 0,
                "source": cand["source"],
                "split": cand["split"],
            }
        )
    return cases


def line_cases(candidates: list[Case], labels: dict[int, str]) -> list[Case]:
    missing = [i for i in range(len(candidates)) if i not in labels]
    if missing:
        raise SystemExit(f"lines without a label: {missing[:10]}")
    cases = []
    for i, cand in enumerate(candidates):
        label = labels[i]
        if label == "x":
            continue
        signals = []
        if label != "-":
            for part in label.split(" ; "):
                confidence, cats, fragments = part.split("|", 2)
                frags = [f.strip().lower() for f in fragments.split(",") if f.strip()]
                text = str(cand["user"]).lower()
                absent = [f for f in frags if f not in text]
                if absent or not frags:
                    raise SystemExit(f"line {i}: fragments {absent or frags} not in {text!r}")
                signals.append(
                    {
                        "confidence": float(confidence),
                        "categories": CATEGORY_SETS[cats],
                        "fact_contains": frags,
                    }
                )
        row = {"user": cand["user"], "signals": signals}
        cases.append({**row, "source": cand["source"], "split": cand["split"]})
    return cases


def write_split(out_dir: Path, stem: str, cases: list[dict[str, object]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split in ("dev", "val"):
        rows = [c for c in cases if c["split"] == split]
        with (out_dir / f"{stem}_{split}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{stem}_{split}.jsonl: {len(rows)} cases", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] not in ("pairs", "lines") or len(argv) % 2 != 0:
        raise SystemExit(__doc__)
    kind, files, out_dir = argv[0], argv[1:-1], Path(argv[-1])
    cases: list[dict[str, object]] = []
    for cand_path, label_path in zip(files[::2], files[1::2], strict=True):
        candidates = _read_jsonl(Path(cand_path))
        labels = _read_labels(Path(label_path), len(candidates))
        build = pair_cases if kind == "pairs" else line_cases
        cases.extend(build(candidates, labels))
    write_split(out_dir, "contradictions" if kind == "pairs" else "signals", cases)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
