"""What the security tests share: the real ``maestroctl`` (CLI, hooks, MCP door) as a process,
in a scrubbed environment with the test's ``MAESTRO_HOME``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "maestro_memory.client.cli"]
TIMEOUT = 60


def env_for(home: Path, user_home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"MAESTRO_REQUIRE_DAEMON", "MAESTRO_SESSION_ID", "CLAUDE_PROJECT_DIR"}
    }
    env.update({"MAESTRO_HOME": str(home), "HOME": str(user_home), **extra})
    return env


def cli(
    env: dict[str, str], cwd: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env=env,
        input=None if stdin is None else stdin.decode(),
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def cli_json(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = cli(env, cwd, *args, "--json")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, (args, done.stdout, done.stderr)
    doc: dict[str, Any] = json.loads(lines[0])
    return done.returncode, doc


def session_start(
    env: dict[str, str], project: Path, cwd: Path | None = None, session: str = "sec-1"
) -> str:
    """The session-start hook's stdout (it always exits 0: fail-open)."""
    payload = {
        "session_id": session,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(cwd or project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = cli(
        env, cwd or project, "hook", "claude", "session-start", stdin=json.dumps(payload).encode()
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def mcp(env: dict[str, str], project: Path, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    """Replies of ``maestroctl mcp`` (started in ``project``) to ``requests``, over stdio."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "sec-test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i + 1, **r} for i, r in enumerate(requests)),
    ]
    text = "".join(json.dumps(m) + "\n" for m in messages)
    done = subprocess.run(
        [*CLI, "mcp"],
        cwd=project,
        env=env,
        input=text,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [r for r in replies if r.get("id") not in (None, 0)]


def read_resource(env: dict[str, str], project: Path, kind: str) -> dict[str, Any]:
    (reply,) = mcp(
        env, project, {"method": "resources/read", "params": {"uri": f"memory://{kind}"}}
    )
    return reply
