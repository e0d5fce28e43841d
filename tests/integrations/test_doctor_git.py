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
