"""The stand-ins can answer with tool calls (``api.script.on(marker, ToolCall(...))``), so a
test can make a CLI act as if its model chose to: write a file, call an MCP tool (with each
CLI's real MCP client: Claude Code, Gemini and Codex)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .agents import ClaudeAgent, CodexAgent, GeminiAgent
from .conftest import run_maestroctl
from .fake_base import ToolCall
from .fake_openai import offered_tools

FACT = "Deploy with the blue-green script"


def remember(project: Path) -> None:
    run_maestroctl(
        "-C",
        str(project),
        "save-semantic",
        FACT,
        "--category",
        "project_context",
        "--confidence",
        "1.0",
    )


def tool_results(run_requests: Sequence[object]) -> str:
    return json.dumps([getattr(r, "body", None) for r in run_requests][1:])


def test_claude_code_writes_the_file_the_model_asks_for(claude: ClaudeAgent) -> None:
    target = claude.project / "notes" / "plan.md"
    claude.api.script.on(
        "WRITE-PLAN", ToolCall("Write", {"file_path": str(target), "content": "step one\n"})
    )
    run = claude.run("WRITE-PLAN now", "--permission-mode", "acceptEdits")
    assert target.read_text() == "step one\n"
    assert len(run.model_requests) == 2  # the tool call, then the turn with its result


def test_claude_code_mcp_search_round_trip(claude: ClaudeAgent, maestro_project: Path) -> None:
    remember(maestro_project)
    claude.wire_mcp()
    claude.api.script.on("FIND-IT", ToolCall("mcp__maestro__search", {"query": "deploy"}))
    run = claude.run("FIND-IT please", "--allowedTools", "mcp__maestro__search")
    assert len(run.model_requests) == 2
    assert FACT in tool_results(run.model_requests)


def test_gemini_mcp_search_round_trip(gemini: GeminiAgent, maestro_project: Path) -> None:
    remember(maestro_project)
    gemini.wire_mcp()
    gemini.api.script.on("FIND-IT", ToolCall("mcp_maestro_search", {"query": "deploy"}))
    run = gemini.run("FIND-IT please")
    offered = {
        f["name"]
        for tools in run.model_requests[0].body.get("tools", [])
        for f in tools.get("functionDeclarations", [])
    }
    assert {"mcp_maestro_search", "mcp_maestro_get_context"} <= offered
    assert FACT in tool_results(run.model_requests)


def test_codex_mcp_search_round_trip(codex: CodexAgent, maestro_project: Path) -> None:
    remember(maestro_project)
    codex.wire_mcp()
    codex.api.script.on("FIND-IT", ToolCall("mcp__maestro__search", {"query": "deploy"}))
    run = codex.run("FIND-IT please")
    # Codex offers an MCP server's tools nested in a namespace entry of `tools`; the stand-in
    # calls `search` in namespace `mcp__maestro`, as a model would.
    offered = offered_tools(run.model_requests[0].body)
    assert offered["mcp__maestro__search"] == ("mcp__maestro", "search")
    assert offered["mcp__maestro__get_context"] == ("mcp__maestro", "get_context")
    assert len(run.model_requests) == 2  # the tool call, then the turn with its result
    assert "unsupported call" not in tool_results(run.model_requests)
    assert FACT in tool_results(run.model_requests)
