"""One rule for the daemon's directories, asked by maestrod and by ``maestroctl doctor``: a
runtime dir readable by others (0755) is accepted by both; one writable by others by neither."""

from __future__ import annotations

import os
from pathlib import Path

from maestroctl_runner import Cli, scrubbed_env

from maestro_memory.common.paths import dir_problem


def runtime_check(cli: Cli) -> dict[str, str]:
    doc = cli.json("doctor", check=None)  # exit 1 is doctor's verdict on other checks
    checks = doc["result"]["checks"]
    found: dict[str, str] = next(c for c in checks if c["name"] == "runtime dir")
    return found


def test_dir_problem_accepts_0755_and_refuses_group_write(tmp_path: Path) -> None:
    d = tmp_path / "run"
    d.mkdir()
    os.chmod(d, 0o755)
    assert dir_problem(d, os.lstat(d)) is None
    os.chmod(d, 0o775)
    problem = dir_problem(d, os.lstat(d))
    assert problem is not None and "writable by group or others" in problem[0]
    assert problem[1] == f"chmod 700 {d}"
    link = tmp_path / "link"
    link.symlink_to(d)
    problem = dir_problem(link, os.lstat(link))
    assert problem is not None and "symlink" in problem[0]


def test_doctor_agrees_with_the_daemon(tmp_path: Path) -> None:
    home, user = tmp_path / "home", tmp_path / "user"
    run = home / "run"
    run.mkdir(parents=True)
    user.mkdir()
    cli = Cli(scrubbed_env(home, user), tmp_path)
    os.chmod(run, 0o755)
    assert runtime_check(cli)["status"] == "ok"
    os.chmod(run, 0o775)
    check = runtime_check(cli)
    assert check["status"] == "fail" and "writable by group or others" in check["detail"]
    os.chmod(run, 0o700)
