"""The committed labels joined with the shared corpus: the labelled sets the gates score.

    python -m bench.labels show pairs|lines|prompts [--split dev|val] [--kind hunk|coexist]
                                                    [--limit N] [--offset N] [--all]
    python -m bench.labels check
    python -m bench.labels counts

The corpus text (``../shared/corpus``: public repositories' instruction files, their histories
and people's prompts to coding agents) is not ours to commit, so only the labels live here:
``tests/data/labels/{pairs,lines,prompts}.tsv``, one candidate a line, ``<id>\\t<label>``, ids
computed from the candidate's own fields (``pair_id``, ``line_id``; a prompt has its own ``id``),
so a label survives any reordering of the candidates files. Labels are made by a person (or a
helper) reading each case by ``docs/labelling-guide.md`` and ``docs/prompt-labelling.md``, never
by running a detector. ``show`` prints the candidates in a fixed order (by id within split and
kind) with the unlabelled ones first, for labelling.

Label syntax:

- pairs: ``R`` replaced, ``F`` reinforced, ``A`` added, ``x`` dropped (not a rule);
- lines: ``-`` no signal, ``x`` dropped, or signals joined by `` ; ``, each
  ``<confidence>|<category set letter>|<fragment>[,<fragment>]`` (the letters are
  ``CATEGORY_SETS``; every fragment must occur in the line, case-insensitive);
- prompts: ``<class>\\t<signals>`` where class is one of ``PROMPT_CLASSES`` and signals is
  ``-`` or signals as for lines with a kind letter after the category set:
  ``<confidence>|<set>|<r or f>|<fragments>`` (``r`` a rule or preference, ``f`` a durable fact).

``shared_corpus()`` finds the corpus; when ``CI`` is set and it is missing, that is an error, not
a skip: a gate that matters must not skip in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LABELS_DIR = ROOT / "tests" / "data" / "labels"

Case = dict[str, Any]

ACTIONS = {"R": "replaced", "F": "reinforced", "A": "added"}
CATEGORY_SETS = {
    "q": ["quality_rule", "user_preference", "project_context"],
    "u": ["user_preference", "quality_rule"],
    "a": ["architecture_decision", "quality_rule", "project_context"],
    "p": ["project_context", "architecture_decision", "quality_rule"],
    "t": ["project_context", "architecture_decision", "user_preference", "quality_rule"],
}
# What a prompt is, as a whole (docs/prompt-labelling.md). A prompt of any class may still carry
# durable signals in the person's own words (a task that also states a rule).
PROMPT_CLASSES = (
    "durable",  # it states a lasting rule, preference or project fact, and little else
    "task",  # a one-off task or task specification
    "question",
    "bug",  # a bug report or a description of wrong behaviour
    "scoped",  # an order scoped to the current change ("only this file", "for now")
    "pasted",  # mostly pasted or relayed text (logs, errors, docs, someone else's note)
    "narration",  # chat: thanks, "continue", "I don't see it", feelings
    "skip",  # cannot be judged (non-English, empty, unreadable)
)
SIGNAL_KINDS = {"r": "rule", "f": "fact"}


class LabelError(Exception):
    """A label file that does not fit the corpus or the syntax."""


class CorpusMissing(Exception):
    """The shared corpus is not beside the checkout."""


def pair_id(candidate: Case) -> str:
    key = [candidate["source"], candidate["kind"], candidate["old"], candidate["new"]]
    return _digest(key)


def line_id(candidate: Case) -> str:
    return _digest([candidate["source"], candidate["user"]])


def _digest(key: list[Any]) -> str:
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()[:16]


def shared_corpus(required: bool | None = None) -> Path | None:
    """``$MAESTRO_SHARED_DIR/corpus``, else ``../shared/corpus`` beside the checkout.

    Missing: None, or ``CorpusMissing`` when required (by default: when ``CI`` is set)."""
    env = os.environ.get("MAESTRO_SHARED_DIR")
    base = Path(env) if env else ROOT.parent / "shared"
    path = base / "corpus"
    if (path / "instruction-pairs.jsonl").is_file():
        return path
    if required is None:
        required = bool(os.environ.get("CI"))
    if required:
        raise CorpusMissing(f"the shared corpus is missing: {path} (set MAESTRO_SHARED_DIR)")
    return None


@cache
def _candidates(directory: Path, name: str) -> tuple[Case, ...]:
    text = (directory / name).read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines() if line)


def candidates(kind: str, directory: Path) -> dict[str, Case]:
    """Every candidate of a kind, by id."""
    if kind == "pairs":
        return {pair_id(c): c for c in _candidates(directory, "instruction-pairs.jsonl")}
    if kind == "lines":
        return {line_id(c): c for c in _candidates(directory, "instruction-lines.jsonl")}
    if kind == "prompts":
        return {str(c["id"]): c for c in _candidates(directory, "prompts.jsonl")}
    raise ValueError(kind)


def read_labels(kind: str, labels_dir: Path = LABELS_DIR) -> dict[str, str]:
    """``id -> label`` of one label file (empty when the file does not exist yet)."""
    path = labels_dir / f"{kind}.tsv"
    if not path.is_file():
        return {}
    labels: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        ident, sep, label = line.partition("\t")
        if not sep or not label.strip():
            raise LabelError(f"{path}:{n}: expected '<id>\\t<label>'")
        if ident in labels:
            raise LabelError(f"{path}:{n}: {ident} labelled twice")
        labels[ident] = label.strip()
    return labels


def _signals(label: str, text: str, where: str, with_kind: bool) -> list[Case]:
    if label == "-":
        return []
    signals = []
    for part in label.split(" ; "):
        fields = part.split("|", 3 if with_kind else 2)
        if len(fields) != (4 if with_kind else 3):
            raise LabelError(f"{where}: bad signal {part!r}")
        confidence, cats, *rest = fields
        kind = rest[0] if with_kind else None
        fragments = [f.strip().lower() for f in rest[-1].split(",") if f.strip()]
        if cats not in CATEGORY_SETS or (with_kind and kind not in SIGNAL_KINDS):
            raise LabelError(f"{where}: bad category set or kind in {part!r}")
        if float(confidence) not in (0.5, 0.7, 0.9, 1.0):
            raise LabelError(f"{where}: confidence {confidence} is not of the spec's mapping")
        absent = [f for f in fragments if f not in text.lower()]
        if absent or not fragments:
            raise LabelError(f"{where}: fragments {absent or fragments} not in the text")
        signal: Case = {
            "confidence": float(confidence),
            "categories": CATEGORY_SETS[cats],
            "fact_contains": fragments,
        }
        if kind is not None:
            signal["kind"] = SIGNAL_KINDS[kind]
        signals.append(signal)
    return signals


def pair_cases(directory: Path, split: str | None = None) -> list[Case]:
    """The labelled rule edits as ``contradictions`` cases (``shared/eval/README.md``)."""
    pool = candidates("pairs", directory)
    cases = []
    for ident, label in read_labels("pairs").items():
        cand = _known(pool, ident, "pairs")
        if label == "x" or (split and cand["split"] != split):
            continue
        if label not in ACTIONS:
            raise LabelError(f"pairs {ident}: unknown label {label!r}")
        action = ACTIONS[label]
        cases.append(
            {
                "id": ident,
                "existing": [
                    {"category": "project_context", "text": cand["old"], "confidence": 0.9}
                ],
                "new": {"category": "project_context", "text": cand["new"], "confidence": 0.9},
                "expect": action,
                "target": None if action == "added" else 0,
                "source": cand["source"],
                "kind": cand["kind"],
                "split": cand["split"],
            }
        )
    return cases


def line_cases(directory: Path, split: str | None = None) -> list[Case]:
    """The labelled instruction-file lines as ``signals`` cases."""
    pool = candidates("lines", directory)
    cases = []
    for ident, label in read_labels("lines").items():
        cand = _known(pool, ident, "lines")
        if label == "x" or (split and cand["split"] != split):
            continue
        signals = _signals(label, cand["user"], f"lines {ident}", with_kind=False)
        cases.append(
            {
                "id": ident,
                "user": cand["user"],
                "signals": signals,
                "source": cand["source"],
                "split": cand["split"],
            }
        )
    return cases


def prompt_cases(directory: Path, split: str | None = None) -> list[Case]:
    """The labelled prompts: ``signals`` cases plus the prompt's ``class``."""
    pool = candidates("prompts", directory)
    cases = []
    for ident, label in read_labels("prompts").items():
        cand = _known(pool, ident, "prompts")
        klass, _, signals_label = label.partition("\t")
        klass = klass.strip()
        if klass not in PROMPT_CLASSES:
            raise LabelError(f"prompts {ident}: unknown class {klass!r}")
        if klass == "skip" or (split and cand["split"] != split):
            continue
        signals = _signals(
            signals_label.strip() or "-", cand["text"], f"prompts {ident}", with_kind=True
        )
        cases.append(
            {
                "id": ident,
                "user": cand["text"],
                "class": klass,
                "signals": signals,
                "source": cand["source"],
                "split": cand["split"],
            }
        )
    return cases


