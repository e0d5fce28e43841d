"""One memory for every agent tool: Codex and Gemini wired BY HAND to today's
``maestroctl hook claude …`` commands (no ``integrate codex|gemini`` yet), each with the trust
entries it needs. A rule said in Claude Code reaches both tools' next model requests."""

from __future__ import annotations

from pathlib import Path

from .agents import (
    CLAUDE_MAESTRO_HOOKS,
    CODEX_MAESTRO_HOOKS,
    GEMINI_MAESTRO_HOOKS,
    ClaudeAgent,
    CodexAgent,
    GeminiAgent,
    hook_command,
)

RULE = "From now on, always use pnpm instead of npm"


def wire(agent: ClaudeAgent | CodexAgent | GeminiAgent, events: dict[str, str]) -> Path:
    return agent.wire_hooks({event: hook_command(ours) for event, ours in events.items()})


def test_a_rule_said_in_claude_code_reaches_codex_and_gemini(
    claude: ClaudeAgent, codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path
) -> None:
    wire(claude, CLAUDE_MAESTRO_HOOKS)
    wire(codex, CODEX_MAESTRO_HOOKS)
    wire(gemini, GEMINI_MAESTRO_HOOKS)

    claude.run(RULE)
    assert "pnpm" in (maestro_project / ".maestro" / "memory" / "semantic.md").read_text()

    in_codex = codex.run("Add a dependency on left-pad.")
    assert any("pnpm" in b for b in in_codex.memory()), (
        f"not in Codex's request; hooks.log:\n{in_codex.hook_log()}\n{in_codex.stderr[-2000:]}"
    )
    # Codex puts additionalContext in a developer message of the turn's input.
    assert any(
        item.get("role") == "developer" and "pnpm" in str(item)
        for r in in_codex.model_requests
        for item in r.body["input"]
    )

    in_gemini = gemini.run("Add a dependency on left-pad.")
    assert any("pnpm" in b for b in in_gemini.memory()), (
        f"not in Gemini's request; hooks.log:\n{in_gemini.hook_log()}\n{in_gemini.stderr[-2000:]}"
    )
    # Gemini wraps it in <hook_context> in the user turn.
    assert any("<hook_context>" in r.text for r in in_gemini.model_requests)
