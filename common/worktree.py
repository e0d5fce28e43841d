"""The working-tree side of evidence (``core/evidence.py`` has the rule): one ``lstat`` per path
the semantic entries name, and git only when a path is newly missing. Read only, bounded, and
it never fails: no git, a folder that is not a repository, a slow or broken git all give "git
saw nothing", and the stats alone decide.

Git is asked narrowly, so that a big repository costs what a small one does: the staged
changes (``diff --cached -M``: a ``git mv`` not yet committed), the missing paths deleted from
the working tree but still in ``HEAD`` (a pathspec-limited ``diff HEAD``), the few commits
that deleted one of them (``log --no-renames --diff-filter=D -- <paths>``, a pathspec-limited
walk), and rename detection inside those commits only (``diff-tree -M``).
Every command shares one time budget: short at session start (the hook waits for it), longer at
maintenance. When git could not finish, the check says so (``Probe.settled``) and the next one
asks again.

Called at session start (``initialize``) and at maintenance, inside the op's transaction, by
the daemon's writer and by direct mode alike (``common/ops.py``); never on the read path.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

from ..core import evidence
from ..core.memory import Memory

SESSION_GIT_BUDGET = 0.2  # seconds of git at a session start (the hook is waiting)
MAINTENANCE_GIT_BUDGET = 2.0  # seconds of git at maintenance
DELETING_COMMITS = 8
GIT = ("git", "-C")  # commits that deleted a missing path, looked into for renames


def _exists(root: Path, path: str, folder: bool) -> bool:
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
    except (OSError, ValueError):
        return False
    if not folder:
        return True
    return stat.S_ISDIR(st.st_mode) or (stat.S_ISLNK(st.st_mode) and os.path.isdir(full))


class _Git:
    """Git commands under one deadline; ``finished`` turns False when one could not run to
    the end in time (or at all, for a reason other than "not a repository")."""

    def __init__(self, root: Path, budget: float) -> None:
        self.root = root
        self.deadline = time.monotonic() + budget
        self.finished = True

    def __call__(self, *args: str) -> str | None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.finished = False
            return None
        try:
            done = subprocess.run(
                # No hook, fsmonitor or external diff program runs for a look this small.
                [*GIT, str(self.root), "--literal-pathspecs", "-c", "core.fsmonitor=false", *args],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=left,
                env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_PAGER": "cat"},
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.finished = False
            return None
        except (OSError, subprocess.SubprocessError):
            return None  # no git at all: nothing to wait for
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


_NAME_STATUS = ["-M", "--diff-filter=DR", "--name-status", "-z", "--relative", "--no-ext-diff"]


def git_changes(
    root: Path, missing: list[str], since: str, budget: float
) -> tuple[dict[str, str], frozenset[str], bool]:
    """What git saw happen to the ``missing`` paths (relative to ``root``) since ``since`` (a
    day; "" any): ({old: new} renames, {deleted or renamed-away paths}, finished in time)."""
    git = _Git(root, budget)
    renamed: dict[str, str] = {}
    removed: set[str] = set()
    staged = git("diff", "--cached", *_NAME_STATUS, "HEAD")
    if staged is not None:
        parse_name_status(staged, renamed, removed)
    # Deleted in the working tree, not yet committed: in HEAD, so it existed.
    unstaged = git(
        "diff",
        "--no-renames",
        "--diff-filter=D",
        "--name-status",
        "-z",
        "--relative",
        "HEAD",
        "--",
        *missing,
    )
    if unstaged is not None:
        parse_name_status(unstaged, renamed, removed)
    window = [f"--since={since} 00:00:00"] if since else []
    commits = git(
        "log",
        "--no-renames",
        "--diff-filter=D",
        "--format=%H",
        f"--max-count={DELETING_COMMITS}",
        *window,
        "--",
        *missing,
    )
    for commit in (commits or "").split():
        found = git("diff-tree", "-r", "--no-commit-id", "--root", *_NAME_STATUS, commit)
        if found is not None:
            parse_name_status(found, renamed, removed)
    return renamed, frozenset(removed), git.finished


def probe(
    root: Path, checked: evidence.Plan, ledger: evidence.Ledger, git_budget: float
) -> evidence.Probe:
    """Stat every named path; ask git only when one is newly missing (``needs_git``)."""
    exists = {p: _exists(root, p, p in checked.folders) for p in checked.paths}
    missing = [p for p, ok in exists.items() if not ok]
    if not evidence.needs_git(ledger, missing):
        return evidence.Probe(exists)
    renamed, removed, finished = git_changes(root, missing, checked.since, git_budget)
    for path in missing:  # where a renamed path went must exist now: one more stat each
        new = evidence.new_location(path, renamed)
        if new is not None and new not in exists:
            exists[new] = _exists(root, new, False)
    return evidence.Probe(exists, renamed, removed, settled=finished)


def check(root: Path, memory: Memory, git_budget: float = SESSION_GIT_BUDGET) -> None:
    """Check what the semantic entries name against the working tree at ``root`` and record it
    in ``memory`` (its sidecar ledger; the entries themselves are not touched)."""
    checked = memory.evidence_plan(str(root))
    memory.record_evidence(checked, probe(root, checked, memory.state.evidence, git_budget))
