"""``integrate`` while maestrod's HTTP door is open: Claude Code's prompt and session-end hooks
become ``http`` hooks to it (the session start stays a command), Codex's and Gemini's MCP
server becomes its URL; ``doctor`` checks that the door answers where they point, and a
session start tells the person when it does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.client.integrations.agent_checks import DOOR_DOWN
from maestro_memory.common.httpdoor import hook_url, recorded_port

from .support import person_env, run_cli

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/net/tcp"), reason="the door needs the kernel's TCP table (Linux)"
)


@pytest.fixture
def env(tmp_path: Path, maestro_home: Path) -> dict[str, str]:
    return person_env(tmp_path, CODEX_HOME=str(tmp_path / "person" / ".codex"))


@pytest.fixture
def door(daemon_factory: Any, project: Path) -> tuple[Any, int]:
    (project / ".maestro" / "memory").mkdir(parents=True)
    daemon = daemon_factory(config="[http]\nport = 0\n")
    daemon.register(project)
    port = recorded_port(daemon.paths)
    assert port is not None
    return daemon, port


def integrate(project: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    proc = run_cli(["-C", str(project), "integrate", *args, "--json"], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)["result"]
    return result


def hooks_of(path: Path) -> dict[str, list[dict[str, Any]]]:
    settings = json.loads(path.read_text())
    return {e: [h for g in groups for h in g["hooks"]] for e, groups in settings["hooks"].items()}


def test_claude_local_scope_sends_prompts_and_session_ends_to_the_door(
    door: tuple[Any, int], project: Path, env: dict[str, str]
) -> None:
    _, port = door
    local = project / ".claude" / "settings.local.json"
    # An older command hook of ours for the prompt is replaced, not doubled.
    local.parent.mkdir()
    older = {"type": "command", "command": "maestroctl hook claude user-prompt", "timeout": 5}
    local.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [older]}]}}))
    integrate(project, env, "claude", "--scope", "local")
    hooks = hooks_of(local)
    assert hooks["UserPromptSubmit"] == [
        {"type": "http", "url": hook_url(port, "claude", "user-prompt", project), "timeout": 10}
    ]
    assert hooks["SessionEnd"] == [
        {"type": "http", "url": hook_url(port, "claude", "session-end", project), "timeout": 30}
    ]
    [start] = hooks["SessionStart"]  # Claude Code runs no http hook at SessionStart
    assert start["type"] == "command" and "hook claude session-start" in start["command"]
    before = local.read_text()
    integrate(project, env, "claude", "--scope", "local")
    assert local.read_text() == before
    integrate(project, env, "claude", "--scope", "local", "--remove")
    assert not local.exists()


def test_claude_project_scope_stays_commands(
    door: tuple[Any, int], project: Path, env: dict[str, str]
) -> None:
    integrate(project, env, "claude")
    hooks = hooks_of(project / ".claude" / "settings.json")
    assert {h["type"] for hs in hooks.values() for h in hs} == {"command"}


def test_the_http_hook_integrate_wrote_is_answered(
    door: tuple[Any, int], project: Path, env: dict[str, str]
) -> None:
    import http.client

    _, port = door
    integrate(project, env, "claude", "--scope", "user")
    [hook] = hooks_of(Path(env["HOME"]) / ".claude" / "settings.json")["UserPromptSubmit"]
    assert hook["url"] == hook_url(port, "claude", "user-prompt")  # user scope: from cwd
    body = json.dumps(
        {"session_id": "s1", "cwd": str(project), "prompt": "From now on always use tabs."}
    )
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", hook["url"], body, {"Content-Type": "application/json"})
    answer = json.loads(conn.getresponse().read())
    conn.close()
    assert answer["systemMessage"] == "Remembered: Always use tabs"


def test_codex_and_gemini_get_the_doors_mcp_url(
    door: tuple[Any, int], project: Path, env: dict[str, str]
) -> None:
    _, port = door
    integrate(project, env, "codex", "--scope", "user")
    config = tomllib.loads((Path(env["CODEX_HOME"]) / "config.toml").read_text())
    assert config["mcp_servers"]["maestro"] == {"url": f"http://127.0.0.1:{port}/mcp"}
    integrate(project, env, "gemini", "--scope", "user", "--trust")
    settings = json.loads((Path(env["HOME"]) / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"]["maestro"] == {
        "httpUrl": f"http://127.0.0.1:{port}/mcp",
        "trust": True,
    }
    integrate(project, env, "gemini", "--scope", "user", "--remove")
    assert not (Path(env["HOME"]) / ".gemini" / "settings.json").exists()  # it held only ours


def run_hook_command(command: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    """``command`` run as the tool runs it (``/bin/sh -c``, the event's JSON on stdin), where
    no Python can start (``PYTHONHOME`` points nowhere): only the door can answer it."""
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**env, "PYTHONHOME": "/nonexistent"},
        timeout=60,
        check=True,
    )
    return done.stdout.decode()


@pytest.mark.parametrize(
    ("tool", "hooks_file", "events"),
    [
        ("codex", ".codex/hooks.json", ("SessionStart", "UserPromptSubmit", "SessionEnd")),
        ("gemini", ".gemini/settings.json", ("SessionStart", "BeforeAgent", "SessionEnd")),
    ],
)
def test_codex_and_gemini_user_scope_hooks_ask_the_door_and_start_no_python(
    door: tuple[Any, int],
    project: Path,
    env: dict[str, str],
    tool: str,
    hooks_file: str,
    events: tuple[str, str, str],
) -> None:
    _, port = door
    saved = run_cli(
        [
            "-C",
            str(project),
            "save-semantic",
            "Deploys go through make release",
            "--confidence",
            "0.9",
        ],
        env=env,
    )
    assert saved.returncode == 0, saved.stdout + saved.stderr
    result = integrate(project, env, tool, "--scope", "user", "--trust")
    assert any("HTTP door with curl first" in note for note in result["notes"])
    home = Path(env["CODEX_HOME"]).parent if tool == "codex" else Path(env["HOME"])
    hooks = hooks_of(home / hooks_file)
    assert {h["type"] for hs in hooks.values() for h in hs} == {"command"}  # no http hooks
    start, prompt, end = (hooks[e][0]["command"] for e in events)
    for command, event in zip(
        (start, prompt, end), ("session-start", "user-prompt", "session-end"), strict=True
    ):
        assert hook_url(port, tool, event) in command

    payload = {"session_id": "s1", "cwd": str(project), "source": "startup"}
    answer = json.loads(run_hook_command(start, payload, env))
    assert "Deploys go through make release" in json.dumps(answer)
    said = {"session_id": "s1", "cwd": str(project), "prompt": "From now on always use tabs."}
    assert json.loads(run_hook_command(prompt, said, env))["systemMessage"] == (
        "Remembered: Always use tabs"
    )
    assert "Always use tabs" in (project / ".maestro" / "memory" / "semantic.md").read_text()

    # The project file names no port: its hooks run the command, and the report says why.
    result = integrate(project, env, tool, "--trust")
    assert any("with --scope user the hooks ask it first" in note for note in result["notes"])
    project_hooks = hooks_of(project / hooks_file)
    assert not any("curl" in h["command"] for hs in project_hooks.values() for h in hs)
    # --remove takes the door commands out as ours.
    integrate(project, env, tool, "--scope", "user", "--remove")
    left = json.loads((home / hooks_file).read_text()) if (home / hooks_file).exists() else {}
    assert "hooks" not in left


def doctor_checks(project: Path, env: dict[str, str], name: str) -> list[dict[str, Any]]:
    proc = run_cli(["doctor", "-C", str(project), "--json"], env=env)
    checks = json.loads(proc.stdout)["result"]["checks"]
    return [c for c in checks if c["name"] == name]


def session_start(project: Path, env: dict[str, str]) -> dict[str, Any]:
    payload = json.dumps({"session_id": "s-start", "cwd": str(project), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "hook", "claude", "session-start"],
        input=payload.encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
        check=True,
    )
    out: dict[str, Any] = json.loads(done.stdout or b"{}")  # an empty memory: nothing to say
    return out


def test_doctor_and_the_session_start_say_when_the_door_does_not_answer(
    door: tuple[Any, int], project: Path, env: dict[str, str]
) -> None:
    daemon, port = door
    integrate(project, env, "claude", "--scope", "local")
    integrate(project, env, "codex", "--scope", "user")
    assert [c["status"] for c in doctor_checks(project, env, "claude hooks")] == ["ok"]
    [mcp] = doctor_checks(project, env, "codex mcp")
    assert mcp["status"] == "ok" and "HTTP door" in mcp["detail"]
    assert "systemMessage" not in session_start(project, env)

    assert daemon.stop() == 0
    for name in ("claude hooks", "codex mcp"):
        [check] = doctor_checks(project, env, name)
        assert check["status"] == "fail" and f"127.0.0.1:{port}" in check["detail"]
        assert "no maestrod HTTP door is open" in check["detail"]
    told = session_start(project, env)
    assert told["systemMessage"] == DOOR_DOWN.format(what="prompts (nothing is remembered)")
