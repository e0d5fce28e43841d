"""Claude Code's own tooling works offline (no model, no network): ``claude mcp add/list``
health-checks ``maestroctl mcp`` over stdio, and ``claude plugin validate`` checks a plugin
folder. These are the checks issue 13's plugin and MCP registration will be held to."""

from __future__ import annotations

import json
from pathlib import Path

from .agents import ClaudeAgent, maestroctl


def test_mcp_list_health_checks_maestroctl_mcp(claude: ClaudeAgent, maestro_project: Path) -> None:
    added = claude.tool("mcp", "add", "maestro", "--", maestroctl(), "mcp")
    assert added.returncode == 0, added.stderr
    # Local scope (the default) lives in ~/.claude.json under the project's path.
    config = json.loads((claude.home / ".claude.json").read_text())
    server = config["projects"][str(maestro_project)]["mcpServers"]["maestro"]
    assert server["command"] == maestroctl()
    assert server["args"] == ["mcp"]

    listed = claude.tool("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("maestro:"))
    assert "Connected" in line, listed.stdout


def test_a_project_mcp_json_server_needs_trust_and_approval(
    claude: ClaudeAgent, maestro_project: Path
) -> None:
    added = claude.tool("mcp", "add", "--scope", "project", "maestro", "--", maestroctl(), "mcp")
    assert added.returncode == 0, added.stderr
    assert json.loads((maestro_project / ".mcp.json").read_text())["mcpServers"]["maestro"] == {
        "type": "stdio",
        "command": maestroctl(),
        "args": ["mcp"],
        "env": {},
    }
    pending = claude.tool("mcp", "list")
    assert "Pending approval" in pending.stdout, pending.stdout

    # Approved in the project's (uncommitted) local settings, read once the folder is trusted.
    (maestro_project / ".claude").mkdir()
    (maestro_project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledMcpjsonServers": ["maestro"]})
    )
    still = claude.tool("mcp", "list")
    assert "Pending approval" in still.stdout, still.stdout
    path = claude.home / ".claude.json"
    config = json.loads(path.read_text())
    config.setdefault("projects", {}).setdefault(str(maestro_project), {})[
        "hasTrustDialogAccepted"
    ] = True
    path.write_text(json.dumps(config))
    connected = claude.tool("mcp", "list")
    line = next(x for x in connected.stdout.splitlines() if x.startswith("maestro:"))
    assert "Connected" in line, connected.stdout


def test_mcp_list_reports_a_server_that_cannot_start(claude: ClaudeAgent) -> None:
    claude.tool("mcp", "add", "broken", "--", str(claude.home / "no-such-program"))
    listed = claude.tool("mcp", "list")
    line = next(x for x in listed.stdout.splitlines() if x.startswith("broken:"))
    assert "Connected" not in line, listed.stdout


def write_plugin(root: Path, manifest: dict[str, object]) -> Path:
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (root / "hooks").mkdir()
    hooks = {
        "hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "maestroctl hook claude session-start"}]}
            ]
        }
    }
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    return root


def test_plugin_validate_runs_offline_and_tells_good_from_bad(
    claude: ClaudeAgent, tmp_path: Path
) -> None:
    good = write_plugin(
        tmp_path / "good", {"name": "maestro-memory", "version": "0.1.0", "description": "x"}
    )
    passed = claude.tool("plugin", "validate", str(good))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Validation passed" in passed.stdout
    assert "SessionStart" in passed.stdout  # it read the hooks

    bad = write_plugin(tmp_path / "bad", {"name": "maestro memory"})
    failed = claude.tool("plugin", "validate", str(bad))
    assert failed.returncode == 1
    assert "Validation failed" in failed.stdout
