"""The systemd unit and launchd plist: rendered from package data, verified, installed.

Nothing here touches the real user's service files: ``HOME`` points into the test's
directory, and ``systemctl`` / ``launchctl`` are stand-ins on ``PATH`` that record their
arguments (the container has no user service manager to talk to).
"""

from __future__ import annotations

import json
import os
import plistlib
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from maestroctl_runner import Cli

from maestro_memory.client.integrations import service

VENV_MAESTROD = Path(os.path.abspath(sys.executable)).parent / "maestrod"


def test_templates_ship_inside_the_package() -> None:
    unit = resources.files("maestro_memory.systemd").joinpath("maestrod.service").read_text()
    plist = resources.files("maestro_memory.launchd").joinpath(service.LAUNCHD_TEMPLATE)
    assert "ExecStart={maestrod}" in unit
    assert plistlib.loads(plist.read_bytes())["Label"] == service.LAUNCHD_LABEL


def test_maestrod_is_the_one_beside_this_python() -> None:
    found = service.find_maestrod()
    assert found == VENV_MAESTROD and found.is_absolute() and os.access(found, os.X_OK)


def test_rendered_unit_has_the_required_settings() -> None:
    text = service.render_systemd(VENV_MAESTROD, {})
    lines = set(text.splitlines())
    for line in (
        "Type=notify",
        f"ExecStart={VENV_MAESTROD}",
        "Restart=on-failure",
        "Environment=PYTHONUNBUFFERED=1",
        "WantedBy=default.target",
    ):
        assert line in lines, line
    assert any(x.startswith("RestartSec=") for x in lines)
    assert any(x.startswith("StartLimitIntervalSec=") for x in lines)
    assert any(x.startswith("StartLimitBurst=") for x in lines)
    assert "MAESTRO_HOME" not in text
    with_home = service.render_systemd(VENV_MAESTROD, {"MAESTRO_HOME": "/srv/maestro home"})
    assert 'Environment="MAESTRO_HOME=/srv/maestro home"' in with_home.splitlines()


def test_unit_quotes_awkward_paths() -> None:
    text = service.render_systemd(Path("/opt/my tools/100%/maestrod"), {})
    assert 'ExecStart="/opt/my tools/100%%/maestrod"' in text.splitlines()


def test_rendered_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / service.SYSTEMD_UNIT
    unit.write_text(service.render_systemd(VENV_MAESTROD, {}))
    runtime = tmp_path / "xdg-runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        [tool, "--user", "verify", str(unit)], capture_output=True, text=True, env=env, timeout=60
    )
    if done.returncode != 0 and str(unit) not in done.stderr + done.stdout:
        pytest.skip(f"systemd-analyze cannot run here: {done.stderr.strip()[-300:]}")
    # verify exits 0 even for unknown keys, so its output must be empty as well
    assert done.returncode == 0 and done.stdout.strip() == "" and done.stderr.strip() == "", (
        done.stderr
    )
    # and it does complain about a broken unit (the check is not vacuous)
    unit.write_text(unit.read_text().replace("Restart=on-failure", "Restart=sometimes"))
    bad = subprocess.run(
        [tool, "--user", "verify", str(unit)], capture_output=True, text=True, env=env, timeout=60
    )
    assert "sometimes" in bad.stderr


