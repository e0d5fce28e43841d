"""``maestroctl`` runs inside agent hooks: heavy modules load only when a command needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from maestroctl_runner import Cli

HEAVY = ("zmq", "psutil", "platformdirs", "watchdog", "apscheduler", "maestro_memory.core")

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
