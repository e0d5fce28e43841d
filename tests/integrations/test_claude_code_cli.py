"""The real Claude Code CLI (npm ``@anthropic-ai/claude-code``) checks what we ship for it:
the plugin marketplace at the repository root, the plugin, and the three documented ways to
register the MCP server. All of it runs offline (no model call): ``plugin validate``,
``plugin marketplace add`` / ``plugin install`` of a local folder, and ``mcp list``, which
starts each server and health-checks it over stdio.

The CLI is found as tests/e2e finds it: ``MAESTRO_E2E_CLAUDE`` (the binary), else
``MAESTRO_E2E_BIN_DIR/claude``, else the cache ``tests/e2e/install_clis.sh`` fills
(``${MAESTRO_E2E_CACHE:-~/.cache/maestro-e2e}/*/node_modules/.bin/claude``). Absent, the tests
skip (``MAESTRO_E2E_REQUIRED=1`` makes that a failure).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from maestro_memory.client.integrations.claude_settings import CLAUDE_HOOKS, hook_command

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugins" / "maestro-memory"
TIMEOUT = 180


def find_claude() -> str | None:
    if os.environ.get("MAESTRO_E2E_CLAUDE"):
        return os.environ["MAESTRO_E2E_CLAUDE"]
    if os.environ.get("MAESTRO_E2E_BIN_DIR"):
        candidate = Path(os.environ["MAESTRO_E2E_BIN_DIR"]) / "claude"
        return str(candidate) if candidate.exists() else None
    cache = Path(os.environ.get("MAESTRO_E2E_CACHE") or Path.home() / ".cache" / "maestro-e2e")
    # Only complete installs: an install in progress (.install-*, see install_clis.sh) is
    # skipped even though pathlib's "*" matches dot folders.
    found = sorted(
        (
            p
            for p in cache.glob("*/node_modules/.bin/claude")
            if (p.parents[2] / ".complete").exists()
        ),
        key=lambda p: p.stat().st_mtime,
    )
    return str(found[-1]) if found else None


@pytest.fixture
def claude(tmp_path: Path) -> Claude:
    binary = find_claude()
    if binary is None:
        reason = "the claude CLI is not installed: run tests/e2e/install_clis.sh"
        if os.environ.get("MAESTRO_E2E_REQUIRED") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return Claude(binary, tmp_path)


class Claude:
    """``claude`` with a private HOME, offline, maestroctl (this venv's) on PATH."""

    def __init__(self, binary: str, tmp: Path) -> None:
        self.binary = binary
        self.home = tmp / "home"
        self.home.mkdir()
        self.project = tmp / "project"
        self.project.mkdir()
        bin_dir = Path(sys.executable).parent
        if not (bin_dir / "maestroctl").exists():
            pytest.skip("no maestroctl script beside this Python (package not installed)")
        foreign = ("ANTHROPIC_", "CLAUDE", "XDG_")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(foreign)}
        self.env.update(
            HOME=str(self.home),
            PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            MAESTRO_HOME=str(tmp / "maestro-home"),
            ANTHROPIC_API_KEY="sk-ant-test-dummy",
            ANTHROPIC_BASE_URL="http://127.0.0.1:9",  # nothing listens: no call leaves
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        )

    def __call__(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *args],
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )

    def server_line(self, name: str) -> str:
        listed = self("mcp", "list")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        lines = [x for x in listed.stdout.splitlines() if x.startswith(f"{name}:")]
        assert lines, listed.stdout
        return lines[0]


def test_the_shipped_plugin_matches_the_package() -> None:
    """The plugin's hooks are exactly the portable commands; its version is the package's."""
    from importlib.metadata import version

    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    for claude_event, event, timeout in CLAUDE_HOOKS:
        assert hooks[claude_event] == [
            {"hooks": [{"type": "command", "command": hook_command(event), "timeout": timeout}]}
        ]
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["version"] == version("maestro-agent-memory")
    listed = next(p for p in market["plugins"] if p["name"] == "maestro-memory")
    assert listed["version"] == manifest["version"]
    assert (REPO / listed["source"]).resolve() == PLUGIN
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"maestro": {"command": "maestroctl", "args": ["mcp"]}}


def test_plugin_validate_passes_on_the_marketplace_and_the_plugin(claude: Claude) -> None:
    market = claude("plugin", "validate", str(REPO))
    assert market.returncode == 0, market.stdout + market.stderr
    assert "Validation passed" in market.stdout
    plugin = claude("plugin", "validate", str(PLUGIN))
    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert "Validation passed" in plugin.stdout
    for claude_event, _, _ in CLAUDE_HOOKS:
        assert claude_event in plugin.stdout  # it read every hook
    assert "maestroctl" in plugin.stdout and "mcpServers" in plugin.stdout


def test_plugin_install_gives_a_connected_mcp_server(claude: Claude) -> None:
    added = claude("plugin", "marketplace", "add", str(REPO))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = claude("plugin", "install", "maestro-memory@maestro-memory")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "Connected" in claude.server_line("plugin:maestro-memory:maestro")


def test_mcp_add_by_name_is_connected(claude: Claude) -> None:
    added = claude("mcp", "add", "maestro", "--", "maestroctl", "mcp")
    assert added.returncode == 0, added.stdout + added.stderr
    assert "Connected" in claude.server_line("maestro")


def test_the_documented_mcp_json_is_connected_once_approved(claude: Claude) -> None:
    (claude.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"maestro": {"command": "maestroctl", "args": ["mcp"]}}})
    )
    assert "Connected" not in claude.server_line("maestro")  # a project server needs approval
    # What the approval prompt records: the folder trusted, the server enabled.
    (claude.project / ".claude").mkdir()
    (claude.project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledMcpjsonServers": ["maestro"]})
    )
    config_path = claude.home / ".claude.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    config.setdefault("projects", {}).setdefault(str(claude.project), {})[
        "hasTrustDialogAccepted"
    ] = True
    config_path.write_text(json.dumps(config))
    assert "Connected" in claude.server_line("maestro")
