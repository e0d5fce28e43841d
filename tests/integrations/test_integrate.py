"""``integrate claude``: our hooks merged into settings that already hold other tools' hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.client.integrations.claude_settings import CLAUDE_HOOKS, is_our_hook

from .support import run_cli

OTHER_SETTINGS: dict[str, Any] = {
    "model": "sonnet",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-guard check"}]},
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "load-env.sh", "timeout": 5}],
            },
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "prompt-logger --quiet"}]},
        ],
    },
    "env": {"FOO": "bar"},
}


def ours_in(settings: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for h in group.get("hooks", []):
                if is_our_hook(h):
                    found.setdefault(event, []).append(h["command"])
    return found


def others_in(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings with our hooks taken out by hand (groups that held only ours dropped)."""
    copy = json.loads(json.dumps(settings))
    for event in list(copy.get("hooks", {})):
        groups = []
        for group in copy["hooks"][event]:
            rest = [h for h in group.get("hooks", []) if not is_our_hook(h)]
            if rest:
                groups.append({**group, "hooks": rest})
        if groups:
            copy["hooks"][event] = groups
        else:
            del copy["hooks"][event]
    return copy


def integrate(project: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = run_cli(["integrate", "claude", "-C", str(project), *args], env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


@pytest.mark.parametrize("indent", [2, 4])
def test_merges_with_other_hooks_and_removes_exactly(project: Path, indent: int) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    original = json.dumps(OTHER_SETTINGS, indent=indent) + "\n"
    path.write_text(original)

    integrate(project)
    added = json.loads(path.read_text())
    assert others_in(added) == OTHER_SETTINGS  # theirs survive exactly, in order
    ours = ours_in(added)
    assert sorted(ours) == sorted(event for event, _, _ in CLAUDE_HOOKS)
    for event, sub, _ in CLAUDE_HOOKS:
        assert len(ours[event]) == 1 and f"hook claude {sub} || true" in ours[event][0]
    # The other tool's SessionStart group is not touched; ours is a group of its own.
    assert added["hooks"]["SessionStart"][0] == OTHER_SETTINGS["hooks"]["SessionStart"][0]
    assert "matcher" not in added["hooks"]["SessionStart"][1]  # every source, compact too

    after_once = path.read_text()
    report = integrate(project)
    assert path.read_text() == after_once and "nothing to change" in report

    integrate(project, "--remove")
    assert path.read_text() == original
    assert "nothing to remove" in integrate(project, "--remove")
    assert path.read_text() == original


def test_dry_run_writes_nothing(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    out = integrate(project, "--dry-run")
    assert not path.exists() and not path.parent.exists()
    shown = json.loads(out.split("\n", 1)[1])
    assert sorted(ours_in(shown)) == sorted(e for e, _, _ in CLAUDE_HOOKS)

    path.parent.mkdir()
    path.write_text(json.dumps(OTHER_SETTINGS, indent=2) + "\n")
    before = path.read_text()
    integrate(project, "--dry-run")
    assert path.read_text() == before
    integrate(project)
    installed = path.read_text()
    integrate(project, "--remove", "--dry-run")
    assert path.read_text() == installed


def test_a_new_settings_file_is_removed_again(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    integrate(project)
    assert sorted(ours_in(json.loads(path.read_text()))) == sorted(e for e, _, _ in CLAUDE_HOOKS)
    integrate(project, "--remove")
    assert not path.exists()


def test_user_scope_writes_the_home_settings(project: Path, env_home: dict[str, str]) -> None:
    home_settings = Path(env_home["HOME"]) / ".claude" / "settings.json"
    home_settings.parent.mkdir()
    home_settings.write_text(json.dumps({"theme": "dark"}, indent=2) + "\n")
    integrate(project, "--scope", "user", env=env_home)
    data = json.loads(home_settings.read_text())
    assert data["theme"] == "dark" and len(ours_in(data)) == 3
    assert not (project / ".claude").exists()
    integrate(project, "--scope", "user", "--remove", env=env_home)
    assert json.loads(home_settings.read_text()) == {"theme": "dark"}


def test_a_moved_maestroctl_is_updated_in_place(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    stale = {
        "hooks": {
            "SessionStart": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/maestroctl hook claude session-start",
                            "timeout": 10,
                        }
                    ]
                }
            ]
        }
    }
    path.write_text(json.dumps(stale, indent=2) + "\n")
    integrate(project)
    ours = ours_in(json.loads(path.read_text()))
    assert len(ours["SessionStart"]) == 1
    assert not ours["SessionStart"][0].startswith("/old/")


def test_invalid_settings_are_refused_and_kept(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {,}')
    proc = run_cli(["integrate", "claude", "-C", str(project)])
    assert proc.returncode == 1 and b"not valid JSON" in proc.stderr
    assert path.read_text() == '{"hooks": {,}'
    path.write_text('{"hooks": []}\n')
    proc = run_cli(["integrate", "claude", "-C", str(project)])
    assert proc.returncode == 1 and path.read_text() == '{"hooks": []}\n'
