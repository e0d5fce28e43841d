"""``maestroctl`` runs inside agent hooks: heavy modules load only when a command needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import Cli
from maestrod_testkit import wait_for

HEAVY = ("zmq", "psutil", "platformdirs", "watchdog", "apscheduler", "numpy", "maestro_memory.core")

PROBE = """
import json, sys
from maestro_memory.client import cli
code = cli.main(sys.argv[1:])
sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def loaded_after(cli: Cli, *args: str, cwd: Path) -> tuple[set[str], dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        env=cli.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    marker = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    modules = set(json.loads(marker.removeprefix("MODULES ")))
    return modules, json.loads(done.stdout) if done.stdout.strip() else {}


def heavy_in(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_importing_the_cli_loads_nothing_heavy() -> None:
    code = (
        "import sys; from maestro_memory.client import cli; cli.build_parser(); "
        "import maestro_memory.client; print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert heavy_in(set(done.stdout.split())) == set()


def test_direct_mode_context_does_not_load_zmq(cli: Cli, project: Path) -> None:
    modules, doc = loaded_after(cli, "context", "--json", cwd=project)
    assert doc["ok"] is True and doc["via"] == "direct"
    assert "maestro_memory.core" in modules  # the files are read here
    assert heavy_in(modules) <= {m for m in modules if m.startswith("maestro_memory.core")}


def test_daemon_mode_context_does_not_load_the_core(cli: Cli, daemon: Any, project: Path) -> None:
    daemon.register(project)
    modules, doc = loaded_after(cli, "context", "--json", cwd=project)
    assert doc["ok"] is True and doc["via"] == "daemon"
    assert {m for m in heavy_in(modules) if not m.startswith("zmq")} == set()


# -- the agent hook: ``maestroctl hook <tool> session-start`` runs at every agent start -------
# What the hook may load beyond ``import zmq`` (the floor it is measured against, bench P8):
# the client, its light socket (the standard library's ``socket``, not zmq itself), the hook
# runtime and the light common modules. Not argparse or the command
# modules (the CLI dispatches the hook before building its parser), not the core (the daemon's
# reply carries the token count), not platformdirs (MAESTRO_HOME is set here).
HOOK_MAY_LOAD = {
    "_socket",
    "unicodedata",
    "array",
    "select",
    "selectors",
    "socket",
    "fcntl",
    "signal",
    "hashlib",  # the kept block's name (BLAKE2b of the project's path), about 5 ms
    "_hashlib",
    "_blake2",
    "maestro_memory",
    "maestro_memory.client",
    "maestro_memory.client._client",
    "maestro_memory.client._liveness",
    "maestro_memory.client._opmethods",
    "maestro_memory.client._zmtp",
    "maestro_memory.client.cli",
    "maestro_memory.client.cli.exits",
    "maestro_memory.client.cli.main",
    "maestro_memory.client.errors",
    "maestro_memory.client.integrations",
    "maestro_memory.client.integrations.hooks",
    "maestro_memory.common",
    "maestro_memory.common.agents",
    "maestro_memory.common.atomic",  # the last block kept atomically (os only)
    "maestro_memory.common.errors",
    "maestro_memory.common.hidden",  # hidden characters shown visibly (re, unicodedata)
    "maestro_memory.common.hookio",  # what a hook answers (json only)
    "maestro_memory.common.httpdoor",  # is the daemon's HTTP door open (os, json, urllib)
    "maestro_memory.common.layout",
    "maestro_memory.common.limits",  # the size caps (names only)
    "maestro_memory.common.paths",
    "maestro_memory.common.protocol",
}


def _modules_of(code: str, env: dict[str, str], *args: str, stdin: str = "") -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    marker = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    modules: set[str] = set(json.loads(marker.removeprefix("MODULES ")))
    if args:
        modules.add("STDOUT " + done.stdout)
    return modules


def _hook_modules(cli: Cli, project: Path, tool: str = "claude") -> tuple[set[str], str]:
    event = json.dumps({"session_id": "imports-1", "cwd": str(project)})
    # A loaded machine must not turn the direct path's core import into a deadline skip.
    env = {**cli.env, "MAESTRO_HOOK_DEADLINE": "30"}
    loaded = _modules_of(PROBE, env, "hook", tool, "session-start", stdin=event)
    stdout = next(m for m in loaded if m.startswith("STDOUT "))
    return loaded - {stdout}, stdout.removeprefix("STDOUT ")


def _zmq_floor(cli: Cli) -> set[str]:
    """What ``python -c "import zmq"`` loads: the floor the hook and the MCP door are held to."""
    return _modules_of(
        "import sys, json, zmq; "
        "sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')",
        cli.env,
    )


def _with_a_rule(cli: Cli, project: Path) -> None:
    saved = cli(
        "-C",
        str(project),
        "save-semantic",
        "Run the linters before every commit",
        "--category",
        "quality_rule",
        "--confidence",
        "0.9",
        "--json",
    )
    assert saved.returncode == 0, saved.stderr


@pytest.mark.parametrize("tool", ["claude", "gemini"])
def test_session_start_hook_with_the_daemon_loads_little_beyond_zmq(
    cli: Cli, daemon: Any, project: Path, tool: str
) -> None:
    daemon.register(project)
    _with_a_rule(cli, project)
    floor = _zmq_floor(cli)
    loaded, stdout = _hook_modules(cli, project, tool)
    # The daemon answered: the rule is in the context the hook printed.
    assert (
        "Run the linters before every commit"
        in json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    )
    assert loaded - floor - HOOK_MAY_LOAD == set()
    for heavy in (
        "zmq",  # the light socket (client/_zmtp.py) talks to the daemon
        "maestro_memory.core",
        "argparse",
        "maestro_memory.client.cli.commands",
        "platformdirs",
        "detect_secrets",
        "dataclasses",
    ):
        assert heavy not in loaded


def test_session_end_hook_with_the_daemon_hands_over_and_loads_no_core(
    cli: Cli, daemon: Any, project: Path, tmp_path: Path
) -> None:
    daemon.register(project)
    _with_a_rule(cli, project)
    transcript = tmp_path / "t.jsonl"
    prompt = {"type": "user", "message": {"role": "user", "content": "Add a signup form"}}
    transcript.write_text(json.dumps(prompt) + "\n")
    event = json.dumps(
        {"session_id": "end-1", "cwd": str(project), "transcript_path": str(transcript)}
    )
    env = {**cli.env, "MAESTRO_HOOK_DEADLINE": "30"}
    loaded = _modules_of(PROBE, env, "hook", "claude", "session-end", stdin=event)
    loaded = {m for m in loaded if not m.startswith("STDOUT ")}
    assert loaded - _zmq_floor(cli) - HOOK_MAY_LOAD == set()
    for heavy in ("zmq", "maestro_memory.core", "maestro_memory.common.ops", "argparse"):
        assert heavy not in loaded
    episodic = project / ".maestro" / "memory" / "episodic.md"
    wait_for(lambda: episodic.exists() and "signup form" in episodic.read_text(), 30)


def test_session_start_hook_without_the_daemon_reads_the_files(cli: Cli, project: Path) -> None:
    _with_a_rule(cli, project)  # no daemon: written directly
    loaded, stdout = _hook_modules(cli, project)
    assert (
        "Run the linters before every commit"
        in json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    )
    assert "maestro_memory.core" in loaded  # the direct fallback loads the core, and only then
    assert "argparse" not in loaded


def test_the_hook_fast_path_keeps_the_parsers_help_and_errors(cli: Cli) -> None:
    helped = cli("hook", "--help")
    assert helped.returncode == 0 and "usage: maestroctl hook" in helped.stdout
    for bad in (
        ["hook", "vim", "session-start"],
        ["hook", "claude", "session-begin"],
        ["hook", "claude"],
    ):
        run = cli(*bad, check=2)
        assert run.returncode == 2, (bad, run.stderr)
        assert "invalid choice" in run.stderr or "required" in run.stderr


# -- the MCP server: ``maestroctl mcp`` is started by every agent session ---------------------
# With the daemon up it speaks MCP's JSON-RPC itself and asks the daemon: beyond what the hook
# may load, only its own two modules (and json's encoder) -- no SDK, no pydantic, no core.
MCP_MAY_LOAD = HOOK_MAY_LOAD - {"maestro_memory.client.integrations.hooks", "signal"} | {
    "maestro_memory.client.integrations.mcp_server",
    "maestro_memory.client.integrations.mcp_tools",
}
MCP_SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get_context", "arguments": {"task": "commit"}},
    },
]


def test_mcp_server_with_the_daemon_loads_no_sdk_and_no_core(
    cli: Cli, daemon: Any, project: Path
) -> None:
    daemon.register(project)
    _with_a_rule(cli, project)
    floor = _zmq_floor(cli)
    stdin = "".join(json.dumps(m) + "\n" for m in MCP_SESSION)
    probe = PROBE.replace("cli.main(sys.argv[1:])", "(os.chdir(sys.argv[1]), cli.main(['mcp']))[1]")
    loaded = _modules_of("import os\n" + probe, cli.env, str(project), stdin=stdin)
    stdout = next(m for m in loaded if m.startswith("STDOUT ")).removeprefix("STDOUT ")
    replies = [json.loads(line) for line in stdout.splitlines()]
    context = replies[-1]["result"]["content"][0]["text"]
    assert "Run the linters before every commit" in context  # the daemon answered
    loaded = {m for m in loaded if not m.startswith("STDOUT ")}
    assert loaded - floor - MCP_MAY_LOAD - {"os"} == set()
    for heavy in ("zmq", "maestro_memory.core", "mcp", "pydantic", "argparse", "anyio"):
        assert heavy not in loaded


def test_a_small_core_module_loads_without_the_rest() -> None:
    """``core`` resolves its public names lazily: the token estimate, the file protocol and the
    value types load alone, without the rules (``memory``, ``signals``, the meaning layer)."""
    code = (
        "import sys; import maestro_memory.core.text, maestro_memory.core.fsio, "
        "maestro_memory.core.model; print(' '.join(sorted(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(done.stdout.split())
    for rule in ("memory", "store", "signals", "saving", "frame", "meaning", "context"):
        assert f"maestro_memory.core.{rule}" not in loaded
    assert "numpy" not in loaded
    from maestro_memory import core

    assert core.MemoryStore.__module__ == "maestro_memory.core.store"  # still there, on use
