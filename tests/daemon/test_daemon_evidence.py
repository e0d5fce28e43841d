"""Evidence against a real working tree: a fact naming a file that is deleted or renamed
leaves the context and waits in the review queue; one whose file exists changes nothing.

Real parts only: a real git repository in a temp folder (renames are git's own ``git mv``),
a real maestrod over its socket, and direct mode through the same op handlers the client runs
without a daemon (``ops.dispatch_memory_op`` + ``DirectBackend``)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.common.ops import DirectBackend, dispatch_memory_op
from maestro_memory.core import MemoryStore

Call = Callable[..., dict[str, Any]]

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AUTH = "Session tokens are validated in `src/auth.py`."
DB = "The schema migrations live in db/migrations/ and run on start."
KEPT = "Formatting is checked by tools/check.sh in CI."


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def repo(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    for name in ("src/auth.py", "db/migrations/001.sql", "tools/check.sh"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"contents of {name}\n")  # distinct: git pairs copies
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


@pytest.fixture(params=["daemon", "direct"])
def door(request: pytest.FixtureRequest, project: Path) -> Iterator[Call]:
    """One way in: a real maestrod over its socket, or direct mode."""
    MemoryStore(project).initialize("setup")
    if request.param == "daemon":
        daemon = request.getfixturevalue("daemon_factory")()
        daemon.register(project)
        yield lambda op, **args: daemon.result(op, project, **args)
    else:
        yield lambda op, **args: dispatch_memory_op(DirectBackend(), op, project, args)


def save(call: Call, fact: str, confidence: float = 0.9) -> str:
    result = call(
        "save_semantic", fact=fact, category="architecture_decision", confidence=confidence
    )
    entry_id: str = result["entry"]["id"]
    return entry_id


def by_id(call: Call) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in call("entries", sector="semantic")["entries"]}


def context(call: Call) -> str:
    text: str = call("build_context", task="session tokens migrations formatting")["context"]
    return text


@needs_git
def test_deleted_and_renamed_paths_leave_the_context_and_wait_for_review(
    door: Call, project: Path
) -> None:
    repo(project)
    auth, db, kept = save(door, AUTH), save(door, DB), save(door, KEPT)
    door("initialize", session_id="s1")  # the first check: every named path is there
    assert all(e["state"] == "active" and e["stale"] is None for e in by_id(door).values())
    assert "src/auth.py" in context(door)

    git(project, "mv", "src/auth.py", "src/login.py")
    git(project, "commit", "-qm", "rename")
    shutil.rmtree(project / "db")  # deleted, not committed
    door("initialize", session_id="s2")  # the next session start looks again

    entries = by_id(door)
    assert entries[auth]["state"] == "stale"
    assert entries[auth]["stale"] == "`src/auth.py` was renamed to `src/login.py`"
    assert entries[auth]["moved"] == {"src/auth.py": "src/login.py"}
    assert entries[db]["state"] == "stale"
    assert entries[db]["stale"] == "`db/migrations` no longer exists"
    assert entries[kept]["state"] == "active" and entries[kept]["stale"] is None
    assert entries[auth]["confidence"] == 0.9  # nothing decayed or deleted for it
    block = context(door)
    assert "tools/check.sh" in block and "src/auth.py" not in block and "db/" not in block

    # The scheduled maintenance (no decisions) leaves them for a person.
    done = door("maintenance")
    assert done["applied"] == []
    review = {p["entry"]["id"]: p for p in door("maintenance", dry_run=True)["proposals"]}
    assert review[auth]["action"] == "rewrite"
    assert review[auth]["reason"] == "`src/auth.py` was renamed to `src/login.py`"
    assert review[db]["action"] == "review"
    assert kept not in review

    # Rewrite: the new path replaces the old in the text, same entry, same scores.
    door("maintenance", decisions={auth: "rewrite"})
    entries = by_id(door)
    assert entries[auth]["text"] == "Session tokens are validated in `src/login.py`."
    assert entries[auth]["state"] == "active" and entries[auth]["confidence"] == 0.9
    assert "src/login.py" in context(door)
    semantic = (project / ".maestro" / "memory" / "semantic.md").read_text()
    assert "Rewritten" in semantic and "src/login.py" in semantic

    # Keep (reinforce): the person says it still holds; not asked again for that path.
    door("maintenance", decisions={db: "reinforce"})
    door("initialize", session_id="s3")
    entries = by_id(door)
    assert entries[db]["state"] == "active" and entries[db]["confidence"] == 0.9
    assert door("maintenance", dry_run=True)["proposals"] == []
    assert len(entries) == 3  # nothing was deleted


@needs_git
def test_rewrite_is_refused_for_an_entry_without_a_rename(door: Call, project: Path) -> None:
    repo(project)
    db = save(door, DB)
    door("initialize", session_id="s1")
    shutil.rmtree(project / "db")
    door("initialize", session_id="s2")
    with pytest.raises((AssertionError, Exception), match="rename"):
        door("maintenance", decisions={db: "rewrite"})
    assert by_id(door)[db]["text"] == DB


def test_without_git_a_deleted_path_is_still_found_and_nothing_fails(
    door: Call, project: Path
) -> None:
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text("x\n")
    auth = save(door, AUTH)
    advice = save(door, "In Django projects templates go in templates/app/")
    outside = save(door, "The system password file is /etc/passwd")
    door("initialize", session_id="s1")
    (project / "src" / "auth.py").unlink()
    (project / "src" / "auth.py.bak").write_text("not the same file\n")
    report = door("initialize", session_id="s2")
    assert [e["id"] for e in report["flagged"]] == [auth]
    entries = by_id(door)
    assert entries[auth]["stale"] == "`src/auth.py` no longer exists"
    # A path that never existed here, or one outside the project, proves nothing.
    assert entries[advice]["state"] == "active" and entries[outside]["state"] == "active"


@needs_git
def test_git_is_asked_narrowly_from_a_project_inside_a_bigger_repository(tmp_path: Path) -> None:
    from maestro_memory.common import worktree

    top = tmp_path / "mono"
    project = top / "services" / "api"
    project.mkdir(parents=True)
    repo(project)  # the repository is the project here …
    shutil.move(str(project / ".git"), str(top / ".git"))  # … now its parent folder
    git(top, "add", "-A")
    git(top, "commit", "-qm", "the project moves into a monorepo")
    git(project, "mv", "src/auth.py", "src/login.py")
    git(project, "commit", "-qm", "rename")
    git(project, "mv", "db/migrations", "db/schema")  # staged, not committed
    git(project, "rm", "-q", "tools/check.sh")
    git(project, "commit", "-qm", "drop the script")
    missing = ["src/auth.py", "db/migrations", "tools/check.sh", "never/was.py"]
    renamed, removed, finished = worktree.git_changes(project, missing, "", 10.0)
    assert finished
    assert renamed["src/auth.py"] == "src/login.py"  # relative to the project, not the repo
    assert renamed["db/migrations/001.sql"] == "db/schema/001.sql"
    assert "tools/check.sh" in removed and "never/was.py" not in removed
    # No time at all: nothing is known, and the check says it did not finish.
    assert worktree.git_changes(project, missing, "", 0.0) == ({}, frozenset(), False)
    # Not a repository, or no git: nothing is known, nothing fails.
    alone = tmp_path / "alone"
    alone.mkdir()
    assert worktree.git_changes(alone, missing, "", 10.0) == ({}, frozenset(), True)


@needs_git
def test_a_tracked_file_deleted_before_any_check_is_found_gone(door: Call, project: Path) -> None:
    repo(project)
    auth = save(door, AUTH)  # no check has seen src/auth.py yet
    (project / "src" / "auth.py").unlink()  # deleted, not committed: git still has it in HEAD
    door("initialize", session_id="s1")
    assert by_id(door)[auth]["stale"] == "`src/auth.py` no longer exists"
