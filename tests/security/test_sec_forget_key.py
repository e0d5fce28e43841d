"""``forget`` leaves no copy: the hooks' kept last block is keyed by the project's canonical
path (``layout.canonical_project``), so a session start reached through a symlinked path keeps
it where ``forget`` (from the real path) deletes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory
from sec_kit import cli_json, env_for, session_start

from maestro_memory.common import paths as daemon_paths
from maestro_memory.core import MemoryStore

RULE = "Never deploy from a laptop zzforgetme"


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_a_block_kept_through_a_symlink_is_forgotten(
    mode: str, daemon_factory: DaemonFactory, maestro_home: Path, tmp_path: Path, project: Path
) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    store = MemoryStore(project)
    entry = store.save_semantic(RULE, "quality_rule", 1.0).entry
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    env = env_for(maestro_home, user_home)
    if mode == "daemon":
        daemon_factory().register(project)
    assert RULE in session_start(env, alias)  # the hook reached the project through the link
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    blocks = paths.state_dir / daemon_paths.HOOK_BLOCKS_DIR
    kept = [p for p in blocks.iterdir() if RULE in p.read_text()]
    assert kept == [paths.hook_block_path(project)]
    assert paths.hook_block_path(alias) == paths.hook_block_path(project)
    code, doc = cli_json(env, project, "forget", entry.id)
    assert code == 0, doc
    assert [p for p in blocks.iterdir() if RULE in p.read_text()] == []
