"""``maestroctl mcp`` needs no MCP SDK: with the SDK made unimportable it still serves."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .support import run_cli


def test_it_serves_without_the_sdk(tmp_path: Path, project: Path, maestro_home: Path) -> None:
    blocker = tmp_path / "blocker"
    for name in ("mcp", "pydantic"):
        (blocker / name).mkdir(parents=True)
        (blocker / name / "__init__.py").write_text(
            f'raise ImportError("No module named {name!r} (blocked by the test)", name={name!r})\n'
        )
    (project / ".maestro").mkdir()
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"fact": "Use pnpm", "category": "project_context"},
            },
        },
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages).encode()
    env = dict(os.environ, PYTHONPATH=str(blocker))
    proc = run_cli(["mcp"], cwd=project, env=env, input=stdin)
    assert proc.returncode == 0, proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]  # nothing for the notification
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert replies[1]["result"]["structuredContent"]["action"] == "added"
    assert "Use pnpm" in (project / ".maestro" / "memory" / "semantic.md").read_text()
