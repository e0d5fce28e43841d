"""Verdict-identity check for ``core.contradiction.classify`` over a large generated corpus.

A change to the contradiction rules must show which verdicts it changes and that each class of
change is intended. This script builds a fixed corpus of rule texts (generated from templates
with a seeded random generator, plus the texts of the contradiction evaluation sets when they are
present), classifies every ordered pair of them, and either records the verdicts or compares
them with a recording made before the change:

    python -m bench.verdicts record before.json       # on the old code
    python -m bench.verdicts compare before.json      # on the new code: changes by class
    python -m bench.verdicts timing                   # classify cost per save, 200 per category

The corpus depends only on this file and the evaluation sets, never on the code under test, so
the same pairs are judged before and after. ``compare`` prints, for each class of change
(``added -> replaced (changed value)`` …: the actions and the kind of reason), the count and a
few examples with both reasons.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from maestro_memory.core.contradiction import classify

EVAL_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
SEED = 20261203

TOOLS = {
    "package manager": ["npm", "pnpm", "yarn", "bun", "uv", "pip", "poetry"],
    "test runner": ["jest", "vitest", "pytest", "mocha", "playwright"],
    "linter": ["eslint", "ruff", "flake8", "biome"],
    "formatter": ["prettier", "black", "dprint"],
    "database": ["postgres", "sqlite", "mysql", "redis"],
    "http client": ["axios", "fetch", "httpx", "requests"],
}
SUBJECTS = [
    "the API layer",
    "unit tests",
    "commit messages",
    "database migrations",
    "the frontend",
    "error handling",
    "log lines",
    "config files",
    "pull requests",
    "release notes",
]
ACTIONS = [
    "run the tests before committing",
    "commit secrets to the repository",
    "force-push to main",
    "mock the database in integration tests",
    "write docstrings for public functions",
    "use print for debugging",
    "add type hints to new code",
    "squash commits before merging",
    "deploy on Fridays",
    "hard-code credentials",
    "check git status before commits",
    "run formatters before type checkers",
    "keep functions small",
    "update the changelog for user-facing changes",
]
NUMBERS = [("line length", "chars", [80, 88, 100, 120]), ("timeout", "seconds", [5, 10, 30])]
STYLES = ["{}", "**{}**", "*{}*", "_{}_", "`{}`"]


def _styled(rng: random.Random, word: str) -> str:
    return rng.choice(STYLES).format(word)


def corpus() -> list[str]:
    """The fixed list of rule texts the pairs are drawn from."""
    rng = random.Random(SEED)
    out: list[str] = []
    for action in ACTIONS:
        for head in ("Always", "Never", "Do not", "We always", "Please", "You must"):
            out.append(f"{_styled(rng, head)} {action}")
    for family, members in TOOLS.items():
        for a in members:
            b = rng.choice([m for m in members if m != a])
            out.append(f"Use {_styled(rng, a)} as the {family}")
            out.append(f"Use {a} instead of {b}")
            out.append(f"We use {a} for {rng.choice(SUBJECTS)}")
            out.append(f"Prefer {a} over {b}")
            out.append(f"Run `{a} run build` before pushing")
    for topic, unit, values in NUMBERS:
        for v in values:
            out.append(f"{topic.capitalize()}: {v} {unit} maximum")
            out.append(f"Keep the {topic} at {v} {unit}")
    for subject in SUBJECTS:
        out.append(f"Keep {subject} short and clear")
        out.append(f"{subject.capitalize()} must be reviewed by a second person")
        out.append(f"Never skip review for {subject}")
    for k in range(40):  # longer rules that share most words and differ in one part
        subject, other = rng.sample(SUBJECTS, 2)
        first, second = rng.sample(ACTIONS, 2)
        out.append(f"When working on {subject}, {first} and {second}.")
        out.append(f"For {other}, {first} and {second} - see CONTRIBUTING.md.")
        out.append(f"Before opening a PR, {first} (use `make check` for step {k % 4 + 1}).")
    for name in ("contradictions_dev.jsonl", "contradictions_real_dev.jsonl"):
        path = EVAL_DIR / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    case = json.loads(line)
                    out.extend(e["text"] for e in case["existing"])
                    out.append(case["new"]["text"])
    return list(dict.fromkeys(out))


def verdicts(texts: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i, old in enumerate(texts):
        for j, new in enumerate(texts):
            if i != j:
                v = classify(new, [("0", old)])
                out[f"{i}:{j}"] = [v.action, v.reason]
    return out


def timing(per_category: int = 200, saves: int = 300) -> float:
    """Median microseconds of one ``classify`` against ``per_category`` entries."""
    texts = corpus()
    rng = random.Random(SEED + 1)
    existing = [(str(i), t) for i, t in enumerate(rng.sample(texts, min(per_category, len(texts))))]
    extra = [f"{t} in module m{k}" for k, t in enumerate(rng.choices(texts, k=saves))]
    samples: list[float] = []
    for new in extra:  # each text new to the parse cache, as on a real save
        start = time.perf_counter_ns()
        classify(new, existing)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("record", "compare", "timing"):
        print(__doc__)
        return 2
    if argv[0] == "timing":
        print(f"classify per save, 200 entries per category: {timing():.0f} us (median)")
        return 0
    texts = corpus()
    started = time.perf_counter()
    now = verdicts(texts)
    elapsed = time.perf_counter() - started
    print(f"{len(texts)} texts, {len(now)} ordered pairs classified in {elapsed:.1f} s")
    path = Path(argv[1])
    if argv[0] == "record":
        path.write_text(json.dumps({"texts": texts, "verdicts": now}), encoding="utf-8")
        print(Counter(a for a, _ in now.values()))
        return 0
    before = json.loads(path.read_text(encoding="utf-8"))
    if before["texts"] != texts:
        print("the corpus differs from the recording: regenerate it on the old code")
        return 1
    classes: dict[str, list[str]] = defaultdict(list)
    for key, (action, reason) in now.items():
        old_action, old_reason = before["verdicts"][key]
        if old_action != action:
            i, j = (int(x) for x in key.split(":"))
            kind = (reason if action != "added" else old_reason).split(":")[0].split("(")[0]
            classes[f"{old_action} -> {action} ({kind.strip()})"].append(
                f"  OLD {texts[i]!r}\n  NEW {texts[j]!r}\n    was: {old_reason}\n    now: {reason}"
            )
    changed = sum(len(v) for v in classes.values())
    print(f"verdicts changed: {changed} of {len(now)}")
    show = int(argv[2]) if len(argv) > 2 else 5
    for name, examples in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{name}: {len(examples)}")
        for example in examples[:show]:
            print(example)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
