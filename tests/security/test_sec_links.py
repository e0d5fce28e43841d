"""A repository cannot make the memory read, serve, copy or write any file through a link.

A committed ``.maestro/memory/semantic.md`` that is a symbolic link to a file of the user's
(here a stand-in for ``~/.aws/credentials`` holding entry-shaped lines), or a symlinked
``.maestro/memory`` folder, is refused by every door: ``maestroctl context``/``entries``/
``search``/``save-semantic`` in direct mode and through maestrod, the session-start hook, the
MCP resources; nothing of the target is printed, and the target and the link stay as they were.
``doctor`` and ``status`` say so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory
from sec_kit import cli, cli_json, env_for, read_resource, session_start

from maestro_memory.core import MemoryStore
from maestro_memory.core.model import LinkRefused

SECRET = "zzsecretvalue"
TARGET_TEXT = (
    f"# Semantic Memory\n\n## Quality Rules\n- [2026-01-01] [1.00] aws_secret_access_key {SECRET}\n"
)


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    return home


@pytest.fixture
def target(user_home: Path) -> Path:
    path = user_home / "credentials"
    path.write_text(TARGET_TEXT)
    return path


def linked_file(project: Path, target: Path) -> Path:
    """A project whose semantic.md is a link to ``target`` (as a clone of a hostile repo)."""
    MemoryStore(project).save_semantic("Use tabs", "user_preference", 1.0)
    semantic = project / ".maestro" / "memory" / "semantic.md"
    semantic.unlink()
    semantic.symlink_to(target)
    return semantic


def linked_folder(project: Path, outside: Path) -> Path:
    outside.mkdir()
    (outside / "semantic.md").write_text(TARGET_TEXT)
    (project / ".maestro").mkdir()
    link = project / ".maestro" / "memory"
    link.symlink_to(outside)
    return link


READS = [("context",), ("entries",), ("search", "aws")]


def assert_refused(code: int, doc: dict[str, object], link: Path) -> None:
    assert code == 1, doc
    error = doc["error"]
    assert isinstance(error, dict)
    assert error["code"] == "link_refused", doc
    assert str(link) in str(error["message"])
    assert SECRET not in str(doc)


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_a_linked_file_is_refused_at_every_cli_door(
    mode: str,
    daemon_factory: DaemonFactory,
    maestro_home: Path,
    user_home: Path,
    project: Path,
    target: Path,
) -> None:
    link = linked_file(project, target)
    env = env_for(maestro_home, user_home)
    if mode == "daemon":
        daemon = daemon_factory()
        daemon.register(project)
    for args in READS:
        assert_refused(*cli_json(env, project, *args), link)
    code, doc = cli_json(
        env, project, "save-semantic", "Use spaces", "--category", "user_preference"
    )
    assert_refused(code, doc, link)
    assert link.is_symlink() and target.read_text() == TARGET_TEXT  # nothing copied or written
    assert SECRET not in session_start(env, project)


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_a_linked_memory_folder_gets_no_write(
    mode: str,
    daemon_factory: DaemonFactory,
    maestro_home: Path,
    user_home: Path,
    project: Path,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    link = linked_folder(project, outside)
    env = env_for(maestro_home, user_home)
    if mode == "daemon":
        daemon = daemon_factory()
        daemon.register(project)
    code, doc = cli_json(
        env, project, "save-semantic", "Use spaces", "--category", "user_preference"
    )
    assert_refused(code, doc, link)
    assert_refused(*cli_json(env, project, "context"), link)
    assert sorted(os.listdir(outside)) == ["semantic.md"]  # no .lock, .gitignore, .state.json
    assert (outside / "semantic.md").read_text() == TARGET_TEXT
    assert SECRET not in session_start(env, project)


def test_the_mcp_resources_and_tools_serve_nothing_through_a_link(
    maestro_home: Path, user_home: Path, project: Path, target: Path
) -> None:
    link = linked_file(project, target)
    env = env_for(maestro_home, user_home)
    reply = read_resource(env, project, "semantic")
    assert "error" in reply and SECRET not in str(reply), reply
    assert str(link) in reply["error"]["message"]
    assert "symbolic link" in reply["error"]["message"]


def test_doctor_and_status_say_so(
    daemon_factory: DaemonFactory,
    maestro_home: Path,
    user_home: Path,
    project: Path,
    target: Path,
) -> None:
    link = linked_file(project, target)
    env = env_for(maestro_home, user_home)
    done = cli(env, project, "doctor")
    assert done.returncode == 1
    assert f"{link}: it is a symbolic link" in done.stdout
    assert SECRET not in done.stdout
    daemon = daemon_factory()
    daemon.register(project)
    status = cli(env, project, "status")
    assert "REFUSED (link_refused)" in status.stdout, status.stdout
    assert SECRET not in status.stdout


def test_a_link_swapped_in_after_a_good_read_is_not_served_by_the_daemon(
    daemon_factory: DaemonFactory,
    maestro_home: Path,
    user_home: Path,
    project: Path,
    target: Path,
) -> None:
    MemoryStore(project).save_semantic("Use tabs", "user_preference", 1.0)
    daemon = daemon_factory()
    daemon.register(project)
    env = env_for(maestro_home, user_home)
    code, doc = cli_json(env, project, "context")
    assert code == 0 and "Use tabs" in doc["result"]["context"]
    linked_file(project, target)
    from maestrod_testkit import wait_for

    wait_for(
        lambda: cli_json(env, project, "context")[1].get("error", {}).get("code") == "link_refused",
        message="the daemon to notice the link and refuse it",
    )


def test_the_lock_and_the_state_file_are_never_followed(project: Path, tmp_path: Path) -> None:
    store = MemoryStore(project)
    store.save_semantic("Use tabs", "user_preference", 1.0)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    state = store.memory_dir / ".state.json"
    state.unlink(missing_ok=True)
    state.symlink_to(elsewhere)
    with pytest.raises(LinkRefused, match=r"\.state\.json: it is a symbolic link"):
        store.save_semantic("Use spaces", "user_preference", 1.0)
    with pytest.raises(LinkRefused):
        store.read()
    assert elsewhere.read_text() == "{}"
