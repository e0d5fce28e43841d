"""Bench cases for the MCP door, ``maestroctl mcp`` as every agent session starts it (issue 28).

P9: spawn to the ``initialize`` reply, the daemon up, against ``python -c "import zmq"`` in the
same run, interleaved (one of each per round, so a load change hits both alike).
P10: eight sessions at once, each through ``initialize``, ``tools/list`` and a ``get_context``
call the daemon answers: the resident memory of each server process (RSS; USS in the note),
against a process that only imported zmq.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import psutil

from .cases import Bench, Result, percentile

DOOR = [sys.executable, "-m", "maestro_memory.client.cli", "mcp"]
FLOOR = [sys.executable, "-c", "import zmq"]
# A process that imported zmq and waits, as a server between calls does: its memory is P10's base.
FLOOR_IDLE = [
    sys.executable,
    "-c",
    "import sys, zmq; sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()",
]
MIB = 1 << 20


def _message(n: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": n, "method": method}
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode() + b"\n"


INITIALIZE = _message(
    1,
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench"}},
)
SESSION = [
    INITIALIZE,
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
    _message(2, "tools/list"),
    _message(3, "tools/call", {"name": "get_context", "arguments": {"task": "the auth flow"}}),
]


def _ask(proc: subprocess.Popen[bytes], line: bytes) -> dict[str, Any]:
    stdin: IO[bytes] | None = proc.stdin
    stdout: IO[bytes] | None = proc.stdout
    assert stdin is not None and stdout is not None
    stdin.write(line)
    stdin.flush()
    reply: dict[str, Any] = json.loads(stdout.readline())
    return reply


def _door(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(DOOR, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def _close(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


def case_p9(bench: Bench) -> Result:
    root = bench.project(200, 20)
    n = bench.reps(3, 20)
    door_ms: list[float] = []
    floor_ms: list[float] = []
    _close(_door(root, bench.env))  # warms the page cache; not counted
    for _ in range(n):
        t0 = time.perf_counter()
        proc = _door(root, bench.env)
        reply = _ask(proc, INITIALIZE)
        door_ms.append((time.perf_counter() - t0) * 1000)
        _close(proc)
        assert reply["result"]["serverInfo"]["name"] == "maestro-memory", reply
        t0 = time.perf_counter()
        subprocess.run(FLOOR, env=bench.env, check=True)
        floor_ms.append((time.perf_counter() - t0) * 1000)
    med, base = statistics.median(door_ms), statistics.median(floor_ms)
    return {
        "id": "P9",
        "case": "maestroctl mcp (daemon up): spawn to the initialize reply, ms",
        "median": med,
        "p99": percentile(door_ms, 99),
        "baseline": 'python -c "import zmq"',
        "baseline_median": base,
        "ratio": med / base,
        "target": "<= 1.5x",
        "met": med / base <= 1.5,
    }


def case_p10(bench: Bench) -> Result:
    root = bench.project(200, 20)
    sessions = 8
    base_proc = subprocess.Popen(
        FLOOR_IDLE, env=bench.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert base_proc.stdout is not None
    base_proc.stdout.readline()
    base = psutil.Process(base_proc.pid).memory_info().rss / MIB
    _close(base_proc)

    t0 = time.perf_counter()
    procs = [_door(root, bench.env) for _ in range(sessions)]
    answered = 0
    for line in SESSION:  # every session one step at a time, as eight agents starting together
        for proc in procs:
            if b'"id"' not in line:
                assert proc.stdin is not None
                proc.stdin.write(line)
                proc.stdin.flush()
                continue
            reply = _ask(proc, line)
            if reply.get("id") == 3 and "Project Memory" in reply["result"]["content"][0]["text"]:
                answered += 1
    all_ms = (time.perf_counter() - t0) * 1000
    rss = [psutil.Process(p.pid).memory_info().rss / MIB for p in procs]
    uss = [psutil.Process(p.pid).memory_full_info().uss / MIB for p in procs]
    for proc in procs:
        _close(proc)
    med = statistics.median(rss)
    return {
        "id": "P10",
        "case": f"maestroctl mcp, {sessions} sessions at once: RSS per server, MiB",
        "median": med,
        "p99": max(rss),
        "baseline": "a process that imported zmq",
        "baseline_median": base,
        "ratio": med / base,
        "target": "<= 20 MiB",
        "met": max(rss) <= 20 and answered == sessions,
        "note": f"USS per server {statistics.median(uss):.1f} MiB; {answered} of {sessions} "
        f"get_context calls answered with the memory; all {sessions} sessions through "
        f"initialize, tools/list and get_context in {all_ms:.0f} ms",
    }


MCP_CASES = [("P9", case_p9), ("P10", case_p10)]
