"""What Maestro Memory adds to a whole agent session: the wall time of one real headless run
of each CLI (``claude -p``, ``codex exec``, ``gemini -p``) against the stand-in model APIs,
bare, with the hooks ``maestroctl integrate <tool>`` writes, and with those hooks plus the MCP
server. A measurement, not a test (timings never fail tests; pytest does not collect this
file). One command:

    .venv/bin/python -m tests.e2e.measure_walltime [--rounds N] [claude codex gemini]

It starts its own maestrod in a temporary ``MAESTRO_HOME`` (a ``MAESTRO_HOME`` already set
is not used: nothing of a person's memory is touched), stops it at the end, and prints a
markdown table: the median wall time
per configuration (7 rounds for Claude Code, 5 for Codex and Gemini, unless ``--rounds``), what
the integration adds over bare, and the load average it ran under.

How it runs. Per CLI, three setups, each with its own HOME, git project (``maestroctl init``,
``register``, one saved rule) and stand-in API, wired as a person wires them:

* bare: nothing of Maestro;
* hooks: ``maestroctl integrate claude`` / ``integrate codex --trust --no-mcp`` / ``integrate
  gemini --trust --no-mcp``;
* hooks + MCP: the same plus the stdio MCP server ``maestroctl mcp`` (``wire_mcp``: ``claude
  mcp add maestro -- maestroctl mcp``, Codex's and Gemini's config);
* door: what ``integrate`` writes while maestrod's HTTP door is open: ``integrate claude
  --scope local`` (http prompt and session-end hooks, the session start a command) plus
  ``claude mcp add --transport http maestro <door>/mcp``; ``integrate codex|gemini --scope
  user --trust`` (commands that ask the door with curl, MCP over HTTP).

Each setup runs once untimed (a CLI's first run in a new HOME does one-time work), then the
rounds: each round runs the four setups once, in an order rotated by one every round, so a
slow patch of the machine falls on all three alike. The hooks keep their default deadline, as a
person has them. Claude Code gets the suite's environment (``agents.ClaudeAgent``), which makes
``claude -p`` wait for its MCP servers before the first turn. Each timed run is checked: the
hooks' runs must carry the memory block to the model, the MCP runs must offer the model
``get_context`` (``offers_mcp``) and the others must not; a miss is counted in the table's
notes, not hidden.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from maestro_memory.common import paths
from maestro_memory.common.httpdoor import recorded_port

from .agents import AGENTS, Agent, ClaudeAgent, CodexAgent, GeminiAgent, Run, find_cli, maestroctl
from .fake_openai import offered_tools

CONFIGS = ("bare", "hooks", "hooks+mcp", "door")
ROUNDS = {"claude": 7, "codex": 5, "gemini": 5}
COMMAND = {"claude": "claude -p", "codex": "codex exec", "gemini": "gemini -p"}
PROMPT = "Add a dependency on left-pad."
RULE = "Always use pnpm instead of npm"


def make_project(root: Path) -> Path:
    proj = root / "project"
    proj.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    for args in (
        ("init",),
        ("register",),
        ("save-semantic", RULE, "--category", "user_preference", "--confidence", "1.0"),
    ):
        subprocess.run([maestroctl(), "-C", str(proj), *args], check=True, capture_output=True)
    return proj


def setup(cli: str, config: str, root: Path) -> Agent:
    """One CLI in its own HOME and project, wired for ``config`` as a person wires it."""
    agent_type, api_type = AGENTS[cli]
    binary, reason = find_cli(cli)
    if binary is None:
        raise SystemExit(reason)
    home = root / "home"
    home.mkdir(parents=True)
    api = api_type().start()
    agent = agent_type(binary, home, make_project(root), api)
    agent.extra_env["MAESTRO_HOOK_DEADLINE"] = ""  # the default deadline, as a person has it
    if isinstance(agent, CodexAgent) and config == "hooks+mcp":
        agent.wire_mcp()  # maestroctl mcp over stdio, written into config.toml just below
    if isinstance(agent, CodexAgent | GeminiAgent):
        agent.write_config()  # the stand-in provider, auth and folder trust; no Maestro
    if config == "bare":
        return agent
    if config == "door":  # what integrate writes while the daemon's HTTP door is open
        port = recorded_port(paths.resolve())
        assert port is not None, "the daemon's HTTP door is not open"
        if isinstance(agent, ClaudeAgent):
            agent.maestroctl("integrate", "claude", "--scope", "local")
            url = f"http://127.0.0.1:{port}/mcp"
            done = agent.tool("mcp", "add", "--transport", "http", "maestro", url)
            assert done.returncode == 0, done.stderr
        else:  # user scope: the file of this machine, whose hooks ask the door with curl
            agent.maestroctl("integrate", cli, "--scope", "user", "--trust")
        return agent
    if isinstance(agent, ClaudeAgent):
        agent.maestroctl("integrate", "claude")
    else:
        agent.maestroctl("integrate", cli, "--trust", "--no-mcp")
    if config == "hooks+mcp" and not isinstance(agent, CodexAgent):
        agent.wire_mcp()  # maestroctl mcp over stdio: a process per session
    return agent


def offers_mcp(run: Run) -> bool:
    """Whether the run's model requests offered Maestro's ``get_context``, as each CLI names
    it: Claude Code ``mcp__maestro__get_context`` (2.1.332 lists MCP tools as deferred, behind
    its ToolSearch tool, by name in the prompt), Gemini ``mcp_maestro_get_context``, Codex
    ``get_context`` in the ``mcp__maestro`` namespace of ``tools``."""
    for request in run.model_requests:
        if "mcp__maestro__get_context" in offered_tools(request.body):
            return True
        if any(n in request.text for n in ("mcp__maestro__get_context", "mcp_maestro_get_context")):
            return True
    return False


@dataclass
class Series:
    seconds: list[float] = field(default_factory=list)
    misses: int = 0  # runs that lacked what the configuration promises (memory, MCP tools)

    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000


def measure(cli: str, rounds: int, root: Path, loads: list[float]) -> dict[str, Series]:
    agents = {c: setup(cli, c, root / c) for c in CONFIGS}
    series = {c: Series() for c in CONFIGS}
    try:
        for agent in agents.values():
            agent.run(PROMPT)  # untimed: first-run work of a new HOME
        for r in range(rounds):
            for config in CONFIGS[r % len(CONFIGS) :] + CONFIGS[: r % len(CONFIGS)]:
                loads.append(os.getloadavg()[0])
                run = agents[config].run(PROMPT)
                series[config].seconds.append(run.seconds)
                ok = {
                    "bare": not run.memory(),
                    "hooks": bool(run.memory()) and not offers_mcp(run),
                    "hooks+mcp": bool(run.memory()) and offers_mcp(run),
                    "door": bool(run.memory()) and offers_mcp(run),
                }[config]
                series[config].misses += not ok
            print(f"  {cli} round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    finally:
        for agent in agents.values():
            agent.api.stop()
    return series


def cell(ms: float, bare_ms: float | None) -> str:
    if bare_ms is None:
        return f"{ms:,.0f} ms"
    return f"{ms:,.0f} ms (+{ms - bare_ms:,.0f})"


def table(results: dict[str, dict[str, Series]]) -> list[str]:
    lines = [
        "| per headless session | n | bare | hooks (`integrate`) | hooks + MCP (stdio) "
        "| HTTP door (`integrate` with it open) |",
        "|---|---|---|---|---|---|",
    ]
    notes = []
    for cli, series in results.items():
        bare = series["bare"].median_ms()
        cells = [cell(bare, None)] + [cell(series[c].median_ms(), bare) for c in CONFIGS[1:]]
        n = len(series["bare"].seconds)
        lines.append(f"| `{COMMAND[cli]}` | {n} | " + " | ".join(cells) + " |")
        for config, s in series.items():
            if s.misses:
                notes.append(
                    f"{cli} {config}: {s.misses} of {len(s.seconds)} runs without what the "
                    "setup promises (memory block for hooks, MCP tools offered for MCP)"
                )
    return lines + [""] + [f"* {note}" for note in notes]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="measure_walltime", description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, help="rounds per CLI (default: 7 Claude, 5 others)")
    parser.add_argument("clis", nargs="*", metavar="cli", help="claude, codex, gemini (all)")
    args = parser.parse_args(argv)
    clis = args.clis or list(AGENTS)
    if unknown := set(clis) - set(AGENTS):
        parser.error(f"unknown CLI: {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory(prefix="walltime-", ignore_cleanup_errors=True) as tmp:
        os.environ["MAESTRO_HOME"] = str(Path(tmp) / "maestro-home")
        subprocess.run([maestroctl(), "start"], check=True, capture_output=True)
        loads: list[float] = []
        start_load = os.getloadavg()
        try:
            results = {
                cli: measure(cli, args.rounds or ROUNDS[cli], Path(tmp) / cli, loads)
                for cli in clis
            }
        finally:
            subprocess.run([maestroctl(), "stop"], capture_output=True)
    print("\n".join(table(results)))
    print(
        f"\nLoad average (1 min) over the runs: median {statistics.median(loads):.2f}, "
        f"{min(loads):.2f} to {max(loads):.2f}; at the start {start_load[0]:.2f} "
        f"{start_load[1]:.2f} {start_load[2]:.2f}; {os.cpu_count()} cores. Interleaved "
        "rounds (the four setups in an order rotated each round), medians."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
