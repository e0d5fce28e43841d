"""Portable hooks: the project-scope settings a team commits name no path of one machine.

A teammate's clone runs each hook command through ``sh -c`` (Claude Code runs hook commands
with ``/bin/sh -c`` whatever ``$SHELL`` is, seen with 2.1.332) with three PATHs: no maestroctl
at all, a maestroctl that fails, and the real one. Every run exits 0; without maestroctl
nothing is printed.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.client.integrations.claude_settings import CLAUDE_HOOKS, hook_event

from .support import run_cli
from .test_integrate import integrate, ours_in

SH = shutil.which("sh") or "/bin/sh"


def commands_of(settings: dict[str, Any]) -> dict[str, str]:
    return {event: cmds[0] for event, cmds in ours_in(settings).items()}


def run_hook(command: str, cwd: Path, path_dirs: list[Path], env: dict[str, str]) -> Any:
    run_env = {**env, "PATH": os.pathsep.join(str(d) for d in path_dirs)}
    payload = json.dumps({"session_id": "s-1", "cwd": str(cwd), "prompt": "hello"}).encode()
    return subprocess.run(
        [SH, "-c", command], cwd=cwd, env=run_env, input=payload, capture_output=True, timeout=60
    )


def system_dirs() -> list[Path]:
    """The directories holding the shell's own tools (``test``), never a maestroctl."""
    dirs = [Path("/usr/bin"), Path("/bin")]
    for d in dirs:
        assert not (d / "maestroctl").exists(), (
            f"{d} holds a maestroctl: this test needs a PATH without one"
        )
    return dirs


def test_project_scope_names_no_machine_path(project: Path) -> None:
    integrate(project)
    text = (project / ".claude" / "settings.json").read_text()
    assert str(Path(sys.executable).parent) not in text
    assert os.path.expanduser("~") not in text
    for cmd in commands_of(json.loads(text)).values():
        assert cmd.startswith("command -v maestroctl "), cmd
        assert cmd.endswith("|| true")


def test_a_teammates_clone_without_maestroctl_is_silent(
    project: Path, tmp_path: Path, env_home: dict[str, str]
) -> None:
    integrate(project)
    clone = tmp_path / "teammate"
    (clone / ".claude").mkdir(parents=True)
    shutil.copy(project / ".claude" / "settings.json", clone / ".claude" / "settings.json")
    cmds = commands_of(json.loads((clone / ".claude" / "settings.json").read_text()))
    assert sorted(cmds) == sorted(e for e, _, _ in CLAUDE_HOOKS)

    for event, cmd in cmds.items():
        done = run_hook(cmd, clone, system_dirs(), env_home)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), (event, done)

    # A maestroctl that is there but broken: still exit 0 (fail-open), Claude Code carries on.
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    script = broken / "maestroctl"
    script.write_text("#!/bin/sh\necho 'maestroctl: exploded' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    for event, cmd in cmds.items():
        done = run_hook(cmd, clone, [broken, *system_dirs()], env_home)
        assert done.returncode == 0, (event, done)
        assert done.stdout == b"", (event, done)

    # The real maestroctl on PATH: the hook runs it (the session-start hook answers in JSON
    # once the project has memory).
    real = Path(sys.executable).parent
    if not (real / "maestroctl").exists():
        pytest.skip("no maestroctl script beside this Python (package not installed)")
    save = run_cli(
        [
            "save-semantic",
            "-C",
            str(clone),
            "Teammates use the portable hooks",
            "--confidence",
            "0.9",
        ],
        env=env_home,
    )
    assert save.returncode == 0, save.stderr.decode()
    # MAESTRO_HOOK_DEADLINE (from the e2e branch) widens the 0.95 s watchdog on busy cores.
    slow_ok = {**env_home, "MAESTRO_HOOK_DEADLINE": "30"}
    done = run_hook(cmds["SessionStart"], clone, [real, *system_dirs()], slow_ok)
    assert done.returncode == 0, done
    answer = json.loads(done.stdout)
    assert "portable hooks" in json.dumps(answer)


def test_an_old_absolute_path_hook_is_migrated_not_doubled(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {
        "hooks": {
            claude_event: [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"/home/alice/.venv/bin/maestroctl hook claude {event}",
                            "timeout": timeout,
                        }
                    ]
                }
            ]
            for claude_event, event, timeout in CLAUDE_HOOKS
        }
    }
    path.write_text(json.dumps(old, indent=2) + "\n")
    integrate(project)
    data = json.loads(path.read_text())
    for claude_event, event, _ in CLAUDE_HOOKS:
        hooks = [h for g in data["hooks"][claude_event] for h in g["hooks"]]
        assert len(hooks) == 1, hooks
        assert hook_event(hooks[0]) == event
        assert "/home/alice" not in hooks[0]["command"]


def test_local_scope_writes_settings_local_json(project: Path, maestro_home: Path) -> None:
    # A private MAESTRO_HOME: no daemon, so no HTTP door (with one, integrate writes http hooks:
    # tests/integrations/test_integrate_http.py); CI runs a daemon of its own.
    integrate(project, "--scope", "local")
    local = project / ".claude" / "settings.local.json"
    assert not (project / ".claude" / "settings.json").exists()
    cmds = commands_of(json.loads(local.read_text()))
    assert sorted(cmds) == sorted(e for e, _, _ in CLAUDE_HOOKS)
    # This machine's file: the absolute maestroctl, guarded so a deleted venv stays silent.
    for cmd in cmds.values():
        assert cmd.startswith("test -x /") and cmd.endswith("|| true"), cmd
    integrate(project, "--scope", "local", "--remove")
    assert not local.exists()


def test_a_local_hook_whose_maestroctl_is_gone_exits_0(
    project: Path, tmp_path: Path, env_home: dict[str, str], maestro_home: Path
) -> None:  # maestro_home: no daemon, no HTTP door, command hooks (as above)
    integrate(project, "--scope", "local")
    local = project / ".claude" / "settings.local.json"
    data = json.loads(local.read_text())
    for cmds in ours_in(data).values():
        gone = cmds[0].replace("test -x /", f"test -x {tmp_path}/gone/", 1)
        gone = gone.replace("&& /", f"&& {tmp_path}/gone/", 1)
        done = run_hook(gone, project, system_dirs(), env_home)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), done


def test_local_scope_in_a_git_clone_asks_for_gitignore(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    report = integrate(project, "--scope", "local")
    assert "add '.claude/settings.local.json' to .gitignore" in report
    integrate(project, "--scope", "local", "--remove")
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    assert "gitignore" not in integrate(project, "--scope", "local")
