"""Shared helpers for the corpus builders: git access to a bare mirror, line clean-up, split.

The builders read public repositories' agent instruction files from bare git directories (one
per repository, e.g. brought in with the session's fetch tool) and write candidate files for a
human labeller. Nothing here judges a case: the labels are written by a person following
``docs/labelling-guide.md``.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

# File names (last path component) that hold instructions for coding agents.
INSTRUCTION_NAMES = (
    "CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    "copilot-instructions.md",
    ".cursorrules",
    ".windsurfrules",
)
# Paths that are templates, fixtures or examples rather than the project's own instructions.
SKIP_PATH = re.compile(r"(^|/)(node_modules|templates?|examples?|cookbook|fixtures?|test-[^/]*)/")

_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_TABLE = re.compile(r"^\s*\|")
_FENCE = re.compile(r"^\s*(```|~~~)")


def held_out(path: Path) -> set[str]:
    """The ``owner/name`` lines of a held-out-sources file, lower-cased (comments skipped)."""
    if not path.is_file():
        raise SystemExit(f"held-out list not found: {path}")
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "/" in line and "://" not in line:
            names.add(line.lower())
    return names


def repo_name(git_dir: Path) -> str:
    """``owner/name`` from a mirror folder named ``owner+name`` (or ``owner+name/repo``)."""
    folder = git_dir.name if git_dir.name != "repo" else git_dir.parent.name
    owner, _, name = folder.partition("+")
    if not name:
        raise SystemExit(f"cannot tell owner/name from {git_dir}")
    return f"{owner}/{name}"


def split_of(repo: str) -> str:
    """``dev`` or ``val``: a fixed hash of the repository name, decided before any scoring."""
    digest = hashlib.sha256(repo.lower().encode("utf-8")).digest()
    return "dev" if digest[0] % 2 == 0 else "val"


def git(git_dir: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def instruction_paths(git_dir: Path) -> list[str]:
    """Every instruction-file path the history of HEAD ever touched (templates left out)."""
    specs = [f":(glob)**/{name}" for name in INSTRUCTION_NAMES]
    out = git(git_dir, "log", "--format=", "--name-only", "HEAD", "--", *specs)
    seen: dict[str, None] = {}
    for path in out.splitlines():
        if path.rsplit("/", 1)[-1] in INSTRUCTION_NAMES and not SKIP_PATH.search(path):
            seen.setdefault(path, None)
    return list(seen)


def clean(line: str) -> str:
    """Light clean-up as the eval README says: bullets and link markup go, the rest stays."""
    text = _BULLET.sub("", line.rstrip())
    text = _LINK.sub(r"\1", text)
    return text.strip()


def is_candidate_line(raw: str) -> bool:
    """A prose line that could hold a rule or fact: no heading, table, fence, or stub."""
    if _HEADING.match(raw) or _TABLE.match(raw) or _FENCE.match(raw):
        return False
    text = clean(raw)
    if len(text.split()) < 3 or len(text) > 400:
        return False
    if text.startswith(("<", "!", ">", "---", "===")) or text.endswith(":"):
        return False
    return any(c.isalpha() for c in text)


def prose_lines(text: str) -> list[str]:
    """The candidate lines of a file, outside fenced code blocks."""
    lines, in_fence = [], False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if not in_fence and is_candidate_line(raw):
            lines.append(clean(raw))
    return lines
