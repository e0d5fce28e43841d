"""The git side of the entry-level merge: ``maestroctl merge-driver`` and ``maestroctl git-setup``.

git runs the driver as ``<maestroctl> merge-driver %O %A %B %P`` for every conflicting
``.maestro/memory/*.md``, with the three versions in temporary files; the driver writes the
merged result into ``%A`` and exits 0 (clean) or 1 (conflict markers left for a person). The
merge itself is ``core.merge``; this module gives it ``git merge-file`` as its line merge and
does the file and git plumbing.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ...common import layout
from ...common.atomic import write_atomic
from ...common.errors import MaestroError

if TYPE_CHECKING:
    from ...core.markdown import FileKind

DRIVER_NAME = "maestro-memory"
DRIVER_TITLE = "Maestro Memory entry-level merge"
ATTRIBUTE_PATTERN = f"{layout.MEMORY_DIR}/*.md"
ATTRIBUTE_LINE = f"{ATTRIBUTE_PATTERN} merge={DRIVER_NAME}"
KIND_BY_NAME: dict[str, FileKind] = {
    layout.MEMORY_FILES["semantic"]: "semantic",
    layout.MEMORY_FILES["episodic"]: "episodic",
    layout.MEMORY_FILES["archive"]: "archive",
}
# The driver's statuses are git's merge-driver protocol, not the CLI's exit statuses
# (``client/cli/exits.py``): git reads 0 as merged and anything else as conflicted, so a
# failure to run at all needs a status of its own that is not the conflict's 1.
DRIVER_CLEAN = 0
DRIVER_CONFLICT = 1
DRIVER_FAILED = 2


class GitError(MaestroError, RuntimeError):
    """A git command failed (the message carries git's own words)."""


def _git(args: list[str], cwd: Path | str | None = None, check: bool = True) -> str:
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed (or not on PATH)") from exc
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


# -------------------------------------------------------------------------------------------
# The line merge the core's merge is given
# -------------------------------------------------------------------------------------------


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def git_merge_file(base: str, ours: str, theirs: str, marker_size: int) -> str:
    """``git merge-file -p --diff3`` over three texts; conflicts stay marked in the output."""
    with tempfile.TemporaryDirectory(prefix="maestro-merge-") as tmp:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(_encode(text))
            names.append(str(path))
        try:
            proc = subprocess.run(
                [
                    "git",
                    "merge-file",
                    "-p",
                    "--diff3",
                    f"--marker-size={marker_size}",
                    "-L",
                    "ours",
                    "-L",
                    "base",
                    "-L",
                    "theirs",
                    *names,
                ],
                capture_output=True,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError as exc:
            raise GitError("git is not installed (or not on PATH)") from exc
    # The exit status is the number of conflicts (at most 127); anything else is an error.
    if not 0 <= proc.returncode <= 127:
        raise GitError(f"git merge-file failed: {_decode(proc.stderr).strip()}")
    return _decode(proc.stdout)


# -------------------------------------------------------------------------------------------
# merge-driver
# -------------------------------------------------------------------------------------------


def _kind_of(path_name: str | None, ours: str, theirs: str) -> FileKind | None:
    from ...core.merge import detect_kind

    if path_name:
        kind = KIND_BY_NAME.get(Path(path_name).name)
        if kind is not None:
            return kind
    return detect_kind(ours) or detect_kind(theirs)


def _plain_merge(ours_path: Path, base_path: Path, theirs_path: Path, why: str) -> int:
    """What git would have done without the driver: a line merge with conflict markers."""
    sys.stderr.write(f"maestro-memory merge-driver: {why}; falling back to a line merge\n")
    proc = subprocess.run(
        [
            "git",
            "merge-file",
            "-L",
            "ours",
            "-L",
            "base",
            "-L",
            "theirs",
            str(ours_path),
            str(base_path),
            str(theirs_path),
        ],
        stdin=subprocess.DEVNULL,
    )
    return DRIVER_CLEAN if proc.returncode == 0 else DRIVER_CONFLICT


def run_merge_driver(
    base_path: str, ours_path: str, theirs_path: str, path_name: str | None = None
) -> int:
    """Merge the three versions into ``ours_path``; 0 when clean, 1 with conflict markers."""
    from ...core.merge import merge

    o, a, b = Path(base_path), Path(ours_path), Path(theirs_path)
    try:
        base = _decode(o.read_bytes()) if o.exists() else ""
        ours = _decode(a.read_bytes())
        theirs = _decode(b.read_bytes())
    except OSError as exc:
        sys.stderr.write(f"maestro-memory merge-driver: cannot read the versions: {exc}\n")
        return DRIVER_FAILED
    kind = _kind_of(path_name, ours, theirs)
    if kind is None:
        return _plain_merge(a, o, b, f"{path_name or ours_path} is not a memory file")
    try:
        result = merge(
            kind, base, ours, theirs, line_merge=git_merge_file, today=dt.date.today().isoformat()
        )
    except Exception as exc:  # a bug must not lose theirs: let git's own line merge run
        return _plain_merge(a, o, b, f"entry-level merge failed ({type(exc).__name__}: {exc})")

    try:
        write_atomic(a, _encode(result.text))
    except OSError as exc:
        sys.stderr.write(f"maestro-memory merge-driver: cannot write {a}: {exc}\n")
        return DRIVER_FAILED
    where = path_name or kind
    for note in result.notes:
        sys.stderr.write(f"maestro-memory: {where}: {note}\n")
    return DRIVER_CONFLICT if result.conflicted else DRIVER_CLEAN


# -------------------------------------------------------------------------------------------
# git-setup and its check
# -------------------------------------------------------------------------------------------


def maestroctl_program() -> str:
    """The absolute path of the installed ``maestroctl`` (beside this Python, else on PATH)."""
    beside = Path(sys.executable).parent / "maestroctl"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("maestroctl")
    if found:
        return str(Path(found).absolute())
    return str(beside)


def driver_command(program: str | None = None) -> str:
    """The ``merge.maestro-memory.driver`` value: git runs it through the shell."""
    prog = program if program is not None else shlex.quote(maestroctl_program())
    return f"{prog} merge-driver %O %A %B %P"


def repo_root(path: Path | str) -> Path:
    """The top of the work tree holding ``path`` (``GitError`` when it is not in one)."""
    start = Path(path)
    if not start.is_dir():
        start = start.parent
    return Path(_git(["rev-parse", "--show-toplevel"], cwd=start).strip())


def git_setup(path: Path | str, program: str | None = None) -> list[str]:
    """Register the driver in the clone holding ``path``; returns what was done, for people."""
    root = repo_root(path)
    done = []
    command = driver_command(program)
    _git(["config", f"merge.{DRIVER_NAME}.name", DRIVER_TITLE], cwd=root)
    _git(["config", f"merge.{DRIVER_NAME}.driver", command], cwd=root)
    done.append(f"git config merge.{DRIVER_NAME}.driver {command!r} (in {root})")
    attributes = root / ".gitattributes"
    try:
        existing = attributes.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = ""
    if any(line.split() == ATTRIBUTE_LINE.split() for line in existing.splitlines()):
        done.append(f"{attributes}: already has '{ATTRIBUTE_LINE}'")
    else:
        sep = "" if not existing or existing.endswith("\n") else "\n"

        write_atomic(attributes, (existing + sep + ATTRIBUTE_LINE + "\n").encode("utf-8"))
        done.append(
            f"{attributes}: added '{ATTRIBUTE_LINE}' (commit it so collaborators "
            "merge the same way; each clone runs 'maestroctl git-setup' once)"
        )
    return done


def git_setup_missing(project_root: Path | str) -> str | None:
    """A warning when the project's clone would merge its memory files line by line.

    None when all is in place, or when the project is not in a git work tree at all.
    """
    root_path = Path(project_root)
    try:
        root = repo_root(root_path)
    except GitError:
        return None
    problems = []
    driver = _git(["config", "--get", f"merge.{DRIVER_NAME}.driver"], cwd=root, check=False).strip()
    if not driver:
        problems.append(f"merge.{DRIVER_NAME}.driver is not configured in this clone")
    else:
        try:
            program = shlex.split(driver)[0]
        except (ValueError, IndexError):
            program = ""
        if not program or shutil.which(program) is None:
            problems.append(f"the configured merge driver program {program!r} does not exist")
    try:
        semantic = layout.memory_dir(root_path.resolve()) / layout.MEMORY_FILES["semantic"]
        rel = semantic.relative_to(root.resolve())
    except ValueError:
        rel = Path(layout.MEMORY_DIR) / layout.MEMORY_FILES["semantic"]
    attr = _git(["check-attr", "merge", "--", str(rel)], cwd=root, check=False)
    if not attr.strip().endswith(f": merge: {DRIVER_NAME}"):
        problems.append(f"{rel} has no 'merge={DRIVER_NAME}' attribute")
    if not problems:
        return None
    return (
        "memory files will merge line by line in "
        + str(root)
        + ": "
        + "; ".join(problems)
        + " (run 'maestroctl git-setup')"
    )
