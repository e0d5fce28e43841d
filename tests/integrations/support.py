"""Helpers for the integration tests: the real command line, and git repositories to merge in.

``maestroctl_cmd()`` is the ``maestroctl`` script beside the interpreter (or on PATH), else
``python -m maestro_memory.client.cli`` (the same code). Every git command runs with the
user's global and system configuration shut out.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MODULE_CMD = [sys.executable, "-m", "maestro_memory.client.cli"]


@functools.cache
def maestroctl_cmd() -> tuple[str, ...]:
    beside = Path(sys.executable).parent / "maestroctl"
    program = str(beside) if beside.exists() else shutil.which("maestroctl")
    if program:
        probe = subprocess.run(
            [program, "merge-driver", "--help"], capture_output=True, stdin=subprocess.DEVNULL
        )
        if probe.returncode == 0:
            return (program,)
    return tuple(MODULE_CMD)


def driver_program_args() -> list[str]:
    """Extra ``git-setup`` arguments while ``maestroctl`` itself lacks ``merge-driver``."""
    cmd = maestroctl_cmd()
    if tuple(cmd) == tuple(MODULE_CMD):
        return ["--driver-program", " ".join(f'"{part}"' for part in cmd)]
    return []


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*maestroctl_cmd(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env=env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


@dataclass
class Repo:
    root: Path

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", *args], cwd=self.root, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def commit_all(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    @property
    def memory_dir(self) -> Path:
        return self.root / ".maestro" / "memory"

    def read(self, name: str) -> str:
        return (self.memory_dir / name).read_text(encoding="utf-8")


def mcp_server_params(project: Path) -> Any:
    """The SDK's ``StdioServerParameters`` for ``maestroctl mcp`` started in ``project``, as an
    agent tool starts it (the test's ``MAESTRO_HOME``)."""
    import os

    from mcp import StdioServerParameters

    cmd = maestroctl_cmd()
    return StdioServerParameters(
        command=cmd[0],
        args=[*cmd[1:], "mcp"],
        cwd=project,
        env={"MAESTRO_HOME": os.environ["MAESTRO_HOME"], "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def in_mcp_session(
    project: Path, body: Callable[[Any], Awaitable[None]], mode: str = "legacy"
) -> None:
    """Run ``body(session)`` against a real ``maestroctl mcp`` in ``project``, spoken to by the
    official MCP SDK's client (``mode``: its handshake, "legacy" initialize or "auto")."""
    import anyio
    from mcp import Client as McpClient

    async def main() -> None:
        async with McpClient(mcp_server_params(project), mode=mode) as session:
            await body(session)

    anyio.run(main)


def person_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a person whose home is a fresh ``tmp_path / "person"``: this
    Python and the system's tools on ``PATH``, a hook deadline long enough for a loaded CI
    machine, and ``extra`` (a tool's home under it, say)."""
    home = tmp_path / "person"
    home.mkdir()
    return {
        **os.environ,
        "HOME": str(home),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "MAESTRO_HOOK_DEADLINE": "8",
        **extra,
    }
