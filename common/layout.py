"""Where a project's memory lives, spelled once: ``<project>/.maestro/memory/`` and its files.

Names only, standard library only, so that every layer imports it (``core`` included, and
the client without loading the core)::

    <project>/                 a directory holding .maestro/ (see find_project)
      .maestro/memory/
        semantic.md episodic.md archive.md   the shared memory (MEMORY_FILES)
        .state.json                          this clone's bookkeeping (STATE_FILE)
        .lock .commit .*.tmp-*               the lock protocol's files (core/fsio.py)
"""

from __future__ import annotations

import os
from pathlib import Path

MAESTRO_DIR = ".maestro"
MEMORY_SUBDIR = "memory"
MEMORY_DIR = f"{MAESTRO_DIR}/{MEMORY_SUBDIR}"  # relative to the project, "/"-separated
MEMORY_FILES: dict[str, str] = {
    "semantic": "semantic.md",
    "episodic": "episodic.md",
    "archive": "archive.md",
}
STATE_FILE = ".state.json"
# semantic.md's categories: key -> the spec's ``##`` heading, in file order (core/model.py
# derives the rest; the MCP door and the CLI list them without loading the core).
CATEGORY_HEADINGS: dict[str, str] = {
    "user_preference": "User Preferences",
    "architecture_decision": "Architecture Decisions",
    "quality_rule": "Quality Rules",
    "project_context": "Project Context",
}


def memory_dir(project: str | os.PathLike[str]) -> Path:
    """``<project>/.maestro/memory``."""
    return Path(project) / MAESTRO_DIR / MEMORY_SUBDIR


def canonical_project(project: str | os.PathLike[str]) -> Path:
    """The one key of a project's state (registry, journal, hook blocks, trust): its folder,
    absolute, every symbolic link resolved, so a project reached through a link is the same
    project (and ``forget`` finds every copy)."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(project))))


def find_project(start: str | os.PathLike[str]) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.maestro/``; None on a miss.

    A miss is reported, not guessed: a hook outside any project must do nothing, while
    ``maestroctl`` falls back to the working directory itself (its callers decide).
    """
    here = Path(os.path.abspath(os.path.expanduser(os.fspath(start))))
    for candidate in (here, *here.parents):
        if (candidate / MAESTRO_DIR).is_dir():
            return candidate
    return None


def project_or_here(start: str | os.PathLike[str]) -> str:
    """The nearest directory at or above ``start`` holding ``.maestro/``, else ``start`` itself
    (absolute): ``maestroctl`` and ``maestroctl ui`` act there (``init`` makes the memory)."""
    found = find_project(start)
    return os.path.abspath(os.fspath(start)) if found is None else str(found)
