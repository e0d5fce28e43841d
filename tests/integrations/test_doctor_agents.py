"""``doctor`` checks the Claude Code integration: settings parse, hooks present and runnable,
MCP registered, recent failures in the hook log. Real files, the real command."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.client.integrations.agent_checks import hook_log_failures

from .support import run_cli

VENV_BIN = Path(sys.executable).parent


def doctor(project: Path, env: dict[str, str], path: list[Path]) -> dict[str, list[dict[str, Any]]]:
    run_env = {
        **env,
        "PATH": os.pathsep.join(str(p) for p in [*path, Path("/usr/bin"), Path("/bin")]),
    }
    proc = run_cli(["doctor", "-C", str(project), "--json"], env=run_env)
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True, doc
    by_name: dict[str, list[dict[str, Any]]] = {}
    for check in doc["result"]["checks"]:
        if check["name"].startswith("claude"):
            by_name.setdefault(check["name"], []).append(check)
    return by_name


def statuses(checks: list[dict[str, Any]]) -> list[str]:
    return [c["status"] for c in checks]


@pytest.fixture
def maestroctl_on_path() -> list[Path]:
    if not (VENV_BIN / "maestroctl").exists():
        pytest.skip("no maestroctl script beside this Python")
    return [VENV_BIN]


def test_nothing_installed_is_two_warnings(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude hooks"]) == ["warn"]
    assert "integrate claude" in found["claude hooks"][0]["fix"]
    assert statuses(found["claude mcp"]) == ["warn"]
    assert "claude mcp add maestro -- maestroctl mcp" in found["claude mcp"][0]["fix"]
    assert statuses(found["claude hook log"]) == ["ok"]


def test_portable_hooks_need_maestroctl_on_path(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    assert run_cli(["integrate", "claude", "-C", str(project)], env=env_home).returncode == 0
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude hooks"]) == ["ok"]
    missing = doctor(project, env_home, [])
    assert statuses(missing["claude hooks"]) == ["fail"]
    assert "not on PATH" in missing["claude hooks"][0]["detail"]


def test_machine_paths_in_project_settings_and_broken_programs(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path], tmp_path: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    program = VENV_BIN / "maestroctl"
    hooks = {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": f"{program} hook claude session-start"}]}
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": f"{program} hook claude user-prompt"}]}
        ],
        "SessionEnd": [
            {"hooks": [{"type": "command", "command": f"{program} hook claude session-end"}]}
        ],
    }
    settings.write_text(json.dumps({"hooks": hooks}))
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude hooks"]) == ["warn"]
    assert "a path of this machine" in found["claude hooks"][0]["detail"]

    gone = str(tmp_path / "old-venv" / "bin" / "maestroctl")
    settings.write_text(
        json.dumps({"hooks": json.loads(json.dumps(hooks).replace(str(program), gone))})
    )
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude hooks"]) == ["fail"]
    assert gone in found["claude hooks"][0]["detail"]


def test_unparseable_settings_fail(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"hooks": {,}')
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude settings"]) == ["fail"]
    assert "not valid JSON" in found["claude settings"][0]["detail"]


def test_mcp_registrations_are_found(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"memory": {"command": "maestroctl", "args": ["mcp"]}}})
    )
    found = doctor(project, env_home, maestroctl_on_path)
    assert (
        statuses(found["claude mcp"]) == ["ok"] and ".mcp.json" in found["claude mcp"][0]["detail"]
    )
    (project / ".mcp.json").unlink()
    home = Path(env_home["HOME"])
    server = {"type": "stdio", "command": str(VENV_BIN / "maestroctl"), "args": ["mcp"]}
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(project): {"mcpServers": {"maestro": server}}}})
    )
    found = doctor(project, env_home, maestroctl_on_path)
    assert (
        statuses(found["claude mcp"]) == ["ok"]
        and "this project" in found["claude mcp"][0]["detail"]
    )


def test_the_plugin_counts_and_twice_is_flagged(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    user = Path(env_home["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir()
    user.write_text(json.dumps({"enabledPlugins": {"maestro-memory@maestro-memory": True}}))
    found = doctor(project, env_home, maestroctl_on_path)
    assert statuses(found["claude hooks"]) == ["ok"]
    assert statuses(found["claude mcp"]) == ["ok"]
    assert run_cli(["integrate", "claude", "-C", str(project)], env=env_home).returncode == 0
    found = doctor(project, env_home, maestroctl_on_path)
    assert "runs twice" in " ".join(c["detail"] for c in found["claude hooks"])


def test_recent_hook_failures_are_counted(
    project: Path, env_home: dict[str, str], maestroctl_on_path: list[Path]
) -> None:
    log = Path(env_home["MAESTRO_HOME"]) / "log" / "hooks.log"
    log.parent.mkdir(parents=True)
    now = dt.datetime.now().astimezone()
    old = (now - dt.timedelta(days=30)).isoformat(timespec="milliseconds")
    recent = [(now - dt.timedelta(hours=h)).isoformat(timespec="milliseconds") for h in (5, 1)]
    log.write_text(
        f"{old} pid=1 claude session-start: long ago\n"
        f"{recent[0]} pid=2 claude user-prompt: gave up after 0.96 s (deadline 0.95 s)\n"
        f"{recent[1]} pid=3 claude session-start: cannot read the memory: disk full\n"
    )
    found = doctor(project, env_home, maestroctl_on_path)
    check = found["claude hook log"][0]
    assert check["status"] == "warn"
    assert check["detail"].startswith("2 hook problem(s)")
    assert check["detail"].endswith("claude session-start: cannot read the memory: disk full")
    assert hook_log_failures(log, now=now, days=40)[0] == 3
