"""The real ``claude -p`` with the hooks ``maestroctl integrate claude --scope local`` writes
while maestrod's HTTP door is open (the prompt and session-end hooks are ``http`` hooks, the
session start a command that asks the door with curl), and the real Codex and Gemini CLIs
with the MCP server ``integrate`` points at the door: MCP over streamable HTTP from the same
daemon, no process per session."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from maestro_memory.common.httpdoor import recorded_port

from .agents import ClaudeAgent, CodexAgent, GeminiAgent
from .fake_base import ToolCall
from .fake_openai import offered_tools
from .test_scripted_tool_calls import FACT, remember, tool_results

RULE = "From now on, always use pnpm instead of npm"


def hooks_of(project: Path) -> dict[str, list[dict[str, Any]]]:
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    return {e: [h for g in groups for h in g["hooks"]] for e, groups in settings["hooks"].items()}


def test_claude_code_runs_the_http_hooks_and_the_http_mcp_server(
    claude: ClaudeAgent, maestro_project: Path, daemon: Any
) -> None:
    port = recorded_port(daemon.paths)
    assert port is not None, daemon.stderr_text()[-2000:]
    claude.maestroctl("integrate", "claude", "--scope", "local")
    hooks = hooks_of(maestro_project)
    assert [h["type"] for h in hooks["UserPromptSubmit"]] == ["http"]
    assert [h["type"] for h in hooks["SessionEnd"]] == ["http"]
    assert [h["type"] for h in hooks["SessionStart"]] == ["command"]

    first = claude.run(RULE)
    assert first.returncode == 0, first.stderr[-2000:]
    # The http prompt hook (no process) remembered the rule, in the file people read.
    semantic = (maestro_project / ".maestro" / "memory" / "semantic.md").read_text()
    assert "pnpm" in semantic, f"hooks.log:\n{first.hook_log()}"

    url = f"http://127.0.0.1:{port}/mcp"
    added = claude.tool("mcp", "add", "--scope", "local", "--transport", "http", "maestro", url)
    assert added.returncode == 0, added.stdout + added.stderr
    claude.api.script.on("FIND-IT", ToolCall("mcp__maestro__search", {"query": "pnpm"}))
    found = claude.run("FIND-IT please", "--allowedTools", "mcp__maestro__search")
    assert found.returncode == 0, found.stderr[-2000:]
    later = json.dumps([r.body for r in found.model_requests[1:]])
    assert "Always use pnpm instead of npm" in later, found.stderr[-2000:]
    # The next session's start (a command) serves the rule too.
    assert any("pnpm" in b for b in found.memory())
    # ... through the door, with no Python: the command asks it with curl. A Python any hook
    # of this session started would die at once here (PYTHONHOME), yet the start's block came.
    claude.extra_env["PYTHONHOME"] = "/nonexistent"
    try:
        quiet = claude.run("Anything else?")
    finally:
        del claude.extra_env["PYTHONHOME"]
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    started = [
        t
        for r in quiet.model_requests
        for t in _texts(r.body)
        if t.startswith("SessionStart hook additional context:") and "pnpm" in t
    ]
    assert started, f"hooks.log:\n{quiet.hook_log()}"


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def test_codex_and_gemini_use_the_http_mcp_server_integrate_wrote(
    codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path, daemon: Any
) -> None:
    port = recorded_port(daemon.paths)
    assert port is not None, daemon.stderr_text()[-2000:]
    url = f"http://127.0.0.1:{port}/mcp"
    remember(maestro_project)

    codex.maestroctl("integrate", "codex", "--trust")
    config = tomllib.loads((codex.codex_home / "config.toml").read_text())
    assert config["mcp_servers"]["maestro"]["url"] == url
    codex.api.script.on("FIND-IT", ToolCall("mcp__maestro__search", {"query": "deploy"}))
    run = codex.run("FIND-IT please")
    assert offered_tools(run.model_requests[0].body)["mcp__maestro__search"] == (
        "mcp__maestro",
        "search",
    )
    assert FACT in tool_results(run.model_requests)

    gemini.maestroctl("integrate", "gemini", "--trust")
    settings = json.loads((gemini.home / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"]["maestro"]["httpUrl"] == url
    gemini.api.script.on("FIND-IT", ToolCall("mcp_maestro_search", {"query": "deploy"}))
    run = gemini.run("FIND-IT please")
    assert FACT in tool_results(run.model_requests)


def test_codex_and_gemini_user_scope_hooks_are_answered_by_the_door_without_python(
    codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path, daemon: Any
) -> None:
    """``integrate codex|gemini --scope user`` while the door is open: every hook is a command
    that asks the door with curl. A Python any hook started would die at once (PYTHONHOME), yet
    the prompt's rule is remembered and the next session starts with it."""
    assert recorded_port(daemon.paths) is not None, daemon.stderr_text()[-2000:]
    rules = (
        (codex, "From now on, always use pnpm instead of npm", "pnpm"),
        (gemini, "From now on, always run ruff before committing", "ruff"),
    )
    for agent, said, word in rules:
        agent.maestroctl("integrate", agent.name, "--scope", "user", "--trust")
        agent.extra_env["PYTHONHOME"] = "/nonexistent"
        first = agent.run(said)
        semantic = (maestro_project / ".maestro" / "memory" / "semantic.md").read_text()
        assert word in semantic, f"hooks.log:\n{first.hook_log()}"
        later = agent.run("Anything else?")
        assert any(word in b for b in later.memory()), later.stderr[-2000:]
        del agent.extra_env["PYTHONHOME"]
