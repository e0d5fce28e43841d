"""Run the real ``maestroctl`` (``python -m maestro_memory.client.cli``) as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLI = [sys.executable, "-m", "maestro_memory.client.cli"]
CLI_TIMEOUT = 60.0


@dataclass
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def doc(self) -> dict[str, Any]:
        """The one JSON document on stdout (asserts there is exactly one)."""
        lines = [line for line in self.stdout.splitlines() if line.strip()]
        assert len(lines) == 1, f"expected one JSON line from {self.argv}, got {self.stdout!r}"
        doc: dict[str, Any] = json.loads(lines[0])
        return doc

    @property
    def result(self) -> dict[str, Any]:
        doc = self.doc
        assert doc["ok"] is True, (self.argv, doc, self.stderr)
        result: dict[str, Any] = doc["result"]
        return result


class Cli:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.cwd = cwd

    def __call__(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        check: int | None = 0,
    ) -> Run:
        argv = [*CLI, *args]
        full_env = dict(self.env)
        full_env.update(env or {})
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=cwd or self.cwd,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        run = Run(list(args), done.returncode, done.stdout, done.stderr, time.monotonic() - started)
        if check is not None:
            assert run.returncode == check, (
                f"maestroctl {' '.join(args)} exited {run.returncode}, expected {check}\n"
                f"stdout: {run.stdout}\nstderr: {run.stderr}"
            )
        return run

    def json(self, *args: str, check: int | None = 0, **kw: Any) -> dict[str, Any]:
        """``--json`` run; returns the whole document after checking the exit code."""
        return self(*args, "--json", check=check, **kw).doc

    def result(self, *args: str, **kw: Any) -> dict[str, Any]:
        doc = self.json(*args, **kw)
        assert doc["ok"] is True, doc
        result: dict[str, Any] = doc["result"]
        return result


def scrubbed_env(maestro_home: Path, user_home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {"MAESTRO_REQUIRE_DAEMON", "MAESTRO_SESSION_ID", "XDG_CONFIG_HOME", "NOTIFY_SOCKET"}
    }
    env["MAESTRO_HOME"] = str(maestro_home)
    env["HOME"] = str(user_home)
    return env


def normalise_ids(value: Any, ids: dict[str, str] | None = None) -> Any:
    """Entry ids replaced by their order of first appearance, so two runs compare equal."""
    import re

    table = {} if ids is None else ids
    pattern = re.compile(r"\b[se]-[0-9a-f]{8}\b")

    def sub(text: str) -> str:
        def name(match: re.Match[str]) -> str:
            return table.setdefault(match.group(0), f"<id{len(table)}>")

        return pattern.sub(name, text)

    if isinstance(value, str):
        return sub(value)
    if isinstance(value, list):
        return [normalise_ids(v, table) for v in value]
    if isinstance(value, dict):
        return {k: normalise_ids(v, table) for k, v in value.items()}
    return value
