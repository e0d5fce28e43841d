"""Issue 33 point 7: a memory file over ``MEMORY_FILE_MAX_BYTES`` (a committed 5 MB
``semantic.md``, say) is refused at every door, with the daemon up and in direct mode: nothing
read, served or written, and the message names the file, its size and the limit. A save that
would grow a file past the limit is refused before anything is renamed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory
from sec_kit import cli_json, env_for, session_start

from maestro_memory.client import Client
from maestro_memory.client.errors import RequestError
from maestro_memory.common.limits import MEMORY_FILE_MAX_BYTES, SAVE_MAX_BYTES
from maestro_memory.core import MemoryStore
from maestro_memory.core.model import TooLarge

RULE = "Always run the linters before committing zzcap"


def _entry(i: int) -> str:
    return (
        f"- [2026-11-01] [0.80] Rule number {i} about module m{i} stays <!-- mm:id=s-{i:08x} "
        "o=0.80 u=0 -->\n"
    )


def _entries(n: int) -> str:
    return "".join(_entry(i) for i in range(n))


def _oversized(project: Path) -> Path:
    """A semantic.md of a few MB, as a repository could commit it."""
    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    semantic = project / ".maestro" / "memory" / "semantic.md"
    text = semantic.read_text().replace(
        "## Project Context\n", "## Project Context\n" + _entries(45_000)
    )
    semantic.write_text(text)
    assert semantic.stat().st_size > 4 * MEMORY_FILE_MAX_BYTES
    return semantic


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_an_oversized_memory_file_is_refused_at_every_door(
    mode: str, daemon_factory: DaemonFactory, maestro_home: Path, tmp_path: Path, project: Path
) -> None:
    semantic = _oversized(project)
    before = _digest(semantic)
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = env_for(maestro_home, user_home)
    if mode == "daemon":
        daemon_factory().register(project)
    size = f"{semantic.stat().st_size:,} bytes"
    for args in (
        ("context",),
        ("entries",),
        ("save-semantic", "Use pnpm", "--category", "project_context"),
    ):
        code, doc = cli_json(env, project, *args)
        assert code == 1, (args, doc)
        assert doc["error"]["code"] == "too_large", (args, doc)
        message = doc["error"]["message"]
        assert "semantic.md" in message and size in message, message
        assert f"at most {MEMORY_FILE_MAX_BYTES:,} bytes" in message
    # The session start serves none of it and says why, in one line.
    said = session_start(env, project)
    assert RULE not in said
    assert "too_large" in said or "at most" in said, said
    assert _digest(semantic) == before


def _filled(project: Path) -> Path:
    """semantic.md just past ``SAVE_MAX_BYTES``: full for new memories, with the room kept
    for the bookkeeping still there."""
    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    semantic = project / ".maestro" / "memory" / "semantic.md"
    text = semantic.read_text()
    lines, size, i = [], len(text.encode()), 0
    while size <= SAVE_MAX_BYTES:
        lines.append(_entry(i))
        size, i = size + len(_entry(i)), i + 1
    semantic.write_text(
        text.replace("## Project Context\n", "## Project Context\n" + "".join(lines))
    )
    assert SAVE_MAX_BYTES < semantic.stat().st_size <= SAVE_MAX_BYTES + 200
    return semantic


@pytest.mark.parametrize("mode", ["direct", "daemon"])
def test_a_full_memory_refuses_new_memories_and_is_still_served(
    mode: str, daemon_factory: DaemonFactory, maestro_home: Path, tmp_path: Path, project: Path
) -> None:
    """Past ``SAVE_MAX_BYTES`` a save is refused and writes nothing; the session start still
    serves the memory (its decay and usage counts fit the room kept for them)."""
    semantic = _filled(project)
    before = _digest(semantic)
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = env_for(maestro_home, user_home, MAESTRO_HOOK_DEADLINE="30")
    fact = "Prefer Postgres for every new service we build from now on"
    if mode == "daemon":
        daemon_factory().register(project)
        with Client(project, require_daemon=True) as client, pytest.raises(RequestError) as sent:
            client.call("save_semantic", {"fact": fact, "category": "architecture_decision"})
        assert sent.value.code == "too_large", sent.value
        message = sent.value.message
    else:
        with pytest.raises(TooLarge) as refused:
            MemoryStore(project).save_semantic(fact, "architecture_decision", 0.9)
        message = refused.value.message
    assert "semantic.md is full" in message and "nothing was saved" in message, message
    assert _digest(semantic) == before
    for n in range(3):  # three sessions: each decays or counts, none is locked out
        said = session_start(env, project, session=f"full-{n}")
        assert "[Project Memory]" in said and "could not be loaded" not in said, said
    assert semantic.stat().st_size <= MEMORY_FILE_MAX_BYTES
    assert [p.name for p in semantic.parent.iterdir() if ".tmp-" in p.name] == []


def test_a_commit_over_the_limit_writes_nothing(project: Path) -> None:
    """The last guard (``core/fsio.commit``): a file that would be over the limit is refused
    before a temp file is made, whatever asked for it."""
    from maestro_memory.core import fsio

    MemoryStore(project).save_semantic(RULE, "quality_rule", 1.0)
    folder_path = project / ".maestro" / "memory"
    before = _digest(folder_path / "semantic.md")
    with fsio.open_folder(folder_path) as folder, pytest.raises(TooLarge) as refused:
        fsio.commit(folder, {"semantic.md": b"x" * (MEMORY_FILE_MAX_BYTES + 1)})
    assert "would grow to" in refused.value.message
    assert "nothing was written" in refused.value.message
    assert _digest(folder_path / "semantic.md") == before
    assert [p.name for p in folder_path.iterdir() if ".tmp-" in p.name] == []
