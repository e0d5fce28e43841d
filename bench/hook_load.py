"""Issue 28: how often memory reaches a session at load 15-20, and the session-end hook's cost.

``python -m bench.hook_load [--old PATH_TO_OLD_MAESTROCTL] [--busy 16] [--starts 40]``

A private ``MAESTRO_HOME``, a real ``maestrod`` and a registered project with a few rules.
First, on the machine as it is, the session-end hook is timed 15 times each (interleaved)
for this tree's ``maestroctl`` and, with ``--old``, another build's (the hook that did the
digest and waited for the note and maintenance). Then ``--busy`` busy-loop processes run
until the 1-minute load average reaches ``--load``, and ``--starts`` session-start hooks run
one after the other with the real deadlines: each is counted as served (the fresh block),
served the last block, told, or without memory. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RULES = (
    "Always run the tests before committing",
    "Use the repository's ruff configuration for every Python file",
    "Never push directly to main; open a pull request",
)


def _hook(exe: str, env: dict[str, str], event: str, payload: dict[str, str]) -> tuple[str, float]:
    started = time.monotonic()
    done = subprocess.run(
        [exe, "hook", "claude", event],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout, time.monotonic() - started


def _kind(stdout: str) -> str:
    if not stdout.strip():
        return "none"
    doc = json.loads(stdout)
    context = doc.get("hookSpecificOutput", {}).get("additionalContext", "")
    if "may be out of date" in context.split("\n", 1)[0]:
        return "last_block"
    if "could not be loaded this time" in doc.get("systemMessage", ""):
        return "told"
    return "served" if context else "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", help="an older maestroctl to time session-end against")
    parser.add_argument("--busy", type=int, default=16)
    parser.add_argument("--load", type=float, default=15.0)
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--ends", type=int, default=15)
    opts = parser.parse_args()
    exe = shutil.which("maestroctl", path=os.path.dirname(sys.executable)) or "maestroctl"
    root = Path(tempfile.mkdtemp(prefix="hook-load-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAESTRO_", "CLAUDE_"))}
    env["MAESTRO_HOME"] = str(root / "home")
    project = root / "proj"
    project.mkdir()
    daemon = subprocess.Popen([sys.executable, "-m", "maestro_memory.daemon"], env=env)
    busy: list[subprocess.Popen[bytes]] = []
    try:
        ctl = [exe, "-C", str(project)]
        deadline = time.monotonic() + 30
        while subprocess.run([*ctl, "status"], env=env, capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                raise SystemExit("maestrod did not start")
            time.sleep(0.1)
        subprocess.run([*ctl, "register"], env=env, check=True, capture_output=True)
        for rule in RULES:
            save = [*ctl, "save-semantic", rule, "--category", "quality_rule"]
            subprocess.run(save, env=env, check=True, capture_output=True)
        transcript = root / "t.jsonl"
        lines = [
            {"type": "user", "message": {"role": "user", "content": f"Step {i}"}}
            for i in range(200)
        ]
        transcript.write_text("".join(json.dumps(r) + "\n" for r in lines))
        ends: dict[str, list[float]] = {"new": [], "old": []}
        for i in range(opts.ends):
            for name, which in (("new", exe), ("old", opts.old)):
                if which:
                    end = {
                        "session_id": f"end-{name}-{i}",
                        "cwd": str(project),
                        "transcript_path": str(transcript),
                    }
                    ends[name].append(_hook(which, env, "session-end", end)[1])
        _hook(exe, env, "session-start", {"session_id": "warm", "cwd": str(project)})
        busy = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(opts.busy)
        ]
        deadline = time.monotonic() + 600
        while os.getloadavg()[0] < opts.load and time.monotonic() < deadline:
            time.sleep(1)
        load_before = os.getloadavg()[0]
        counts: dict[str, int] = {}
        walls: list[float] = []
        for i in range(opts.starts):
            stdout, wall = _hook(
                exe, env, "session-start", {"session_id": f"s{i}", "cwd": str(project)}
            )
            kind = _kind(stdout)
            counts[kind] = counts.get(kind, 0) + 1
            walls.append(wall)
        log = Path(env["MAESTRO_HOME"], "log", "hooks.log")
        text = log.read_text() if log.exists() else ""
        reasons = ("gave up after", "still running after", "served the last block", "is told")
        result = {
            "hooks_log": {r: text.count(r) for r in reasons},
            "cores": os.cpu_count(),
            "load_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            "session_start": counts,
            "memory_or_told": sum(counts.get(k, 0) for k in ("served", "last_block", "told")),
            "of": opts.starts,
            "start_wall_median_s": round(statistics.median(walls), 3),
            "session_end_median_s": {
                k: round(statistics.median(v), 3) for k, v in ends.items() if v
            },
        }
        print(json.dumps(result, indent=2))
    finally:
        for proc in busy:
            proc.kill()
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
