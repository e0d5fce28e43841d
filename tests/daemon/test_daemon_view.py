"""The daemon's read view is rebuilt incrementally (unchanged entries reused, issue 36): after a
mix of saves, reinforcements, an external edit, forgets and maintenance, what it serves equals
a full rebuild, a fresh parse of the files on disk. A real daemon, its socket, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maestrod_testkit import DaemonHandle, wait_for

from maestro_memory.core import MemoryStore

SECTORS = ("semantic", "episodic", "archive")


def served(daemon: DaemonHandle, project: Path) -> dict[str, list[dict[str, Any]]]:
    return {s: daemon.result("entries", project, sector=s)["entries"] for s in SECTORS}


def rebuilt(project: Path) -> dict[str, list[dict[str, Any]]]:
    view = MemoryStore(project).read().view()  # parsed from the files, every entry read anew
    entries = {"semantic": view.semantic, "episodic": view.episodic, "archive": view.archived}
    return {s: [e.to_dict() for e in entries[s]] for s in SECTORS}


def save(daemon: DaemonHandle, project: Path, fact: str, confidence: float = 0.9) -> str:
    result = daemon.result(
        "save_semantic", project, fact=fact, category="project_context", confidence=confidence
    )
    entry_id: str = result["entry"]["id"]
    return entry_id


def test_the_incremental_view_equals_a_full_rebuild(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    ids = [save(daemon, project, f"Service {name} owns the {name} queue")
           for name in ("billing", "search", "audit", "mailer", "export")]  # fmt: skip
    daemon.result("save_episodic", project, context="Moved the audit queue to SQS",
                  session_id="s-1")  # fmt: skip
    assert served(daemon, project) == rebuilt(project)

    daemon.result("reinforce", project, entry_id=ids[1], confirmed=True)
    save(daemon, project, "Service billing owns the billing queue")  # restated: reinforced
    daemon.result("forget", project, entry_ids=[ids[2]])
    assert served(daemon, project) == rebuilt(project)

    # A person edits the file: one entry changed by hand, one added.
    path = project / ".maestro" / "memory" / "semantic.md"
    text = path.read_text().replace("mailer queue", "mail queue")
    added = "## Project Context\n- [2026-01-05] [0.80] Reports are generated nightly\n"
    path.write_text(text.replace("## Project Context\n", added, 1))
    wait_for(
        lambda: any("nightly" in e["text"] for e in served(daemon, project)["semantic"]),
        message="the edit in the served view",
    )
    assert served(daemon, project) == rebuilt(project)

    save(daemon, project, "Service export owns the export queue", 0.0)  # contradicted
    save(daemon, project, "Reports are generated hourly")
    daemon.result("forget", project, match="mail queue")
    daemon.result("maintenance", project)
    assert served(daemon, project) == rebuilt(project)
