"""A registered project that is gone (deleted, a drive not mounted) is never re-created:
``maintain --all`` and the scheduled maintenance skip it and report it ``missing``, and so do
``status`` and ``doctor``; a write to it is ``project_missing``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for
from test_daemon_scheduler import LEAD_SECONDS, last_run, schedule_soon

from maestro_memory.core import MemoryStore

CLI = [sys.executable, "-m", "maestro_memory.client.cli"]


def maestroctl(daemon: DaemonHandle, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MAESTRO_HOME": str(daemon.home)}
    env.pop("MAESTRO_REQUIRE_DAEMON", None)
    return subprocess.run(
        [*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    for root in (kept, gone):
        root.mkdir()
        MemoryStore(root).save_semantic(f"Rule of {root.name}", "quality_rule", 1.0)
    return kept, gone


@pytest.mark.parametrize("what", ["project", "memory"])
def test_maintain_all_skips_a_missing_project_and_never_recreates_it(
    daemon_factory: DaemonFactory, two: tuple[Path, Path], tmp_path: Path, what: str
) -> None:
    kept, gone = two
    daemon = daemon_factory()
    daemon.register(kept)
    daemon.register(gone)
    removed = gone if what == "project" else gone / ".maestro" / "memory"
    shutil.rmtree(removed)
    done = maestroctl(daemon, tmp_path, "maintain", "--all", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == 0, doc
    by_path = {r["project"]: r for r in doc["result"]["projects"]}
    assert "missing" in by_path[str(gone)]["missing"], by_path
    assert "report" in by_path[str(kept)]
    assert not removed.exists()  # not re-created
    status = maestroctl(daemon, tmp_path, "status")
    assert "MISSING" in status.stdout, status.stdout
    doctor = maestroctl(daemon, tmp_path, "doctor")
    assert str(gone) in doctor.stdout and doctor.returncode == 1
    if what == "project":  # a person's own save in a project whose memory is gone makes it
        reply = daemon.request(
            "save_semantic", gone, fact="Planted", category="quality_rule", confidence=1.0
        )
        assert reply["error"]["code"] == "project_missing", reply
        assert not removed.exists()


def test_the_scheduled_maintenance_reports_it_missing(
    daemon_factory: DaemonFactory, two: tuple[Path, Path]
) -> None:
    kept, gone = two
    daemon = daemon_factory()
    daemon.register(kept)
    daemon.register(gone)
    shutil.rmtree(gone)
    schedule_soon(daemon)
    run = wait_for(
        lambda: last_run(daemon, gone),
        timeout=LEAD_SECONDS * 10 + 120,  # a deadline to fail by, not a timing
        message="the scheduled maintenance",
    )
    assert run["outcome"] == "missing", run
    assert str(gone) in run["message"]
    assert not gone.exists()
    assert (
        wait_for(lambda: last_run(daemon, kept), message="the kept project's run")["outcome"]
        == "ok"
    )
