"""Candidate lines for signal labelling from the current agent instruction files.

    python tools/corpus/lines.py --held-out ../shared/eval/held-out-sources.txt \\
        --per-repo 25 --out candidates_lines.jsonl MIRROR_GIT_DIR [MIRROR_GIT_DIR ...]

Takes the prose lines (bullets and link markup removed, code blocks, headings and tables left
out) of each instruction file at HEAD, and draws up to ``--per-repo`` of them per repository
with a generator seeded by the repository name, so a rerun draws the same lines. A person then
labels each line by ``docs/labelling-guide.md`` (signals with confidence and fact fragments, or
none); the script never labels. Repositories on the held-out list are refused.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    INSTRUCTION_NAMES,
    SKIP_PATH,
    git,
    held_out,
    prose_lines,
    repo_name,
    split_of,
)


def current_paths(git_dir: Path) -> list[str]:
    out = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD")
    return [
        p
        for p in out.splitlines()
        if p.rsplit("/", 1)[-1] in INSTRUCTION_NAMES and not SKIP_PATH.search(p)
    ]


def draw(
    git_dir: Path, per_repo: int, skip: frozenset[str] = frozenset()
) -> list[dict[str, object]]:
    repo = repo_name(git_dir)
    pool: list[tuple[str, str]] = []
    seen: set[str] = set(skip)
    for path in current_paths(git_dir):
        try:
            text = git(git_dir, "show", f"HEAD:{path}")
        except RuntimeError:
            continue
        for line in prose_lines(text):
            if line not in seen:
                seen.add(line)
                pool.append((path, line))
    rng = random.Random(repo.lower())
    picked = rng.sample(pool, min(per_repo, len(pool)))
    return [
        {"repo": repo, "split": split_of(repo), "source": f"{repo}:{path}", "user": line}
        for path, line in picked
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-repo", type=int, default=25)
    parser.add_argument(
        "--skip",
        type=Path,
        action="append",
        default=[],
        help="a JSONL file of lines already drawn (its `user` texts are not drawn again)",
    )
    parser.add_argument("git_dirs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.per_repo < 1:
        parser.error("--per-repo must be at least 1")
    excluded = held_out(args.held_out)
    skip = frozenset(
        json.loads(line)["user"]
        for path in args.skip
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    )
    written = 0
    with args.out.open("w", encoding="utf-8") as fh:
        for git_dir in args.git_dirs:
            repo = repo_name(git_dir)
            if repo.lower() in excluded:
                print(f"skipped (held out): {repo}", file=sys.stderr)
                continue
            for case in draw(git_dir, args.per_repo, skip):
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
                written += 1
    print(f"{written} candidate lines -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
