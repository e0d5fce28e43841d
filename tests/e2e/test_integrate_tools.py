"""``maestroctl integrate codex|gemini [--trust]`` against the real CLIs (issue 19): what it
writes is what Codex and Gemini accept, trust included; nothing is wired by hand here."""

from __future__ import annotations

import json
from pathlib import Path

from .agents import ClaudeAgent, CodexAgent, GeminiAgent

RULE = "Always use pnpm instead of npm"


def integrate(agent: ClaudeAgent | CodexAgent | GeminiAgent, *args: str) -> dict[str, object]:
    done = agent.maestroctl("integrate", agent.name, *args, "--json")
    result: dict[str, object] = json.loads(done.stdout)["result"]
    return result


def doctor_checks(agent: CodexAgent | GeminiAgent) -> list[dict[str, str]]:
    done = agent.maestroctl("doctor", "--json", check=False)
    checks: list[dict[str, str]] = json.loads(done.stdout)["result"]["checks"]
    return checks


def test_codex_trust_hashes_are_the_ones_codex_computes(
    codex: CodexAgent, maestro_project: Path
) -> None:
    # The fixture's config.toml trusts the project already: --trust must then add only the
    # hook entries, and keep every line of the person's file.
    config = codex.codex_home / "config.toml"
    before = config.read_text()

    untrusted = integrate(codex)
    listed = codex.hooks_list()
    ours = [h for h in listed["hooks"] if "maestroctl hook codex" in json.dumps(h)]
    assert len(ours) == 3, listed
    assert {h["trustStatus"] for h in ours} == {"untrusted"}
    # The report says exactly what is missing: every key and hash Codex itself reports.
    todo = "\n".join(str(t) for t in untrusted["todo"])  # type: ignore[attr-defined]
    for hook in ours:
        assert hook["key"] in todo and hook["currentHash"] in todo

    integrate(codex, "--trust")
    relisted = {h["key"]: h for h in codex.hooks_list()["hooks"]}
    assert {relisted[h["key"]]["trustStatus"] for h in ours} == {"trusted"}
    assert config.read_text().startswith(before)

    # Idempotent, and --remove restores the person's files exactly.
    again = integrate(codex, "--trust")
    assert {f["action"] for f in again["files"]} == {"unchanged"}  # type: ignore[index]
    integrate(codex, "--remove")
    assert config.read_text() == before
    assert not (codex.project / ".codex" / "hooks.json").exists()
    assert codex.maestroctl("integrate", "codex", "--remove").returncode == 0


def test_codex_user_scope_hooks_are_trusted_too(codex: CodexAgent, maestro_project: Path) -> None:
    integrate(codex, "--scope", "user", "--trust")
    ours = [h for h in codex.hooks_list()["hooks"] if "hook codex" in json.dumps(h)]
    assert len(ours) == 3 and {h["trustStatus"] for h in ours} == {"trusted"}
    assert all(h["sourcePath"] == str(codex.codex_home / "hooks.json") for h in ours)


def test_gemini_without_trust_says_what_is_missing_then_trust_lets_it_run(
    gemini: GeminiAgent, maestro_project: Path
) -> None:
    gemini.maestroctl("save-semantic", RULE, "--category", "user_preference", "--confidence", "0.9")
    gemini.write_config(trust=False)
    (gemini.gemini_dir / "trustedFolders.json").unlink()  # the fixture trusted it
    report = integrate(gemini)
    assert any("TRUST_FOLDER" in str(t) for t in report["todo"])  # type: ignore[attr-defined]
    refused = gemini.run("hello", check=False)
    assert refused.returncode == 55, refused.stderr[-2000:]

    integrate(gemini, "--trust")
    trusted = json.loads((gemini.gemini_dir / "trustedFolders.json").read_text())
    assert trusted == {str(gemini.project): "TRUST_FOLDER"}
    run = gemini.run("hello")
    assert any("pnpm" in b for b in run.memory()), f"hooks.log:\n{run.hook_log()}"
    settings = json.loads((gemini.gemini_dir / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"  # kept
    assert settings["mcpServers"]["maestro"]["trust"] is True


def test_doctor_reports_each_tools_hooks_and_mcp(
    codex: CodexAgent, gemini: GeminiAgent, maestro_project: Path
) -> None:
    integrate(codex)
    checks = doctor_checks(codex)
    codex_checks = {c["name"]: c for c in checks if c["name"].startswith("codex")}
    assert codex_checks["codex hooks"]["status"] == "warn"
    assert "untrusted" in codex_checks["codex hooks"]["detail"]
    assert codex_checks["codex mcp"]["status"] == "ok"
    integrate(codex, "--trust")
    checks = doctor_checks(codex)
    assert {c["name"]: c["status"] for c in checks if c["name"].startswith("codex")} == {
        "codex hooks": "ok",
        "codex mcp": "ok",
    }
