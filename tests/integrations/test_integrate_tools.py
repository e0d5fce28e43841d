"""``integrate codex`` / ``integrate gemini`` on existing config files (fast, no CLI: the real
CLIs' acceptance of what is written is tests/e2e/test_integrate_tools.py), and ``hook <tool>
<event>`` saying which tool acted."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.client.integrations.codex_settings import hook_hash
from maestro_memory.core import MemoryStore, Settings

from .support import run_cli as _run_cli

# A loaded machine misses the hooks' 0.95 s deadline; widened as test_hooks.py does.
HOOK_ENV = {"MAESTRO_HOOK_DEADLINE": "10"}


def run_cli(
    args: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return _run_cli(args, input=input, env={**(env or os.environ), **HOOK_ENV})


CODEX_CONFIG = """# my codex config
model = "o3"  # keep this comment

[projects."/elsewhere"]
trust_level = "trusted"

[mcp_servers.other]
command = "other-mcp"
"""
GEMINI_SETTINGS = {
    "theme": "Dracula",
    "hooks": {"BeforeAgent": [{"hooks": [{"type": "command", "command": "lint", "timeout": 5}]}]},
    "mcpServers": {"other": {"command": "other-mcp"}},
}


@pytest.fixture
def env(tmp_path: Path, maestro_home: Path) -> dict[str, str]:
    home = tmp_path / "person"
    home.mkdir()
    return {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}


def integrate(project: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = run_cli(["-C", str(project), "integrate", *args, "--json"], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)["result"]
    return result


def test_codex_merges_into_a_persons_config_and_remove_restores_it(
    project: Path, env: dict[str, str]
) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)

    dry = integrate(project, env, "codex", "--trust", "--dry-run")
    assert config.read_text() == CODEX_CONFIG and not (project / ".codex").exists()
    assert {f["action"] for f in dry["files"]} == {"create", "update"}

    integrate(project, env, "codex", "--trust")
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG)  # the person's lines, comments included, untouched
    doc = tomllib.loads(text)
    assert doc["model"] == "o3" and doc["mcp_servers"]["other"] == {"command": "other-mcp"}
    assert doc["mcp_servers"]["maestro"]["args"] == ["mcp"]
    assert doc["mcp_servers"]["maestro"]["env"] == {"MAESTRO_HOME": env["MAESTRO_HOME"]}
    assert doc["projects"][str(project)] == {"trust_level": "trusted"}
    hooks_json = project / ".codex" / "hooks.json"
    hooks = json.loads(hooks_json.read_text())["hooks"]
    assert sorted(hooks) == ["SessionEnd", "SessionStart", "UserPromptSubmit"]
    start = hooks["SessionStart"][0]["hooks"][0]
    assert start["command"].endswith("maestroctl hook codex session-start || true")
    key = f"{hooks_json}:session_start:0:0"
    assert doc["hooks"]["state"][key]["trusted_hash"] == hook_hash(
        "SessionStart", start["command"], 10
    )

    again = integrate(project, env, "codex", "--trust")
    assert {f["action"] for f in again["files"]} == {"unchanged"}
    integrate(project, env, "codex", "--remove")
    assert config.read_text() == CODEX_CONFIG
    assert not hooks_json.exists()


def test_codex_without_trust_says_exactly_what_is_missing(
    project: Path, env: dict[str, str]
) -> None:
    report = integrate(project, env, "codex")
    doc = tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text())
    assert "hooks" not in doc and "projects" not in doc  # nothing trusted silently
    assert "default_tools_approval_mode" not in doc["mcp_servers"]["maestro"]
    [todo] = report["todo"]
    assert "--trust" in todo and "trusted_hash" in todo and f'[projects."{project}"]' in todo


def test_codex_keeps_a_persons_own_project_trust_level(project: Path, env: dict[str, str]) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[projects."{project}"]\ntrust_level = "untrusted"\n')
    report = integrate(project, env, "codex", "--trust")
    assert tomllib.loads(config.read_text())["projects"][str(project)] == {
        "trust_level": "untrusted"
    }
    assert any("untrusted" in t for t in report["todo"])


def test_codex_refuses_a_broken_config_and_changes_nothing(
    project: Path, env: dict[str, str]
) -> None:
    config = Path(env["CODEX_HOME"]) / "config.toml"
    config.parent.mkdir()
    config.write_text("model = \n")
    proc = run_cli(["-C", str(project), "integrate", "codex", "--trust"], env=env)
    assert proc.returncode == 1 and b"not valid TOML" in proc.stderr
    assert config.read_text() == "model = \n" and not (project / ".codex").exists()


def test_gemini_merges_and_remove_restores(project: Path, env: dict[str, str]) -> None:
    user = Path(env["HOME"]) / ".gemini" / "settings.json"
    user.parent.mkdir()
    user.write_text(json.dumps(GEMINI_SETTINGS, indent=4) + "\n")
    before = user.read_text()

    report = integrate(project, env, "gemini")
    assert any("TRUST_FOLDER" in t for t in report["todo"])
    assert not (user.parent / "trustedFolders.json").exists()
    hooks = json.loads((project / ".gemini" / "settings.json").read_text())["hooks"]
    assert sorted(hooks) == ["BeforeAgent", "SessionEnd", "SessionStart"]
    assert hooks["BeforeAgent"][0]["hooks"][0]["command"].endswith(
        "maestroctl hook gemini user-prompt || true"
    )
    assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 10_000  # milliseconds
    settings = json.loads(user.read_text())
    assert settings["theme"] == "Dracula" and settings["mcpServers"]["other"]
    assert settings["mcpServers"]["maestro"]["env"] == {"MAESTRO_HOME": env["MAESTRO_HOME"]}
    assert "trust" not in settings["mcpServers"]["maestro"]

    integrate(project, env, "gemini", "--trust")
    trusted = json.loads((user.parent / "trustedFolders.json").read_text())
    assert trusted == {str(project): "TRUST_FOLDER"}
    assert json.loads(user.read_text())["mcpServers"]["maestro"]["trust"] is True

    integrate(project, env, "gemini", "--remove")
    assert user.read_text() == before
    assert not (project / ".gemini" / "settings.json").exists()


def test_user_scope_of_gemini_writes_one_file(project: Path, env: dict[str, str]) -> None:
    integrate(project, env, "gemini", "--scope", "user")
    user = Path(env["HOME"]) / ".gemini" / "settings.json"
    settings = json.loads(user.read_text())
    assert set(settings) == {"hooks", "mcpServers"}
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command.startswith("test -x /") and " hook gemini session-start" in command
    integrate(project, env, "gemini", "--scope", "user", "--remove")
    assert not user.exists()


@pytest.mark.parametrize(
    ("tool", "event_name"), [("codex", "UserPromptSubmit"), ("gemini", "BeforeAgent")]
)
def test_the_prompt_hook_answers_in_the_tools_own_event_and_logs_the_tool(
    maestro_home: Path, project: Path, tool: str, event_name: str
) -> None:
    (project / ".maestro").mkdir()
    payload = {
        "session_id": "s-1",
        "cwd": str(project),
        "hook_event_name": event_name,
        "prompt": "From now on, use pnpm instead of npm.",
    }
    proc = run_cli(["hook", tool, "user-prompt"], input=json.dumps(payload).encode())
    answer = json.loads(proc.stdout)
    assert answer["systemMessage"].startswith("Remembered: ")  # shown to the person
    # The prompt as the task: an unrelated rule is injected under the tool's own event name.
    MemoryStore(project).save_semantic("Always run pnpm audit before a release", "quality_rule")
    again = dict(payload, prompt="Prepare the pnpm release")
    proc = run_cli(["hook", tool, "user-prompt"], input=json.dumps(again).encode())
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == event_name
    assert "pnpm audit" in out["additionalContext"]
    garbage = run_cli(["hook", tool, "session-start"], input=b"not json")
    assert garbage.returncode == 0 and garbage.stdout == b""
    from maestro_memory.common import paths

    log = (paths.resolve({"MAESTRO_HOME": str(maestro_home)}).log_dir / "hooks.log").read_text()
    assert f" {tool} session-start: hook input is not JSON" in log


def test_geminis_before_agent_prompt_does_not_feed_the_memory_its_own_block(
    maestro_home: Path, project: Path
) -> None:
    store = MemoryStore(project)
    store.save_semantic("Always use pnpm instead of npm", "user_preference", 0.8)
    start = {"session_id": "g-1", "cwd": str(project), "hook_event_name": "SessionStart"}
    proc = run_cli(["hook", "gemini", "session-start"], input=json.dumps(start).encode())
    block = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "pnpm" in block
    [before] = MemoryStore(project).semantic_entries()
    prompt = {
        "session_id": "g-1",
        "cwd": str(project),
        "hook_event_name": "BeforeAgent",
        "prompt": f"<hook_context>{block}</hook_context>\n\nAdd left-pad.",
    }
    proc = run_cli(["hook", "gemini", "user-prompt"], input=json.dumps(prompt).encode())
    assert proc.returncode == 0 and proc.stdout == b""
    [after] = MemoryStore(project).semantic_entries()
    assert after.confidence == before.confidence


def test_a_codex_session_is_named_for_its_tool(maestro_home: Path, project: Path) -> None:
    (project / ".maestro").mkdir()
    MemoryStore(project).save_semantic("Always use pnpm instead of npm", "user_preference", 1.0)
    start = {"session_id": "abc", "cwd": str(project), "hook_event_name": "SessionStart"}
    run_cli(["hook", "codex", "session-start"], input=json.dumps(start).encode())
    ledger = json.loads((project / ".maestro" / "memory" / ".state.json").read_text())
    assert "codex:abc" in ledger["sessions"]


@pytest.mark.parametrize("tool", ["codex", "gemini"])
def test_session_end_runs_maintenance_for_codex_and_gemini(
    maestro_home: Path, project: Path, tool: str
) -> None:
    # Three sessions of decay in one day: the per-session unit, as test_hooks.py does.
    s = MemoryStore(project, clock=lambda: "2026-01-01", settings=Settings(decay_unit="session"))
    s.save_semantic("Likes emoji in commit messages", "user_preference", 0.3)
    s.save_semantic("Never commit secrets", "quality_rule", 1.0)
    for sid in "abc":
        s.initialize(sid)
    assert any(e.state == "flagged" for e in s.semantic_entries())
    payload = {"session_id": "x", "cwd": str(project), "hook_event_name": "SessionEnd"}
    proc = run_cli(["hook", tool, "session-end"], input=json.dumps(payload).encode())
    assert proc.returncode == 0 and proc.stdout == b""
    assert [e.text for e in s.semantic_entries()] == ["Never commit secrets"]