def test_rendered_plist_parses_and_names_an_absolute_maestrod(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    data = plistlib.loads(service.render_launchd(VENV_MAESTROD, log_dir, {}).encode())
    program = data["ProgramArguments"][0]
    assert os.path.isabs(program) and os.access(program, os.X_OK)
    assert program == str(VENV_MAESTROD)
    assert data["Label"] == service.LAUNCHD_LABEL
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert isinstance(data["ThrottleInterval"], int) and data["ThrottleInterval"] > 0
    for key in ("StandardOutPath", "StandardErrorPath"):
        assert os.path.isabs(data[key]) and data[key].startswith(str(log_dir))
    path_dirs = data["EnvironmentVariables"]["PATH"].split(":")
    assert path_dirs[0] == str(VENV_MAESTROD.parent) and "/usr/bin" in path_dirs
    assert "MAESTRO_HOME" not in data["EnvironmentVariables"]
    special = service.render_launchd(
        Path("/Users/a&b/<bin>/maestrod"), log_dir, {"MAESTRO_HOME": "/tmp/m"}
    )
    parsed = plistlib.loads(special.encode())
    assert parsed["ProgramArguments"] == ["/Users/a&b/<bin>/maestrod"]
    assert parsed["EnvironmentVariables"]["MAESTRO_HOME"] == "/tmp/m"


@pytest.fixture
def fake_tools(tmp_path: Path) -> tuple[Path, Path]:
    """``systemctl`` and ``launchctl`` stand-ins that log their argv as JSON lines."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.jsonl"
    for name in ("systemctl", "launchctl"):
        script = bin_dir / name
        script.write_text(
            f"#!{sys.executable}\n"
            "import json, sys\n"
            f"with open({str(calls)!r}, 'a') as fh:\n"
            "    fh.write(json.dumps(sys.argv) + '\\n')\n"
            "if 'is-enabled' in sys.argv: print('enabled')\n"
            "if 'is-active' in sys.argv: print('active')\n"
        )
        script.chmod(0o755)
    return bin_dir, calls


def _calls(calls: Path) -> list[list[str]]:
    if not calls.exists():
        return []
    return [[Path(a[0]).name, *a[1:]] for a in map(json.loads, calls.read_text().splitlines())]


def test_dry_run_prints_and_changes_nothing(
    cli: Cli, user_home: Path, fake_tools: tuple[Path, Path]
) -> None:
    bin_dir, calls = fake_tools
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = cli.result("service", "install", "--dry-run", env=env)
    target = user_home / ".config" / "systemd" / "user" / "maestrod.service"
    assert result["dry_run"] is True and result["service_file"] == str(target)
    runs = [a["argv"] for a in result["actions"] if a["action"] == "run"]
    assert runs == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", "maestrod.service"],
    ]
    written = next(a for a in result["actions"] if a["action"] == "write")
    assert f"ExecStart={VENV_MAESTROD}" in written["content"]
    assert f"Environment=MAESTRO_HOME={cli.env['MAESTRO_HOME']}" in written["content"]
    human = cli("service", "install", "--dry-run", env=env).stdout
    assert "Would:" in human and "systemctl --user enable --now maestrod.service" in human
    assert not target.exists() and not (user_home / ".config").exists()
    assert _calls(calls) == []
    mac = cli.result("service", "install", "--dry-run", "--manager", "launchd", env=env)
    assert mac["service_file"] == str(
        user_home / "Library" / "LaunchAgents" / "com.maestro.memory.plist"
    )
    assert ["launchctl", "bootstrap", f"gui/{os.getuid()}", mac["service_file"]] in [
        a["argv"] for a in mac["actions"] if a["action"] == "run"
    ]
    assert not (user_home / "Library").exists()


def test_xdg_config_home_is_honoured(cli: Cli, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    result = cli.result("service", "install", "--dry-run", env={"XDG_CONFIG_HOME": str(xdg)})
    assert result["service_file"] == str(xdg / "systemd" / "user" / "maestrod.service")


def test_install_status_uninstall_with_a_stand_in_systemctl(
    cli: Cli, user_home: Path, fake_tools: tuple[Path, Path]
) -> None:
    bin_dir, calls = fake_tools
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    target = user_home / ".config" / "systemd" / "user" / "maestrod.service"
    installed = cli.result("service", "install", env=env)
    assert installed["dry_run"] is False and target.exists()
    assert f"ExecStart={VENV_MAESTROD}" in target.read_text()
    assert _calls(calls) == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "--now", "maestrod.service"],
    ]
    status = cli.result("service", "status", env=env)
    assert status["installed"] is True and status["maestrod"] == str(VENV_MAESTROD)
    assert status["up_to_date"] is True and status["state"]["active"] == "active"
    assert "Installed (systemd)" in cli("service", "status", env=env).stdout
    # doctor sees the installed service as healthy
    checks = {c["name"]: c for c in cli.json("doctor", env=env, check=None)["result"]["checks"]}
    assert checks["service"]["status"] == "ok"
    calls.unlink()
    removed = cli.result("service", "uninstall", env=env)
    assert removed["operation"] == "uninstall" and not target.exists()
    assert _calls(calls) == [
        ["systemctl", "--user", "disable", "--now", "maestrod.service"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert cli.result("service", "status", env=env)["installed"] is False
    again = cli("service", "uninstall", env=env)
    assert "nothing to uninstall" in again.stdout


def test_a_stale_service_file_is_a_doctor_problem(cli: Cli, user_home: Path) -> None:
    target = user_home / ".config" / "systemd" / "user" / "maestrod.service"
    target.parent.mkdir(parents=True)
    target.write_text(service.render_systemd(Path("/gone/venv/bin/maestrod"), cli.env))
    doc = cli.json("doctor", check=1)
    check = next(c for c in doc["result"]["checks"] if c["name"] == "service")
    assert check["status"] == "fail" and check["fix"] == "maestroctl service install"
    assert "FAIL  service" in cli("doctor", check=1).stdout


def test_install_fails_clearly_when_the_manager_is_missing(cli: Cli, tmp_path: Path) -> None:
    empty_bin = tmp_path / "emptybin"
    empty_bin.mkdir()
    doc = cli.json("service", "install", env={"PATH": str(empty_bin)}, check=1)
    assert doc["error"]["code"] == "service_error"
    assert "systemctl not found" in doc["error"]["message"]


@pytest.mark.usefixtures("stop_background")
def test_start_goes_through_the_installed_service(
    cli: Cli, tmp_path: Path, fake_tools: tuple[Path, Path]
) -> None:
    """With the unit installed, `start` asks systemctl; this stand-in starts maestrod the way
    systemd would (in the foreground of its own process), and `start` waits for it."""
    bin_dir, calls = fake_tools
    launcher = bin_dir / "systemctl"
    launcher.write_text(
        f"#!{sys.executable}\n"
        "import json, subprocess, sys\n"
        f"with open({str(calls)!r}, 'a') as fh:\n"
        "    fh.write(json.dumps(sys.argv) + '\\n')\n"
        "if sys.argv[1:3] == ['--user', 'start']:\n"
        f"    subprocess.Popen([{str(VENV_MAESTROD)!r}], start_new_session=True,\n"
        "                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,\n"
        "                     stderr=subprocess.DEVNULL)\n"
    )
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    cli("service", "install", env=env)
    started = cli.result("start", env=env)
    assert started["started"] is True and started["started_by"] == "systemd"
    assert ["systemctl", "--user", "start", "maestrod.service"] in _calls(calls)
    assert cli.result("status", env=env)["process"]["pid"] == started["pid"]
    assert "started by systemd" in cli("restart", env=env).stdout
