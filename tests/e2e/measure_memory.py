"""What the memory does in real Claude Code use, measured: not a test (numbers never fail
tests), run by hand with the pinned CLI installed:

    MAESTRO_HOME=$(mktemp -d) .venv/bin/python -m tests.e2e.measure_memory \\
        [--sessions 40] [--parallel 8] [--decay-unit session|day] [--deadline SECONDS]

Starts its own maestrod (``maestroctl start``, with ``[core] decay_unit`` written to
``config.toml``) and the stand-in Anthropic API, makes a git project with ``maestroctl init``,
``register`` and ``integrate claude``, then with the real ``claude -p``:

1. says a rule (``From now on, always use pnpm instead of npm``) in one session;
2. runs ``--sessions`` further sessions of unrelated work one after the other, printing after
   each one the rule's confidence in semantic.md and whether the rule was in that session's
   request, as the person's standing instruction;
3. starts ``--parallel`` sessions at once and prints the rule's confidence before and after;
4. prints the time each hook took per event, as Claude Code ran it (the hook commands are
   wrapped by capture_hook.py, which times the real ``maestroctl hook claude <event>``).

The hooks run with the default deadline (0.95 s) unless ``--deadline`` is given, as a user has
them; a hook that gives up is counted from hooks.log.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from maestro_memory.common import paths
from maestro_memory.core import MemoryStore
from maestro_memory.core.context import INSTRUCTIONS

from .agents import (
    CAPTURE_HOOK,
    CLAUDE_MAESTRO_HOOKS,
    ClaudeAgent,
    find_cli,
    maestroctl,
    memory_blocks,
)
from .fake_anthropic import FakeAnthropic
from .test_claude_lasting import RULE, TASKS  # the same rule and tasks as the tests


def ctl(*args: str) -> None:
    subprocess.run([maestroctl(), *args], check=True, capture_output=True)


def make_project(root: Path) -> Path:
    proj = root / "project"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    for sub in ("init", "register"):
        ctl("-C", str(proj), sub)
    ctl("-C", str(proj), "integrate", "claude")
    return proj


def wrap_hooks(agent: ClaudeAgent, log: Path) -> None:
    """Replace the commands `integrate claude` wrote with the same ones, timed."""
    settings_path = agent.project / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["hooks"] = {}
    settings_path.write_text(json.dumps(settings))
    agent.wire_hooks(
        {
            event: f"{sys.executable} {CAPTURE_HOOK} {log} {ours} -- "
            f"{maestroctl()} hook claude {ours}"
            for event, ours in CLAUDE_MAESTRO_HOOKS.items()
        }
    )


def rule_confidence(project: Path) -> float | None:
    found = [e for e in MemoryStore(project).read().semantic_entries() if "pnpm" in e.text]
    return found[0].confidence if found else None


def as_instruction(blocks: list[str]) -> bool:
    for block in blocks:
        lines = block.splitlines()
        if INSTRUCTIONS in lines and any(
            "pnpm" in line for line in lines[lines.index(INSTRUCTIONS) + 1 :][:10]
        ):
            return True
    return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="measure_memory")
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--decay-unit", choices=("day", "session"), default="session")
    parser.add_argument("--deadline", default="", help="MAESTRO_HOOK_DEADLINE (default: none)")
    ns = parser.parse_args(argv)
    if "MAESTRO_HOME" not in os.environ:
        raise SystemExit("set MAESTRO_HOME to a temporary directory first")
    binary, reason = find_cli("claude")
    if binary is None:
        raise SystemExit(reason)
    where = paths.resolve()
    where.config_dir.mkdir(parents=True, exist_ok=True)
    where.config_path.write_text(f'[core]\ndecay_unit = "{ns.decay_unit}"\n')
    ctl("start")
    try:
        with tempfile.TemporaryDirectory(prefix="measure-memory-") as tmp, FakeAnthropic() as api:
            root = Path(tmp)
            home = root / "home"
            home.mkdir()
            project = make_project(root)
            agent = ClaudeAgent(binary, home, project, api)
            agent.extra_env["MAESTRO_HOOK_DEADLINE"] = ns.deadline
            log = root / "hooks.jsonl"
            wrap_hooks(agent, log)

            agent.run(RULE)
            print(f"decay_unit={ns.decay_unit}; rule said: confidence {rule_confidence(project)}")
            shown = 0
            for i in range(ns.sessions):
                run = agent.run(f"{TASKS[i % len(TASKS)]} (session {i + 1}).")
                seen = as_instruction(run.memory())
                shown += seen
                print(
                    f"session {i + 1:3}: confidence {rule_confidence(project)}, "
                    f"rule in the request as an instruction: {'yes' if seen else 'NO'} "
                    f"({run.seconds:.1f} s)",
                    flush=True,
                )
            print(f"rule in {shown} of {ns.sessions} requests")

            before = rule_confidence(project)
            runs, requests = agent.run_parallel(
                [f"{TASKS[i % len(TASKS)]} (agent {i})." for i in range(ns.parallel)]
            )
            failed = sum(r.returncode != 0 for r in runs)
            with_rule = sum(as_instruction(memory_blocks(r.body)) for r in requests)
            print(
                f"{ns.parallel} parallel agents: confidence {before} -> "
                f"{rule_confidence(project)}; rule in {with_rule} of {len(requests)} requests; "
                f"{failed} runs failed"
            )

            records = [json.loads(line) for line in log.read_text().splitlines()]
            for event in CLAUDE_MAESTRO_HOOKS.values():
                times = [r["seconds"] for r in records if r["tag"] == event]
                if times:
                    print(
                        f"hook {event:13} median {statistics.median(times):.3f} s  "
                        f"min {min(times):.3f}  max {max(times):.3f}  (n={len(times)})"
                    )
            try:
                text = (where.log_dir / "hooks.log").read_text()
            except OSError:
                text = ""
            print(f"hooks that gave up (hooks.log): {text.count('gave up after')}")
    finally:
        subprocess.run([maestroctl(), "stop"], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
