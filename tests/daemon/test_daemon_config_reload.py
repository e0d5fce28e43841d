"""The one reload rule for ``config.toml``: maestrod reads it when it starts and when it is told
to reload (SIGHUP), every table alike; an edit in between changes nothing in the running daemon.

A real maestrod whose HOME is a temporary folder, Claude Code's memory folder written there by
hand; every wait is a condition with a deadline."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.core import MemoryStore
from maestro_memory.core.toolmem import claude_project_key

DEADLINE = 20.0  # seconds, with room for a loaded machine


def claude_location(result: dict[str, Any]) -> dict[str, Any]:
    (found,) = [loc for loc in result["locations"] if loc["tool"] == "claude"]
    return found


def texts(daemon: DaemonHandle, project: Path) -> list[str]:
    return [e["text"] for e in daemon.result("entries", project)["entries"]]


def test_an_import_table_edit_applies_at_reload_not_before(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "feedback_changelog.md").write_text(
        "---\nname: n\ndescription: d\nmetadata:\n  type: feedback\n---\n\n"
        "Keep the changelog in sync with every release.\n"
    )
    MemoryStore(project).initialize("setup")
    daemon = daemon_factory(
        env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")},
        config="[import]\nclaude = false\n",
    )
    daemon.register(project)
    fact = "Keep the changelog in sync with every release."

    # Edited, not reloaded: the daemon still runs with what it read at start (Claude off),
    # for an explicit import as for its watcher.
    daemon.paths.config_path.write_text("[import]\nclaude = true\n")
    before = daemon.result("import_tool_memories", project, home=str(home))
    assert claude_location(before)["enabled"] is False
    assert fact not in texts(daemon, project)

    # Reloaded: the new table applies, and the watcher takes in what it now may.
    daemon.signal(signal.SIGHUP)
    wait_for(
        lambda: fact in texts(daemon, project),
        DEADLINE,
        message="the Claude memory imported after the reload",
    )
    after = daemon.result("import_tool_memories", project, home=str(home), dry_run=True)
    assert claude_location(after)["enabled"] is True


def test_a_bad_import_table_at_reload_keeps_the_running_one(
    daemon_factory: DaemonFactory, tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "user"
    home.mkdir()
    MemoryStore(project).initialize("setup")
    daemon = daemon_factory(
        env={"HOME": str(home), "CODEX_HOME": str(home / ".codex")},
        config="[import]\nclaude = false\n",
    )
    daemon.register(project)
    daemon.paths.config_path.write_text('[import]\nclaude = "yes"\n')
    daemon.signal(signal.SIGHUP)
    wait_for(
        lambda: "keeping the running configuration" in daemon.log_text(),
        DEADLINE,
        message="the reload refused",
    )
    result = daemon.result("import_tool_memories", project, home=str(home), dry_run=True)
    assert claude_location(result)["enabled"] is False
