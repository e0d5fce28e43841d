"""The daemon takes in the agent tools' own memories as they change (issue 20).

A real maestrod whose HOME is a temporary folder; Claude Code's and Gemini CLI's memory
folders are written there by hand, exactly where the tools put them (the paths are checked
against the real Claude Code CLI in tests/e2e/test_tool_memory_import.py). Every wait is a
condition with a deadline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.core import MemoryStore
from maestro_memory.core.toolmem import claude_project_key
from maestro_memory.daemon.watcher import TOOLS_ROLE, relevant

DEADLINE = 20.0  # seconds: "within seconds", with room for a loaded machine


def memory_file(fact: str, kind: str = "feedback") -> str:
    return f"---\nname: n\ndescription: d\nmetadata:\n  type: {kind}\n---\n\n{fact}\n"


def start(daemon_factory: DaemonFactory, home: Path) -> DaemonHandle:
    home.mkdir(parents=True, exist_ok=True)
    return daemon_factory(env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")})


def entries(daemon: DaemonHandle, project: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = daemon.result("entries", project)["entries"]
    return found


def with_origin(daemon: DaemonHandle, project: Path, origin: str) -> list[dict[str, Any]]:
    return [e for e in entries(daemon, project) if e.get("origin") == origin]


def test_a_memory_written_after_start_is_imported_edited_and_flagged(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    MemoryStore(project).initialize("setup")
    daemon = start(daemon_factory, home)
    daemon.register(project)
    # Claude Code has never run here: not even ~/.claude exists. The daemon watches the
    # nearest folder that does, and follows the path down as Claude Code creates it.
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    assert not (home / ".claude").exists()
    folder.mkdir(parents=True)
    (folder / "feedback_tabs.md").write_text(memory_file("Indent the Makefiles with tabs."))
    (folder / "MEMORY.md").write_text("- [Tabs](feedback_tabs.md) — tabs in Makefiles\n")

    origin = "claude:feedback_tabs.md"
    (entry,) = wait_for(
        lambda: with_origin(daemon, project, origin), DEADLINE, message="the import"
    )
    assert entry["text"] == "Indent the Makefiles with tabs."
    assert entry["category"] == "quality_rule" and entry["confidence"] == 0.7
    # The log line is written after the commit the reply above already shows: wait for it.
    wait_for(
        lambda: f"agent tool memories of {project}: 1 imported" in daemon.log_text(),
        DEADLINE,
        message="the import's log line",
    )

    # The tool edits its file: the same entry follows, none is added.
    (folder / "feedback_tabs.md").write_text(memory_file("Indent Makefiles with tabs only."))
    wait_for(
        lambda: (
            [e["text"] for e in with_origin(daemon, project, origin)]
            == ["Indent Makefiles with tabs only."]
        ),
        DEADLINE,
        message="the edit",
    )
    assert [e["id"] for e in entries(daemon, project)] == [entry["id"]]

    # The tool deletes it: the entry stays, flagged for review.
    (folder / "feedback_tabs.md").unlink()
    wait_for(
        lambda: [e["state"] for e in with_origin(daemon, project, origin)] == ["flagged"],
        DEADLINE,
        message="the flag",
    )
    assert len(entries(daemon, project)) == 1
    assert daemon.status()["projects"][str(project)]["tool_watcher"] == "inotify"


def test_what_changed_while_the_daemon_was_down_is_taken_in_at_start(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    MemoryStore(project).initialize("setup")
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "project_ci.md").write_text(memory_file("CI runs on Fridays.", "project"))
    daemon = start(daemon_factory, home)
    daemon.register(project)
    (entry,) = wait_for(
        lambda: with_origin(daemon, project, "claude:project_ci.md"), DEADLINE, message="import"
    )
    assert entry["category"] == "project_context"


def test_a_gemini_project_registered_later_is_noticed(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    (home / ".gemini").mkdir(parents=True)
    MemoryStore(project).initialize("setup")
    daemon = start(daemon_factory, home)
    daemon.register(project)
    # Gemini's first run in the project: its registry gains a slug, then the memory file.
    memory = home / ".gemini" / "tmp" / "proj" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- Deploys need two approvals\n")
    (home / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {str(project): "proj"}})
    )
    (entry,) = wait_for(
        lambda: [
            e for e in entries(daemon, project) if (e.get("origin") or "").startswith("gemini:")
        ],
        DEADLINE,
        message="the gemini import",
    )
    assert entry["text"] == "Deploys need two approvals"


def test_a_tool_turned_off_in_the_config_is_not_imported(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    home.mkdir()
    MemoryStore(project).initialize("setup")
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "feedback_off.md").write_text(memory_file("Never import this one."))
    codex = home / ".codex" / "memories"
    codex.mkdir(parents=True)
    daemon = daemon_factory(
        env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")},
        config="[import]\nclaude = false\n",
    )
    daemon.register(project)
    # A later codex note proves the watcher ran (and so that claude was skipped, not late).
    (codex / "memory_summary.md").write_text("- Prefer small pull requests\n")
    wait_for(
        lambda: any((e.get("origin") or "").startswith("codex:") for e in entries(daemon, project)),
        DEADLINE,
        message="the codex import",
    )
    assert not any("Never import" in e["text"] for e in entries(daemon, project))


def test_a_bad_import_config_is_refused_at_start(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    daemon = daemon_factory(config='[import]\nclaude = "no"\n', wait=False)
    assert daemon.proc.wait(timeout=30) != 0
    assert "[import] claude must be true or false" in daemon.stderr_text()


def test_relevant_tool_events() -> None:
    assert relevant(TOOLS_ROLE, 0, "feedback_x.md")
    assert not relevant(TOOLS_ROLE, 0, ".feedback_x.md.tmp")  # a temp file
    assert not relevant(TOOLS_ROLE, 0, "notes.txt")
    assert relevant(TOOLS_ROLE, 0, "memory", frozenset({"memory"}))  # a folder appearing
    assert not relevant(TOOLS_ROLE, 0, "other", frozenset({"memory"}))


def test_a_fact_whose_index_line_claude_lost_is_served_to_claude(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    """Issue 29: Claude Code loads the files its MEMORY.md points to; a fact whose line the
    index lost is one it no longer sees, so the daemon serves it to Claude Code too."""
    home = tmp_path / "user"
    MemoryStore(project).initialize("setup")
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "feedback_tabs.md").write_text(memory_file("Indent the Makefiles with tabs."))
    (folder / "MEMORY.md").write_text("- [Tabs](feedback_tabs.md) — tabs in Makefiles\n")
    daemon = start(daemon_factory, home)
    daemon.register(project)
    task = "indent the Makefiles"

    def for_claude() -> str:
        block: str = daemon.result("build_context", project, task=task, for_tool="claude")[
            "context"
        ]
        return block

    wait_for(
        lambda: with_origin(daemon, project, "claude:feedback_tabs.md"),
        DEADLINE,
        message="the import",
    )
    assert "tabs" not in for_claude()  # the index points to it: Claude Code loads it
    (folder / "MEMORY.md").write_text("- [Other](feedback_other.md) — something else\n")
    wait_for(lambda: "Makefiles with tabs" in for_claude(), DEADLINE, message="served")
    assert "Makefiles with tabs" in daemon.result("build_context", project, task=task)["context"]
