"""Candidate rule-edit pairs from the git history of agent instruction files.

    python tools/corpus/pairs.py --held-out ../shared/eval/held-out-sources.txt \\
        --out candidates_pairs.jsonl MIRROR_GIT_DIR [MIRROR_GIT_DIR ...]

For every commit that touched an instruction file, each diff hunk's removed lines are paired
one-to-one with its added lines of similar content (``hunk`` candidates: a rewording, a changed
tool or flag, a reversal, or two different rules that only look alike). Each commit's added
lines are also paired with the most similar line that stayed in the file (``coexist``
candidates: mostly two different rules side by side). A person then labels each candidate
``replaced`` / ``reinforced`` / ``added`` (or drops it) by ``docs/labelling-guide.md``; the
script never labels. Repositories on the held-out list are refused.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    clean,
    git,
    held_out,
    instruction_paths,
    is_candidate_line,
    prose_lines,
    repo_name,
    split_of,
)

PAIR_MIN = 0.45  # similarity for a removed/added pair from one hunk
COEXIST_RANGE = (0.30, 0.60)  # similarity band for two rules that stay side by side
_HUNK = re.compile(r"^@@ ")


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def hunks(diff: str) -> list[tuple[list[str], list[str]]]:
    """(removed, added) candidate lines per hunk of a ``--unified=0`` diff."""
    out: list[tuple[list[str], list[str]]] = []
    removed: list[str] = []
    added: list[str] = []
    for line in diff.splitlines():
        if _HUNK.match(line):
            if removed or added:
                out.append((removed, added))
            removed, added = [], []
        elif line.startswith("-") and not line.startswith("---") and is_candidate_line(line[1:]):
            removed.append(clean(line[1:]))
        elif line.startswith("+") and not line.startswith("+++") and is_candidate_line(line[1:]):
            added.append(clean(line[1:]))
    if removed or added:
        out.append((removed, added))
    return out


def pair_hunk(removed: list[str], added: list[str]) -> list[tuple[str, str, float]]:
    """Greedy one-to-one pairing, most similar first; identical text is no edit."""
    scored = sorted(
        ((similarity(r, a), i, j) for i, r in enumerate(removed) for j, a in enumerate(added)),
        reverse=True,
    )
    used_r: set[int] = set()
    used_a: set[int] = set()
    pairs = []
    for score, i, j in scored:
        if score < PAIR_MIN or i in used_r or j in used_a:
            continue
        used_r.add(i)
        used_a.add(j)
        if removed[i] != added[j]:
            pairs.append((removed[i], added[j], round(score, 3)))
    return pairs


def candidates(git_dir: Path) -> list[dict[str, object]]:
    repo = repo_name(git_dir)
    out: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()
    for path in instruction_paths(git_dir):
        log = git(git_dir, "log", "--format=%H", "--no-merges", "HEAD", "--", path)
        for commit in log.split():
            diff = git(git_dir, "show", "--format=", "--unified=0", commit, "--", path)
            source = f"{repo}:{path}@{commit[:10]}"
            new_lines: list[str] = []
            for removed, added in hunks(diff):
                new_lines.extend(added)
                for old, new, score in pair_hunk(removed, added):
                    if (old, new) not in seen:
                        seen.add((old, new))
                        out.append(_case(repo, source, "hunk", old, new, score))
            if not new_lines:
                continue
            try:
                after = prose_lines(git(git_dir, "show", f"{commit}:{path}"))
            except RuntimeError:
                continue
            stayed = [line for line in after if line not in new_lines]
            for new in new_lines:
                best = max(stayed, key=lambda line: similarity(line, new), default=None)
                if best is None:
                    continue
                score = similarity(best, new)
                if COEXIST_RANGE[0] <= score < COEXIST_RANGE[1] and (best, new) not in seen:
                    seen.add((best, new))
                    out.append(_case(repo, source, "coexist", best, new, round(score, 3)))
    return out


def _case(repo: str, source: str, kind: str, old: str, new: str, score: float) -> dict[str, object]:
    return {
        "repo": repo,
        "split": split_of(repo),
        "source": source,
        "kind": kind,
        "old": old,
        "new": new,
        "similarity": score,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("git_dirs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    excluded = held_out(args.held_out)
    written = 0
    with args.out.open("w", encoding="utf-8") as fh:
        for git_dir in args.git_dirs:
            repo = repo_name(git_dir)
            if repo.lower() in excluded:
                print(f"skipped (held out): {repo}", file=sys.stderr)
                continue
            for case in candidates(git_dir):
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
                written += 1
    print(f"{written} candidate pairs -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
