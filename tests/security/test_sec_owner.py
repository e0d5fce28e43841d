"""A memory folder another user owns, or others can write, is not trusted (git's
``safe.directory``): not served, not written, until ``maestroctl trust PATH`` adds it to
``[trust] directories`` of config.toml on purpose.

The tests run as root; a folder chowned to ``nobody`` (65534) is "another user's" for root as
for anyone. The rule itself (``fsio.folder_problem``) takes the uid as an argument.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory
from sec_kit import cli, cli_json, env_for, read_resource, session_start

from maestro_memory.core import MemoryStore, fsio

NOBODY = 65534
RULE = "Deploy only on Tuesdays zzforeign"


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    return home


@pytest.fixture
def foreign(project: Path) -> Path:
    """A project whose .maestro/memory belongs to another user (as found from a subfolder)."""
    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    memory = project / ".maestro" / "memory"
    for path in (project / ".maestro", memory, *memory.iterdir()):
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    (project / "sub").mkdir()
    return project


def files(project: Path) -> dict[str, bytes]:
    memory = project / ".maestro" / "memory"
    return {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_another_users_memory_is_not_served_or_written_until_trusted(
    mode: str,
    daemon_factory: DaemonFactory,
    maestro_home: Path,
    user_home: Path,
    foreign: Path,
) -> None:
    env = env_for(maestro_home, user_home)
    if mode == "daemon":
        daemon = daemon_factory()
        daemon.register(foreign)
    before = files(foreign)
    code, doc = cli_json(env, foreign / "sub", "context")
    assert code == 1 and doc["error"]["code"] == "untrusted_folder", doc
    message = doc["error"]["message"]
    assert f"owned by uid {NOBODY}" in message
    assert f"maestroctl trust {foreign}" in message  # how to trust it on purpose
    assert RULE not in str(doc)
    code, doc = cli_json(env, foreign, "save-semantic", "Use tabs", "--category", "user_preference")
    assert code == 1 and doc["error"]["code"] == "untrusted_folder"
    assert RULE not in session_start(env, foreign, cwd=foreign / "sub")
    assert files(foreign) == before  # nothing written
    # Trusted on purpose: served and written.
    trusted = cli(env, foreign, "trust", str(foreign))
    assert trusted.returncode == 0, trusted.stderr
    assert "[trust]" in (maestro_home / "config" / "config.toml").read_text()
    if mode == "daemon":
        daemon.stop()
        daemon = daemon_factory()  # reads [trust] at its start
        daemon.register(foreign)
    code, doc = cli_json(env, foreign / "sub", "context")
    assert code == 0 and RULE in doc["result"]["context"], doc
    again = cli(env, foreign, "trust", str(foreign))
    assert "trusted already" in again.stdout


def test_a_folder_writable_by_others_is_not_trusted(
    maestro_home: Path, user_home: Path, project: Path
) -> None:
    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    os.chmod(project / ".maestro", 0o777)
    env = env_for(maestro_home, user_home)
    code, doc = cli_json(env, project, "entries")
    assert code == 1 and doc["error"]["code"] == "untrusted_folder"
    assert "writable by group or others (mode 0777)" in doc["error"]["message"]
    reply = read_resource(env, project, "semantic")
    assert "error" in reply and RULE not in str(reply)


def test_the_rule_takes_the_uid() -> None:
    info = os.stat_result((stat.S_IFDIR | 0o755, 0, 0, 0, 1000, 1000, 0, 0, 0, 0))
    assert fsio.folder_problem(Path("/p"), info, 1000, own_group=False) is None
    assert "owned by uid 1000" in str(fsio.folder_problem(Path("/p"), info, 1001, False))
    shared = os.stat_result((stat.S_IFDIR | 0o775, 0, 0, 0, 1000, 100, 0, 0, 0, 0))
    assert "writable by group" in str(fsio.folder_problem(Path("/p"), shared, 1000, False))
    # umask 002 with a private group (named after the user, nobody else in it): fine
    assert fsio.folder_problem(Path("/p"), shared, 1000, own_group=True) is None
