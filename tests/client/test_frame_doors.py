"""Issue 34's cases "tried as a new user would", through the real doors: ``maestroctl
save-semantic`` (direct mode and a real daemon) and the Claude Code prompt hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import Cli

CASES = [
    ("From now on always use pnpm, never npm",
     "Actually, switch to bun instead of pnpm from now on", "replaced"),
    ("Always use pnpm", "Use yarn, not pnpm", "replaced"),
    ("Service A runs on port 8001", "Service B runs on port 8002", "added"),
    ("Release step 2 is building the image", "Release step 3 is pushing the image", "added"),
]  # fmt: skip


def _semantic(cli: Cli, cwd: Path) -> list[str]:
    entries = cli.result("entries", "--sector", "semantic", cwd=cwd)["entries"]
    return [e["text"] for e in entries]


def _play(cli: Cli, tmp_path: Path) -> None:
    for n, (old, new, want) in enumerate(CASES):
        cwd = tmp_path / f"case{n}"
        cwd.mkdir()
        cli("init", cwd=cwd)
        cli.result("save-semantic", old, "--confidence", "1.0", cwd=cwd)
        got = cli.result("save-semantic", new, "--confidence", "1.0", cwd=cwd)
        assert got["action"] == want, (old, new, got)
        texts = _semantic(cli, cwd)
        assert new in texts and (old in texts) == (want == "added"), texts


def test_save_semantic_in_direct_mode(cli: Cli, tmp_path: Path) -> None:
    _play(cli, tmp_path)


def test_save_semantic_through_the_daemon(cli: Cli, daemon: Any, tmp_path: Path) -> None:
    _play(cli, tmp_path)


def _prompt(cli: Cli, cwd: Path, prompt: str) -> str:
    payload = {"session_id": "s-1", "cwd": str(cwd), "prompt": prompt}
    env = {k: v for k, v in cli.env.items() if k != "CLAUDE_PROJECT_DIR"}
    env["MAESTRO_HOOK_DEADLINE"] = "10"
    done = subprocess.run(
        [sys.executable, "-m", "maestro_memory.client.cli", "hook", "claude", "user-prompt"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_the_prompt_door(cli: Cli, tmp_path: Path, n: int) -> None:
    old, new, want = CASES[n]
    cwd = tmp_path / "door"
    cwd.mkdir()
    cli("init", cwd=cwd)
    _prompt(cli, cwd, old)
    _prompt(cli, cwd, new)
    texts = " | ".join(_semantic(cli, cwd)).lower()
    if want == "replaced":  # the door saves the rule as it reads it ("Switch to bun …")
        assert "bun" in texts or "yarn" in texts, texts
        assert texts.count("pnpm") == 1, texts  # one entry: the old one replaced
    else:  # a plain statement is at most proposed, never merged into the other
        assert ("service a" in texts) == ("service b" in texts), texts
        assert ("step 2" in texts) == ("step 3" in texts), texts
