"""The working-tree side of evidence (``core/evidence.py`` has the rule): one ``lstat`` per path
the semantic entries name, and git only when a path is newly missing. Read only, bounded, and
it never fails: no git, a folder that is not a repository, a slow or broken git all give "git
saw nothing", and the stats alone decide.

Called at session start (``initialize``) and at maintenance, inside the op's transaction, by
the daemon's writer and by direct mode alike (``common/ops.py``); never on the read path.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from ..core import evidence
from ..core.memory import Memory

GIT_TIMEOUT = 1.0  # seconds per git command
GIT_COMMITS = 300  # commits of history looked at, newest first, since the oldest entry's day


def _exists(root: Path, path: str, folder: bool) -> bool:
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
    except (OSError, ValueError):
        return False
    if not folder:
        return True
    return stat.S_ISDIR(st.st_mode) or (stat.S_ISLNK(st.st_mode) and os.path.isdir(full))


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            # No hook, fsmonitor or external diff program runs for a look this small.
            ["git", "-C", str(root), "-c", "core.fsmonitor=false", *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_PAGER": "cat"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # no git, or it took too long
    if done.returncode != 0:
        return None  # not a repository, no commit yet …
    return done.stdout.decode("utf-8", "surrogateescape")


def parse_name_status(output: str, renamed: dict[str, str], removed: set[str]) -> None:
    """``git … --name-status -z`` output (newest first) into ``renamed`` (old -> new; the
    newest rename of a path wins) and ``removed`` (deleted, or renamed away)."""
    tokens = output.split("\0")
    i = 0
    while i < len(tokens):
        status = tokens[i].strip()
        if status.startswith("R") and i + 2 < len(tokens):
            old, new = tokens[i + 1], tokens[i + 2]
            renamed.setdefault(old, new)
            removed.add(old)
            i += 3
        elif status.startswith("D") and i + 1 < len(tokens):
            removed.add(tokens[i + 1])
            i += 2
        else:
            i += 1


def git_changes(root: Path, since: str) -> tuple[dict[str, str], frozenset[str]]:
    """Renames and deletions git saw under ``root`` since ``since`` (a day; "" any), the
    uncommitted ones first: ({old: new}, {deleted or renamed-away paths}), relative to
    ``root``. Empty when git cannot tell."""
    renamed: dict[str, str] = {}
    removed: set[str] = set()
    common = [
        "-M",
        "--diff-filter=DR",
        "--name-status",
        "-z",
        "--relative",
        "--no-ext-diff",
        "--no-textconv",
    ]
    pending = _git(root, "diff", *common, "HEAD")
    if pending is not None:
        parse_name_status(pending, renamed, removed)
    history = _git(
        root,
        "log",
        *common,
        "--format=",
        f"--max-count={GIT_COMMITS}",
        *([f"--since={since}"] if since else []),
    )
    if history is not None:
        parse_name_status(history, renamed, removed)
    return renamed, frozenset(removed)


def probe(root: Path, checked: evidence.Plan, ledger: evidence.Ledger) -> evidence.Probe:
    """Stat every named path; ask git only when one is newly missing (``needs_git``)."""
    exists = {p: _exists(root, p, p in checked.folders) for p in checked.paths}
    missing = [p for p, ok in exists.items() if not ok]
    if not evidence.needs_git(ledger, missing):
        return evidence.Probe(exists)
    renamed, removed = git_changes(root, checked.since)
    for path in missing:  # where a renamed path went must exist now: one more stat each
        new = evidence.new_location(path, renamed)
        if new is not None and new not in exists:
            exists[new] = _exists(root, new, False)
    return evidence.Probe(exists, renamed, removed)


def check(root: Path, memory: Memory) -> None:
    """Check what the semantic entries name against the working tree at ``root`` and record it
    in ``memory`` (its sidecar ledger; the entries themselves are not touched)."""
    checked = memory.evidence_plan(str(root))
    memory.record_evidence(checked, probe(root, checked, memory.state.evidence))
