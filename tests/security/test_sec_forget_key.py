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


def test_forget_deletes_a_block_kept_under_an_earlier_name(
    maestro_home: Path, tmp_path: Path, project: Path
) -> None:
    """Blocks kept by an earlier release (named by FNV-1a of the path) that name the project go
    too; another project's block stays."""
    import json

    user_home = tmp_path / "user"
    user_home.mkdir()
    store = MemoryStore(project)
    entry = store.save_semantic(RULE, "quality_rule", 1.0).entry
    env = env_for(maestro_home, user_home)
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    blocks = paths.state_dir / daemon_paths.HOOK_BLOCKS_DIR
    blocks.mkdir(parents=True, exist_ok=True)
    earlier = blocks / "cbf29ce484222325.json"
    earlier.write_text(json.dumps({"project": str(project), "tokens": 9, "context": RULE}))
    other = blocks / "0123456789abcdef.json"
    other_block = {"project": str(tmp_path / "elsewhere"), "tokens": 3, "context": "x"}
    other.write_text(json.dumps(other_block))
    code, doc = cli_json(env, project, "forget", entry.id)
    assert code == 0, doc
    assert not earlier.exists()
    assert json.loads(other.read_text()) == other_block


def test_the_kept_block_is_private_and_never_written_through_a_link(
    maestro_home: Path, tmp_path: Path, project: Path
) -> None:
    """The session-start hook keeps its block 0600 (common/atomic.py: fsynced, renamed); a
    symbolic link planted at the block's path is refused and its target left as it was."""
    import stat

    user_home = tmp_path / "user"
    user_home.mkdir()
    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    env = env_for(maestro_home, user_home)
    paths = daemon_paths.resolve({"MAESTRO_HOME": str(maestro_home)})
    kept = paths.hook_block_path(project)
    assert RULE in session_start(env, project)
    assert RULE in kept.read_text()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    kept.unlink()
    kept.symlink_to(victim)
    assert RULE in session_start(env, project)  # the session still gets its memory
    assert victim.read_text() == "keep me\n"
    assert kept.is_symlink()
    assert [p.name for p in kept.parent.iterdir() if ".tmp-" in p.name] == []
