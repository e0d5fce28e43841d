"""What each CLI really passes its hooks: captured with capture_hook.py from real sessions, and
checked for the fields Maestro's hooks rely on (session id, cwd, prompt, start source,
transcript path). README.md next to this file shows one captured payload per event."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from maestrod_testkit import wait_for

from .agents import CAPTURE_HOOK, ClaudeAgent, CodexAgent, GeminiAgent


def capture(agent: ClaudeAgent | CodexAgent | GeminiAgent, events: list[str], log: Path) -> None:
    agent.wire_hooks({e: f"{sys.executable} {CAPTURE_HOOK} {log} {e}" for e in events})


def payloads(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def by_event(records: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [r["payload"] for r in records if r["tag"] == event]


def test_claude_code_hook_payloads(claude: ClaudeAgent, tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    capture(claude, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"], log)
    session = "5e55a0b1-0000-4000-8000-000000000001"
    claude.run("first prompt", "--session-id", session)
    claude.run("second prompt", "--resume", session)
    claude.run("/clear", "--resume", session)  # no model call: a new session id

    records = payloads(log)
    starts = by_event(records, "SessionStart")
    assert [s["source"] for s in starts] == ["startup", "resume", "resume", "clear"]
    assert {s["session_id"] for s in starts[:3]} == {session}
    assert starts[3]["session_id"] != session
    prompts = by_event(records, "UserPromptSubmit")
    assert [p["prompt"] for p in prompts] == ["first prompt", "second prompt"]
    for p in starts + prompts:
        assert p["cwd"] == str(claude.project)
        assert p["transcript_path"].endswith(f"{p['session_id']}.jsonl")
    assert all(r["env"]["CLAUDE_PROJECT_DIR"] == str(claude.project) for r in records)
    # Stop after every reply, with the reply; SessionEnd once per process, "clear" for /clear.
    assert by_event(records, "Stop")[0]["last_assistant_message"] == "OK from the stand-in model."
    assert [e["reason"] for e in by_event(records, "SessionEnd")] == [
        "other",
        "other",
        "clear",
        "other",
    ]


def test_codex_hook_payloads(codex: CodexAgent, tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    capture(codex, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"], log)
    codex.run("first prompt")
    codex.run("second prompt", "resume", "--last")

    records = payloads(log)
    starts = by_event(records, "SessionStart")
    assert [s["source"] for s in starts] == ["startup", "resume"]
    assert starts[0]["session_id"] == starts[1]["session_id"]
    assert [p["prompt"] for p in by_event(records, "UserPromptSubmit")] == [
        "first prompt",
        "second prompt",
    ]
    assert all(r["payload"]["cwd"] == str(codex.project) for r in records)
    assert "/sessions/" in starts[0]["transcript_path"]  # $CODEX_HOME/sessions/…/rollout-….jsonl
    assert [e["reason"] for e in by_event(records, "SessionEnd")] == ["other", "other"]
    # No CLAUDE_PROJECT_DIR under Codex: the hook must find the project from cwd.
    assert all("CLAUDE_PROJECT_DIR" not in r["env"] for r in records)


def test_gemini_hook_payloads(gemini: GeminiAgent, tmp_path: Path) -> None:
    log = tmp_path / "hooks.jsonl"
    capture(gemini, ["BeforeAgent", "AfterAgent", "SessionEnd"], log)
    # A SessionStart hook that injects context, as Maestro's does.
    emit = tmp_path / "emit.py"
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "[Project Memory] START-CONTEXT [End Project Memory]",
        }
    }
    emit.write_text(f"import sys; sys.stdin.read(); print({json.dumps(output)!r})\n")
    gemini.wire_hooks(
        {
            "SessionStart": f"{sys.executable} {CAPTURE_HOOK} {log} SessionStart -- "
            f"{sys.executable} {emit}"
        }
    )
    run = gemini.run("first prompt")

    # Gemini does not wait for its SessionEnd hooks: the record may land after it exits.
    wait_for(lambda: by_event(payloads(log), "SessionEnd"), timeout=30, message="SessionEnd")
    records = payloads(log)
    assert [r["tag"] for r in records] == [
        "SessionStart",
        "BeforeAgent",
        "AfterAgent",
        "SessionEnd",
    ]
    start, before, after, end = (r["payload"] for r in records)
    assert start["source"] == "startup"
    # BeforeAgent's prompt carries the SessionStart context in front of the person's words
    # (a memory must not learn from that: issue 19).
    assert before["prompt"] == (
        "<hook_context>[Project Memory] START-CONTEXT [End Project Memory]</hook_context>"
        "\n\nfirst prompt"
    )
    assert any("START-CONTEXT" in b for b in run.memory())
    assert after["prompt_response"] == "OK from the stand-in model."
    assert end["reason"] == "exit"
    assert all(r["payload"]["cwd"] == str(gemini.project) for r in records)
    # Gemini sets Claude Code's variable too.
    assert all(r["env"]["CLAUDE_PROJECT_DIR"] == str(gemini.project) for r in records)
