"""One memory for every agent tool (issue 19), each wired the way a person wires it:
``maestroctl integrate claude``, ``integrate codex --trust``, ``integrate gemini --trust``.
Nothing here writes a CLI's hooks or trust entries by hand."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from .agents import ClaudeAgent, CodexAgent, GeminiAgent, memory_blocks
from .fake_base import ToolCall

RULE = "From now on, always use pnpm instead of npm"
SAVED = "pnpm"
Agent = ClaudeAgent | CodexAgent | GeminiAgent


def integrate(agent: Agent) -> None:
    trust = () if isinstance(agent, ClaudeAgent) else ("--trust",)
    agent.maestroctl("integrate", agent.name, *trust)


def semantic(project: Path) -> str:
    return (project / ".maestro" / "memory" / "semantic.md").read_text()


def lines_with(project: Path, needle: str) -> list[str]:
    """The entry lines (not the Maintenance Log's) of semantic.md holding ``needle``."""
    return [
        line
        for line in semantic(project).splitlines()
        if needle in line and re.match(r"- \[\d{4}-\d\d-\d\d\] \[\d\.\d\d\] ", line)
    ]


def save(agent: Agent, fact: str, confidence: str = "1.0") -> None:
    agent.maestroctl(
        "save-semantic", fact, "--category", "user_preference", "--confidence", confidence
    )


def test_a_rule_said_in_claude_code_reaches_codex_and_gemini(
    claude: ClaudeAgent, codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path
) -> None:
    for agent in (claude, codex, gemini):
        integrate(agent)

    claude.run(RULE)
    assert SAVED in semantic(maestro_project)

    in_codex = codex.run("Add a dependency on left-pad.")
    assert any(SAVED in b for b in in_codex.memory()), (
        f"not in Codex's request; hooks.log:\n{in_codex.hook_log()}\n{in_codex.stderr[-2000:]}"
    )
    # Codex puts additionalContext in a developer message of the turn's input.
    assert any(
        item.get("role") == "developer" and SAVED in str(item)
        for r in in_codex.model_requests
        for item in r.body["input"]
    )
    in_gemini = gemini.run("Add a dependency on left-pad.")
    assert any(SAVED in b for b in in_gemini.memory()), (
        f"not in Gemini's request; hooks.log:\n{in_gemini.hook_log()}\n{in_gemini.stderr[-2000:]}"
    )
    assert any("<hook_context>" in r.text for r in in_gemini.model_requests)
    assert len(lines_with(maestro_project, SAVED)) == 1


@pytest.mark.parametrize("speaker", ["codex", "gemini"])
def test_a_rule_said_in_codex_or_gemini_reaches_claude_code(
    claude: ClaudeAgent,
    codex: CodexAgent,
    gemini: GeminiAgent,
    maestro_project: Path,
    speaker: str,
) -> None:
    said_in: Agent = codex if speaker == "codex" else gemini
    integrate(claude)
    integrate(said_in)

    said_in.run(f"Never commit generated {speaker} bundles to git")
    assert lines_with(maestro_project, f"generated {speaker} bundles"), (
        f"not saved; hooks.log:\n{said_in.run('x', check=False).hook_log()}"
    )
    in_claude = claude.run("Tidy the build.")
    assert any(f"generated {speaker} bundles" in b for b in in_claude.memory())


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
def test_an_injected_rule_is_not_reinforced_or_saved_again_by_detection(
    claude: ClaudeAgent,
    codex: CodexAgent,
    gemini: GeminiAgent,
    maestro_project: Path,
    tool: str,
) -> None:
    agent: Agent = {"claude": claude, "codex": codex, "gemini": gemini}[tool]
    integrate(agent)
    # Saved at 0.8: detection of "Always use pnpm…" would restate it at 1.0.
    save(agent, "Always use pnpm instead of npm", "0.8")
    run = agent.run("Add a dependency on left-pad.")
    assert any(SAVED in b for b in run.memory()), f"hooks.log:\n{run.hook_log()}"
    [line] = lines_with(maestro_project, SAVED)
    assert "[1.00]" not in line, line
    assert not any("Remembered:" in r.text for r in run.model_requests)
    # A second session, the block in its prompt again (Gemini): still not raised to 1.0.
    agent.run("And now add lodash.")
    [line] = lines_with(maestro_project, SAVED)
    assert "[1.00]" not in line, line


def test_gemini_mcp_search_round_trip_wired_by_integrate(
    gemini: GeminiAgent, maestro_project: Path
) -> None:
    save(gemini, "Deploy with the blue-green script")
    integrate(gemini)
    gemini.api.script.on("FIND-IT", ToolCall("mcp_maestro_search", {"query": "deploy"}))
    run = gemini.run("FIND-IT please")
    later = json.dumps([r.body for r in run.model_requests[1:]])
    assert "Deploy with the blue-green script" in later, run.stderr[-2000:]


def test_three_tools_in_parallel_on_one_project_lose_nothing_and_double_nothing(
    claude: ClaudeAgent, codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path
) -> None:
    for agent in (claude, codex, gemini):
        integrate(agent)
    save(claude, "Always use pnpm instead of npm")
    procs = {
        agent.name: agent.start(f"Never deploy on {day}")
        for agent, day in ((claude, "Monday"), (codex, "Tuesday"), (gemini, "Wednesday"))
    }
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name}: {out[-1500:]}\n{err[-1500:]}"
    for day in ("Monday", "Tuesday", "Wednesday"):
        assert len(lines_with(maestro_project, f"deploy on {day}")) == 1, semantic(maestro_project)
    assert len(lines_with(maestro_project, SAVED)) == 1
    for api in (claude.api, codex.api, gemini.api):
        assert any(SAVED in b for r in api.model_requests(0) for b in memory_blocks(r.body)), api


def test_three_tools_in_parallel_age_the_memory_like_one_days_use(
    claude: ClaudeAgent,
    codex: CodexAgent,
    gemini: GeminiAgent,
    maestro_project: Path,
    tmp_path: Path,
) -> None:
    from maestro_memory.core import MemoryStore

    for agent in (claude, codex, gemini):
        integrate(agent)
    claude.maestroctl(
        "save-episodic", "Worked on the release notes", "--session", "before", "--confidence", "0.9"
    )
    # What one session start (one day's use) does to the episodic entry, on a copy.
    copy = tmp_path / "one-session"
    shutil.copytree(maestro_project / ".maestro", copy / ".maestro")
    MemoryStore(copy).initialize("only-one")
    [expected] = [e.salience for e in MemoryStore(copy).episodic_entries()]

    procs = [a.start("Tidy module x.") for a in (claude, codex, gemini)]
    for proc in procs:
        proc.communicate(timeout=300)
        assert proc.returncode == 0
    [entry] = [
        e for e in MemoryStore(maestro_project).episodic_entries() if "release notes" in e.text
    ]
    # Aged once (a shown entry may also be reinforced by reference, which only raises it).
    assert entry.salience >= expected - 1e-9, (entry.salience, expected)
