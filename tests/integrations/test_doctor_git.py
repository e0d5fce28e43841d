"""``maestroctl doctor`` warns when a project's clone would merge its memory line by line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .support import run_cli


def _doctor_checks(root: Path, env: dict[str, str]) -> list[dict[str, str]]:
    done = run_cli(["--json", "-C", str(root), "doctor"], env=env)
    doc = json.loads(done.stdout)
    checks: list[dict[str, str]] = doc["result"]["checks"]
    return checks


def test_doctor_warns_until_git_setup_ran(tmp_path: Path, env_home: dict[str, str]) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_cli(["-C", str(root), "init", "--session", "s1"], env=env_home).returncode == 0
    before = [c for c in _doctor_checks(root, env_home) if c["name"] == "git merge driver"]
    assert len(before) == 1 and before[0]["status"] == "warn"
    assert "git-setup" in before[0]["fix"]
    assert run_cli(["-C", str(root), "git-setup"], env=env_home).returncode == 0
    after = [c for c in _doctor_checks(root, env_home) if c["name"] == "git merge driver"]
    assert after == []


def test_doctor_closing_line_counts_the_warnings(tmp_path: Path, env_home: dict[str, str]) -> None:
    root = tmp_path / "clone"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert run_cli(["-C", str(root), "init", "--session", "s1"], env=env_home).returncode == 0
    done = run_cli(["-C", str(root), "doctor"], env=env_home)
    stdout = done.stdout.decode()
    lines = stdout.rstrip("\n").splitlines()
    warned = sum(1 for line in lines if line.startswith("warn  "))
    failed = sum(1 for line in lines if line.startswith("FAIL  "))
    assert warned >= 1  # at least the git merge driver, not set up yet
    assert f"{warned} warning" in lines[-1], lines[-1]
    assert lines[-1].startswith(f"{failed} problem" if failed else "No problems"), lines[-1]
    assert "No problems found." not in stdout
    checks = _doctor_checks(root, env_home)
    doc = json.loads(run_cli(["--json", "-C", str(root), "doctor"], env=env_home).stdout)
    assert doc["result"]["warnings"] == sum(1 for c in checks if c["status"] == "warn")