def _known(pool: dict[str, Case], ident: str, kind: str) -> Case:
    try:
        return pool[ident]
    except KeyError:
        raise LabelError(f"{kind}: {ident} is not a candidate of the corpus") from None


def _show(kind: str, directory: Path, args: argparse.Namespace) -> None:
    pool = candidates(kind, directory)
    labels = read_labels(kind)
    rows = [
        (ident, c)
        for ident, c in sorted(pool.items())
        if (not args.split or c["split"] == args.split)
        and (not args.kind or c.get("kind") == args.kind)
        and (args.all or ident not in labels)
    ]
    for ident, c in rows[args.offset : args.offset + args.limit]:
        if kind == "pairs":
            print(f"{ident}\t[{c['kind']} {c['split']} {c['source']}]")
            print(f"  OLD: {c['old']}\n  NEW: {c['new']}")
        elif kind == "lines":
            print(f"{ident}\t[{c['split']} {c['source']}]\n  {c['user']}")
        else:
            lang = f" {c['lang']}" if c.get("lang") else ""
            print(f"{ident}\t[{c['split']} {c['source']}{lang}]")
            print("  " + str(c["text"]).replace("\n", "\n  "))
        if ident in labels:
            print(f"  LABEL: {labels[ident]}")
        print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.labels", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print candidates for labelling")
    show.add_argument("set", choices=("pairs", "lines", "prompts"))
    show.add_argument("--split", choices=("dev", "val"))
    show.add_argument("--kind", choices=("hunk", "coexist"))
    show.add_argument("--limit", type=int, default=25)
    show.add_argument("--offset", type=int, default=0)
    show.add_argument("--all", action="store_true", help="labelled ones too")
    sub.add_parser("check", help="every label file parses and fits the corpus")
    sub.add_parser("counts", help="how many labels of each kind and split")
    args = parser.parse_args(argv)
    directory = shared_corpus(required=True)
    assert directory is not None
    if args.command == "show":
        _show(args.set, directory, args)
        return 0
    sets = {
        "pairs": (pair_cases(directory), "expect"),
        "lines": (line_cases(directory), None),
        "prompts": (prompt_cases(directory), "class"),
    }
    for name, (cases, field) in sets.items():
        by: Counter[str] = Counter()
        for case in cases:
            key = case[field] if field else ("signal" if case["signals"] else "none")
            by[f"{case['split']} {key}"] += 1
        total = len(read_labels(name))
        print(
            f"{name}: {total} labels, {len(cases)} cases: "
            + ", ".join(f"{k} {v}" for k, v in sorted(by.items()))
        )
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except (LabelError, CorpusMissing) as exc:
        print(f"bench.labels: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
