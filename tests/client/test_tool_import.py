"""``maestroctl import``: what the agent tools saved in their own memory folders becomes
semantic entries, once, with its source, screened; the tools' folders are never written.

Real files in a private HOME (Claude Code's folder made by hand exactly where Claude Code
2.1.332 puts it, checked with the real CLI in tests/e2e/test_tool_memory_import.py), the real
``maestroctl``, in direct mode and through a real daemon."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import Cli

from maestro_memory.common import paths
from maestro_memory.common.toolsources import git_root
from maestro_memory.core.toolmem import claude_note, claude_project_key, parse_frontmatter

PNPM = """---
name: use-pnpm
description: the project installs with pnpm
metadata:
  type: feedback
---

Always use pnpm, never npm, in this repository.

**Why:** the lockfile is pnpm-lock.yaml.
**How to apply:** run pnpm install.
"""
# Claude Code's index line for it, as Claude Code writes it in MEMORY.md.
PNPM_INDEX = "- [Use pnpm](feedback_pnpm.md) — installs with pnpm, never npm\n"
SECRET = """---
name: staging-key
description: key for staging
type: reference
---

The staging deploy key is AKIAIOSFODNN7EXAMPLE, keep it handy.
"""


FOUR_FACTS = (
    "The billing service talks to Stripe through a queue",
    "Release tags follow calendar versioning",
    "Staging databases are reset every Monday morning",
    "The mobile app ships through Fastlane lanes",
)


def _git(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)


def claude_folder(home: Path, project: Path) -> Path:
    folder = home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def semantic(project: Path) -> str:
    return (project / ".maestro" / "memory" / "semantic.md").read_text()


def test_frontmatter_and_key_rules() -> None:
    fields, body = parse_frontmatter(PNPM)
    assert body.strip().startswith("Always use pnpm")
    assert fields["metadata.type"] == "feedback" and fields["name"] == "use-pnpm"
    note = claude_note("feedback_pnpm.md", PNPM, "1:1")
    assert note.text == "Always use pnpm, never npm, in this repository."
    assert note.category == "quality_rule" and not note.blocked
    assert claude_note("k.md", SECRET, "1:1").blocked  # screened
    assert parse_frontmatter("---\nname: x\nno end")[0] == {}
    assert claude_project_key("/tmp/my proj.x") == "-tmp-my-proj-x"
    # past 200 characters: cut, then the base-36 hash (values from Claude Code's own function)
    assert claude_project_key("/a" * 150).endswith("-a-g3ckr0")
    assert len(claude_project_key("/a" * 150)) == 200 + 1 + len("g3ckr0")


def test_import_once_with_source_screened_and_read_only(
    cli: Cli, project: Path, user_home: Path
) -> None:
    _git(project)
    cli("init")
    folder = claude_folder(user_home, project)
    (folder / "feedback_pnpm.md").write_text(PNPM)
    (folder / "reference_key.md").write_text(SECRET)
    (folder / "MEMORY.md").write_text("- [Use pnpm](feedback_pnpm.md) — pnpm only\n")
    before = snapshot(folder)

    first = cli.result("import")
    assert [i["src"] for i in first["imported"]] == ["claude:feedback_pnpm.md"]
    assert first["blocked"][0]["src"] == "claude:reference_key.md"
    assert "aws key" in first["blocked"][0]["reason"]
    assert first["index"]["claude"] == {"files": 2, "index_lines": 1}
    text = semantic(project)
    assert "Always use pnpm, never npm" in text and "src=claude:feedback_pnpm.md" in text
    assert "AKIA" not in text  # the file is reported, not copied
    assert "## Quality Rules\n- [" in text and "[0.70]" in text

    second = cli.result("import")
    assert second["imported"] == [] and second["updated"] == [] and second["unchanged"] == 1
    assert semantic(project) == text  # byte for byte: nothing doubled, nothing rewritten

    entries = cli.result("entries")["entries"]
    assert [e["origin"] for e in entries] == ["claude:feedback_pnpm.md"]
    assert "claude:feedback_pnpm.md" in cli("entries").stdout
    assert snapshot(folder) == before  # the tool's folder: same bytes, same mtimes


def test_edit_updates_one_entry_and_delete_flags_it(
    cli: Cli, project: Path, user_home: Path
) -> None:
    _git(project)
    cli("init")
    folder = claude_folder(user_home, project)
    note = folder / "feedback_pnpm.md"
    note.write_text(PNPM)
    cli.result("import")
    entry_id = cli.result("entries")["entries"][0]["id"]

    note.write_text(PNPM.replace("never npm", "never npm or yarn"))
    updated = cli.result("import")
    assert [u["entry_id"] for u in updated["updated"]] == [entry_id]
    entries = cli.result("entries")["entries"]
    assert len(entries) == 1 and "never npm or yarn" in entries[0]["text"]
    assert entries[0]["id"] == entry_id

    note.unlink()
    dry = cli.result("import", "--dry-run")
    assert dry["flagged"] == [{"src": "claude:feedback_pnpm.md", "entry_id": entry_id}]
    assert cli.result("entries")["entries"][0]["state"] == "active"  # dry run: no change
    gone = cli.result("import")
    assert gone["flagged"] == [{"src": "claude:feedback_pnpm.md", "entry_id": entry_id}]
    (flagged,) = cli.result("entries")["entries"]
    assert flagged["state"] == "flagged"  # kept, for review: nothing silently deleted
    assert "deleted by the tool" in semantic(project)
    review = cli.result("maintain", "--dry-run")
    assert any("which the tool deleted" in p["reason"] for p in review["proposals"])
    assert cli.result("import")["flagged"] == []  # flagged once


def test_context_for_a_tool_leaves_out_its_own_facts(
    cli: Cli, project: Path, user_home: Path
) -> None:
    _git(project)
    cli("init")
    folder = claude_folder(user_home, project)
    (folder / "feedback_pnpm.md").write_text(PNPM)
    (folder / "MEMORY.md").write_text(PNPM_INDEX)  # Claude Code loads what its index names
    cli("save-semantic", "Run the linter before every commit", "--category", "quality_rule")
    cli.result("import")
    # 0.70 is the medium band: injected when relevant to the task (core/context.py)
    task = ("--task", "install the pnpm dependencies and commit with the linter")
    everyone = cli("context", *task).stdout
    for_claude = cli("context", *task, "--for", "claude").stdout
    for_gemini = cli("context", *task, "--for", "gemini").stdout
    assert "pnpm" in everyone and "pnpm" in for_gemini
    assert "pnpm" not in for_claude and "Run the linter" in for_claude

    # Claude Code's index loses the line (it rewrote MEMORY.md): it no longer knows the fact,
    # so the fact is served to it like to any other tool (issue 29).
    (folder / "MEMORY.md").write_text("- [Style](feedback_style.md) — other things\n")
    cli.result("import")
    assert "pnpm" in cli("context", *task, "--for", "claude").stdout
    (folder / "MEMORY.md").unlink()  # no index at all: nothing is loaded by Claude Code
    cli.result("import")
    assert "pnpm" in cli("context", *task, "--for", "claude").stdout
    (folder / "MEMORY.md").write_text(PNPM_INDEX)  # the line is back: left out again
    cli.result("import")
    assert "pnpm" not in cli("context", *task, "--for", "claude").stdout


def test_session_start_hook_imports_and_serves_without_doubling(
    cli: Cli, project: Path, user_home: Path
) -> None:
    _git(project)
    cli("init")
    (claude_folder(user_home, project) / "feedback_pnpm.md").write_text(PNPM)
    (claude_folder(user_home, project) / "MEMORY.md").write_text(PNPM_INDEX)
    cli.result("import", "--dry-run")  # changes nothing: the hook still has it to import
    hook_input = {
        "session_id": "s-1",
        "cwd": str(project),
        "transcript_path": str(user_home / ".claude" / "projects" / "x" / "s-1.jsonl"),
        "hook_event_name": "SessionStart",
    }
    claude_out = run_hook(cli, project, hook_input, "8")
    assert "src=claude:feedback_pnpm.md" in semantic(project)  # imported by the hook ...
    assert "pnpm" not in claude_out  # ... and not served back to Claude Code
    # A session start has no task: confirmed (0.80, the always band) it reaches every other tool.
    cli("reinforce", cli.result("entries")["entries"][0]["id"], "--confirm")
    assert "pnpm" in run_hook(cli, project, hook_input, "8", tool="gemini")  # another tool gets it


def run_hook(
    cli: Cli, project: Path, payload: dict[str, Any], deadline: str, tool: str = "claude"
) -> str:
    """Run ``tool``'s session-start hook as the tool does; its stdout (exit 0 asserted)."""
    done = subprocess.run(
        [*cli_argv(), "hook", tool, "session-start"],
        input=json.dumps(payload),
        cwd=project,
        env={**cli.env, "MAESTRO_HOOK_DEADLINE": deadline},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    return done.stdout


def test_a_held_lock_skips_the_hooks_import_not_its_context(
    cli: Cli, project: Path, user_home: Path, maestro_home: Path
) -> None:
    _git(project)
    cli("init")
    rule = ("Run the linter before every commit", "--category", "quality_rule")
    cli("save-semantic", *rule, "--confidence", "1.0")  # the always band: in every context
    (claude_folder(user_home, project) / "feedback_pnpm.md").write_text(PNPM)
    payload = {"session_id": "s-1", "cwd": str(project), "hook_event_name": "SessionStart"}
    # Someone else's long transaction: the import may not wait for it past the hook's
    # deadline less the context's reserve, and the context (a lock-free read) still comes.
    fd = os.open(project / ".maestro" / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        out = run_hook(cli, project, {**payload, "session_id": None}, deadline="4")
    finally:
        os.close(fd)
    assert "Run the linter" in out
    log = (paths.resolve({"MAESTRO_HOME": str(maestro_home)}).log_dir / "hooks.log").read_text()
    assert "tool memories not imported" in log and "held by another writer" in log
    assert "src=" not in semantic(project)
    run_hook(cli, project, payload, deadline="8")  # the lock is free: the next start imports
    assert "src=claude:feedback_pnpm.md" in semantic(project)


def cli_argv() -> list[str]:
    from maestroctl_runner import CLI

    return list(CLI)


def test_a_memory_with_a_password_in_words_is_blocked(
    cli: Cli, project: Path, user_home: Path
) -> None:
    _git(project)
    cli("init")
    folder = claude_folder(user_home, project)
    (folder / "reference_vpn.md").write_text(
        "---\nname: vpn\ndescription: vpn login\nmetadata:\n  type: reference\n---\n\n"
        "Log into the VPN as deploy / S3cr3t!x when the office is closed.\n"
    )
    result = cli.result("import")
    assert result["imported"] == [] and result["blocked"][0]["src"] == "claude:reference_vpn.md"
    assert "password" in result["blocked"][0]["reason"]
    assert "S3cr3t" not in semantic(project)


@pytest.mark.usefixtures("daemon")
def test_through_the_daemon_same_result(cli: Cli, project: Path, user_home: Path) -> None:
    _git(project)
    cli("init")
    cli("register")
    folder = claude_folder(user_home, project)
    # four memories, one index line (what parallel Claude Code sessions left)
    for i, fact in enumerate(FOUR_FACTS):
        (folder / f"project_fact_{i}.md").write_text(
            f"---\nname: fact-{i}\ndescription: d\nmetadata:\n  type: project\n---\n\n{fact}\n"
        )
    (folder / "MEMORY.md").write_text("- [Fact 0](project_fact_0.md) — one\n")
    result = cli.result("import")
    assert len(result["imported"]) == 4 and result["index"]["claude"]["index_lines"] == 1
    assert cli.result("import")["unchanged"] == 4
    assert len(cli.result("entries")["entries"]) == 4


def test_gemini_and_codex_notes(cli: Cli, project: Path, user_home: Path) -> None:
    cli("init")
    gemini = user_home / ".gemini"
    (gemini / "tmp" / "proj" / "memory").mkdir(parents=True)
    (gemini / "projects.json").write_text(json.dumps({"projects": {str(project): "proj"}}))
    (gemini / "tmp" / "proj" / "memory" / "MEMORY.md").write_text(
        "# Memory\n\n- The CI runs on Fridays only\n- password = hunter2hunter2\n"
    )
    codex = user_home / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "memory_summary.md").write_text("- Prefer small pull requests\n")
    result = cli.result("import", "gemini", "codex")
    sources = sorted(i["src"].split("#")[0] for i in result["imported"])
    assert sources == ["codex:memory_summary.md", "gemini:MEMORY.md"]
    assert len(result["blocked"]) == 1 and "hunter2" not in semantic(project)
    assert cli("import", "nosuchtool", check=2).returncode == 2


def test_a_config_setting_turns_a_tool_off(
    cli: Cli, project: Path, user_home: Path, maestro_home: Path
) -> None:
    _git(project)
    cli("init")
    (claude_folder(user_home, project) / "feedback_pnpm.md").write_text(PNPM)
    config = maestro_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[import]\nclaude = false\n")
    result = cli.result("import")
    assert result["imported"] == [] and not result["locations"][0]["enabled"]
    assert "pnpm" not in semantic(project)


def test_git_root_of_a_subfolder(tmp_path: Path) -> None:
    _git(tmp_path)
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert git_root(tmp_path / "a" / "b") == tmp_path
    assert os.path.isabs(str(git_root(tmp_path)))


def test_watch_points_follow_the_path_down(tmp_path: Path) -> None:
    from maestro_memory.common.toolsources import locate, watch_points

    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    (home / ".codex" / "memories").mkdir(parents=True)
    points = dict(watch_points(locate(project, home, {}), home))
    # Claude Code never ran: home, for ".claude"; Gemini has no slug and no ~/.gemini yet:
    # home, for ".gemini" (both land on home; the daemon merges them); Codex's folder itself.
    assert points[home] in (frozenset({".claude"}), frozenset({".gemini"}))
    assert points[home / ".codex" / "memories"] is None
    key_dir = home / ".claude" / "projects" / claude_project_key(str(project))
    key_dir.mkdir(parents=True)
    (home / ".gemini").mkdir()
    points = dict(watch_points(locate(project, home, {}), home))
    assert points[key_dir] == frozenset({"memory"})
    assert points[home / ".gemini"] == frozenset({"projects.json"})
    off = dict(watch_points(locate(project, home, {"claude": False, "gemini": False}), home))
    assert list(off) == [home / ".codex" / "memories"]
    moved = locate(project, home, {"claude_dir": "~/notes"})["claude"]
    assert moved.folder == home / "notes" and moved.how == "config.toml"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"claude": "no"}, "claude must be true or false"),
        ({"gemini_dir": "relative/dir"}, "must be absolute or start with ~/"),
        ({"cursor": True}, "unknown key 'cursor'"),
    ],
)
def test_a_bad_import_table_is_named(table: dict[str, Any], message: str) -> None:
    from maestro_memory.common.toolsources import check_import_config

    with pytest.raises(ValueError, match=message):
        check_import_config(table)
    assert check_import_config({"claude": False, "codex_dir": "~/x"})  # a good one passes


def test_doctor_shows_each_folder_and_who_imports(
    cli: Cli, project: Path, user_home: Path, maestro_home: Path
) -> None:
    _git(project)
    cli("init")
    folder = claude_folder(user_home, project)
    run = cli("doctor", "--json", check=None)
    checks = {c["name"]: c for c in json.loads(run.stdout)["result"]["checks"]}
    assert checks["tool memory (claude)"]["detail"].startswith(f"{folder} (found;")
    assert "project not in projects.json" in checks["tool memory (gemini)"]["detail"]
    assert "session start" in checks["tool memory import"]["detail"]  # no daemon here
    config = maestro_home / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[import]\nclaude = "no"\n')
    run = cli("doctor", "--json", check=None)
    checks = {c["name"]: c for c in json.loads(run.stdout)["result"]["checks"]}
    assert checks["tool memories"]["status"] == "fail"
    assert "claude must be true or false" in checks["tool memories"]["detail"]
