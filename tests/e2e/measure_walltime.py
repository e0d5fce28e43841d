"""Wall time of one headless run of each agent CLI: no integration, with Maestro's hooks, and
with hooks plus the MCP server. Not a test (timings never fail tests); run by hand:

    MAESTRO_HOME=$(mktemp -d) .venv/bin/python -m tests.e2e.measure_walltime [N] [cli ...]

Starts its own maestrod (``maestroctl start``) and stand-in APIs, runs each CLI N times
(default 5) per configuration in a fresh HOME and git project, and prints the median and the
range in seconds. Uses the hooks' default deadline, as a user would have it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .agents import (
    AGENTS,
    CLAUDE_MAESTRO_HOOKS,
    CODEX_MAESTRO_HOOKS,
    GEMINI_MAESTRO_HOOKS,
    Agent,
    ClaudeAgent,
    CodexAgent,
    GeminiAgent,
    find_cli,
    hook_command,
    maestroctl,
)

HOOKS = {
    "claude": CLAUDE_MAESTRO_HOOKS,
    "codex": CODEX_MAESTRO_HOOKS,
    "gemini": GEMINI_MAESTRO_HOOKS,
}
CONFIGS = ("none", "hooks", "hooks+mcp")


def project(root: Path) -> Path:
    proj = root / "project"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    subprocess.run([maestroctl(), "-C", str(proj), "init"], check=True, capture_output=True)
    subprocess.run([maestroctl(), "-C", str(proj), "register"], check=True, capture_output=True)
    subprocess.run(
        [
            maestroctl(),
            "-C",
            str(proj),
            "save-semantic",
            "Always use pnpm instead of npm",
            "--category",
            "user_preference",
            "--confidence",
            "1.0",
        ],
        check=True,
        capture_output=True,
    )
    return proj


def one_agent(cli: str, config: str, root: Path) -> Agent:
    agent_type, api_type = AGENTS[cli]
    binary, reason = find_cli(cli)
    if binary is None:
        raise SystemExit(reason)
    home = root / "home"
    home.mkdir()
    api = api_type().start()
    agent = agent_type(binary, home, project(root), api)
    agent.extra_env["MAESTRO_HOOK_DEADLINE"] = ""  # the default deadline, as a user has it
    if isinstance(agent, CodexAgent | GeminiAgent):
        agent.write_config()
    if isinstance(agent, CodexAgent | GeminiAgent):
        # Wired as a person wires it: integrate --trust (hooks only: --no-mcp).
        if config != "none":
            mcp = () if config == "hooks+mcp" else ("--no-mcp",)
            agent.maestroctl("integrate", cli, "--trust", *mcp)
        return agent
    if config != "none":
        agent.wire_hooks({e: hook_command(ours) for e, ours in HOOKS[cli].items()})
    if config == "hooks+mcp":
        assert isinstance(agent, ClaudeAgent)
        agent.wire_mcp()
    return agent


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv and argv[0].isdigit() else 5
    clis = [a for a in argv if a in AGENTS] or list(AGENTS)
    if "MAESTRO_HOME" not in os.environ:
        raise SystemExit("set MAESTRO_HOME to a temporary directory first")
    subprocess.run([maestroctl(), "start"], check=True, capture_output=True)
    try:
        for cli in clis:
            for config in CONFIGS:
                times = []
                for _ in range(n):
                    with tempfile.TemporaryDirectory(
                        prefix=f"walltime-{cli}-", ignore_cleanup_errors=True
                    ) as tmp:
                        agent = one_agent(cli, config, Path(tmp))
                        try:
                            run = agent.run("Add a dependency on left-pad.")
                        finally:
                            agent.api.stop()
                        times.append(run.seconds)
                        if config != "none" and not run.memory():
                            print(f"  ({cli} {config}: no memory block in this run)")
                print(
                    f"{cli:7} {config:10} median {statistics.median(times):6.2f} s  "
                    f"min {min(times):6.2f}  max {max(times):6.2f}  (n={n})",
                    flush=True,
                )
    finally:
        subprocess.run([maestroctl(), "stop"], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
