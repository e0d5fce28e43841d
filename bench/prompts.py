"""What real prompts leave behind (issue 35): the labelled prompts through the prompt door.

    python -m bench.prompts [--split dev|val] [--show N]

Each labelled prompt (``bench.labels.prompt_cases``: people's messages to coding agents from
``../shared/corpus/prompts.jsonl``, labelled by ``docs/prompt-labelling.md``) is run through
``Memory.detect_semantic_signals`` — what the prompt hooks of every tool, ``maestroctl detect``
and the daemon call — on an empty memory, and what it kept is compared with the labels:

- *kept*: every entry the prompt left in ``semantic.md``;
- *served*: kept and put in front of the model (an active entry in the always or relevant band;
  a proposal waiting for confirmation is kept, not served);
- *instructions*: served as the user's standing instructions (``core/context.py``);
- a kept entry is *right* when it matches a labelled signal of the prompt (it contains every
  ``fact_contains`` fragment, case-insensitive); *captured* signals are the labelled ones some
  kept entry matches.

The measures are issue 35's targets: served precision, instruction precision, explicit rules
(labelled rules at 0.9/1.0) served and captured, durable facts captured, and the share of
ordinary prompts (no labelled signal) that leave anything served.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from maestro_memory.core.context import HIGH, INSTRUCTION_MIN, MEDIUM
from maestro_memory.core.memory import Memory
from maestro_memory.core.model import Entry

from .labels import prompt_cases, shared_corpus

TODAY = "2026-12-04"


def served(entry: Entry) -> bool:
    return entry.state == "active" and entry.confidence >= MEDIUM


def instruction(entry: Entry) -> bool:
    return (
        served(entry)
        and entry.source is not None
        and entry.original_confidence >= INSTRUCTION_MIN
        and entry.confidence > HIGH
    )


def _matches(entry: Entry, signal: dict[str, Any]) -> bool:
    text = entry.text.lower()
    return all(fragment in text for fragment in signal["fact_contains"])


@dataclass
class PromptScore:
    prompts: int = 0
    kept: int = 0
    kept_right: int = 0
    served: int = 0
    served_right: int = 0
    instructions: int = 0
    instructions_right: int = 0  # matching a labelled *rule*
    rules: int = 0  # labelled explicit rules (kind rule, confidence >= 0.9)
    rules_served: int = 0
    rules_captured: int = 0
    facts: int = 0  # labelled durable facts
    facts_captured: int = 0
    ordinary: int = 0  # prompts with no labelled signal
    ordinary_leaving: int = 0  # ... that left anything served
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def rows(self) -> list[tuple[str, int, int]]:
        return [
            ("served that is a real rule or fact", self.served_right, self.served),
            ("standing instructions that are rules", self.instructions_right, self.instructions),
            ("explicit rules served", self.rules_served, self.rules),
            ("explicit rules captured (served or proposed)", self.rules_captured, self.rules),
            ("durable facts captured", self.facts_captured, self.facts),
            ("ordinary prompts leaving anything served", self.ordinary_leaving, self.ordinary),
            ("kept that is right", self.kept_right, self.kept),
        ]


def score_prompts(cases: list[dict[str, Any]]) -> PromptScore:
    score = PromptScore()
    for case in cases:
        memory = Memory.load({}, today=TODAY)
        memory.detect_semantic_signals(case["user"])
        entries = memory.semantic_entries()
        signals = case["signals"]
        score.prompts += 1
        right = [e for e in entries if any(_matches(e, s) for s in signals)]
        score.kept += len(entries)
        score.kept_right += len(right)
        score.served += sum(served(e) for e in entries)
        score.served_right += sum(served(e) for e in right)
        rules = [s for s in signals if s["kind"] == "rule" and s["confidence"] >= 0.9]
        facts = [s for s in signals if s["kind"] == "fact"]
        for e in entries:
            if instruction(e):
                score.instructions += 1
                score.instructions_right += any(_matches(e, s) for s in rules)
        for s in rules:
            hits = [e for e in entries if _matches(e, s)]
            score.rules += 1
            score.rules_captured += bool(hits)
            score.rules_served += any(served(e) for e in hits)
        for s in facts:
            score.facts += 1
            score.facts_captured += any(_matches(e, s) for e in entries)
        if not signals:
            score.ordinary += 1
            score.ordinary_leaving += any(served(e) for e in entries)
        wrong = [e for e in entries if e not in right and served(e)]
        if wrong:
            score.wrong.append(
                f"{case['id']} [{case['class']}]: {[(e.confidence, e.text) for e in wrong]}"
            )
        missed = [s for s in signals if not any(_matches(e, s) for e in entries)]
        if missed:
            score.missed.append(
                f"{case['id']}: want {[(s['confidence'], s['fact_contains']) for s in missed]}"
                f" got {[(e.confidence, e.text) for e in entries]}"
            )
    return score


def report(split: str, show: int) -> str:
    directory = shared_corpus(required=True)
    assert directory is not None
    score = score_prompts(prompt_cases(directory, split))
    lines = [f"[{split}] {score.prompts} labelled prompts"]
    for name, n, d in score.rows():
        lines.append(f"  {name}: {n}/{d} = {n / max(d, 1):.3f}")
    if show:
        lines += ["", "served but not a labelled signal:", *score.wrong[:show]]
        lines += ["", "labelled signals not captured:", *score.missed[:show]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.prompts", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--split", choices=("dev", "val"), default="dev")
    parser.add_argument("--show", type=int, default=0, help="print this many of each failure")
    args = parser.parse_args(argv)
    print(report(args.split, args.show))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
