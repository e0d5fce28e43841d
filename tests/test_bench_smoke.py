"""The benchmark harness runs end to end (``--quick``). Timings are reported, never asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_bench_quick_runs_every_case_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())
    ids = [r["id"] for r in data["results"]]
    assert ids == ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P6b", "P11", "P9", "P10"]
    for r in data["results"]:
        assert r["median"] is not None and r["median"] == r["median"]  # measured, not NaN
        assert r["id"] in done.stdout
    p3 = next(r for r in data["results"] if r["id"] == "P3")
    assert p3["note"].endswith("0 missing afterwards"), p3["note"]  # correctness, not speed
    p6b = next(r for r in data["results"] if r["id"] == "P6b")
    assert p6b["on_inotify"] == 50, p6b["note"]  # every project watched, none polled
    p10 = next(r for r in data["results"] if r["id"] == "P10")
    assert "8 of 8 get_context calls answered" in p10["note"], p10["note"]  # the daemon's memory
