"""Issue 33 point 7: one cap on a memory's text (``common/limits.FACT_MAX_CHARS``) and on a
request frame, checked at every door before anything is sent: the Python API and the CLI,
with the daemon up and in direct mode, the core for any other caller, the agent tools' memory
import (an oversized memory is reported, not imported). The MCP door and the hooks:
``tests/integrations/test_size_doors.py``; the daemon's answer to a raw frame:
``tests/daemon/test_daemon_size.py``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import Cli

from maestro_memory.client import Client
from maestro_memory.client.errors import RequestError
from maestro_memory.common.limits import FACT_MAX_CHARS, MESSAGE_MAX_BYTES
from maestro_memory.common.ops import DirectBackend, dispatch_memory_op
from maestro_memory.common.protocol import OpError
from maestro_memory.core.toolmem import bullet_notes, claude_note

OVER = "Use pnpm. " * (FACT_MAX_CHARS // 10) + "x"  # FACT_MAX_CHARS + 1 characters
SAVES: list[tuple[str, dict[str, Any], str]] = [
    ("save_semantic", {"fact": OVER, "category": "project_context"}, "fact"),
    ("save_episodic", {"context": OVER, "session_id": "s1"}, "context"),
    ("save_session_note", {"note": OVER, "session_id": "s1"}, "note"),
]


def _served(daemon: Any) -> int:
    return int(daemon.status()["requests"]["served"])


def _memory_files(project: Path) -> list[str]:
    folder = project / ".maestro" / "memory"
    return sorted(p.name for p in folder.glob("*.md")) if folder.exists() else []


def _assert_fact_refused(exc: RequestError | OpError, name: str) -> None:
    assert exc.code == "too_large", exc
    assert f"{name} is {FACT_MAX_CHARS + 1:,} characters" in exc.message
    assert f"at most {FACT_MAX_CHARS:,}" in exc.message


@pytest.mark.parametrize(("op", "args", "name"), SAVES)
def test_the_api_refuses_an_oversized_text_before_sending(
    daemon: Any, project: Path, op: str, args: dict[str, Any], name: str
) -> None:
    daemon.register(project)
    assert len(OVER) == FACT_MAX_CHARS + 1
    served = _served(daemon)
    with Client(project, require_daemon=True) as client:
        started = time.monotonic()
        with pytest.raises(RequestError) as refused:
            client.call(op, args)
        assert time.monotonic() - started < 1.0
    _assert_fact_refused(refused.value, name)
    assert _served(daemon) == served + 1  # only the status call above: nothing was sent
    assert _memory_files(project) == []


@pytest.mark.parametrize(("op", "args", "name"), SAVES)
def test_direct_mode_and_the_core_refuse_the_same(
    project: Path, op: str, args: dict[str, Any], name: str
) -> None:
    with Client(project, direct=True) as client, pytest.raises(RequestError) as api:
        client.call(op, args)
    _assert_fact_refused(api.value, name)
    # A caller of the op handlers that skips the client (the daemon's writer runs these).
    with pytest.raises(OpError) as core:
        dispatch_memory_op(DirectBackend(), op, project.resolve(), args)
    _assert_fact_refused(core.value, name)
    assert core.value.message == api.value.message
    assert _memory_files(project) == []


def test_a_text_at_the_cap_is_saved(daemon: Any, project: Path) -> None:
    daemon.register(project)
    fact = OVER[:FACT_MAX_CHARS]
    with Client(project, require_daemon=True) as client:
        saved = client.save_semantic(fact, "project_context")
    assert saved["action"] == "added" and len(saved["entry"]["text"]) <= FACT_MAX_CHARS


@pytest.mark.parametrize("mode", ["daemon", "direct"])
def test_a_request_over_the_frame_limit_is_refused_before_sending(
    daemon: Any, project: Path, mode: str
) -> None:
    # Not a memory's text but a prompt to read (detect_signals): the frame limit holds it.
    daemon.register(project)
    served = _served(daemon)
    prompt = "From now on always use pnpm. " + "y" * MESSAGE_MAX_BYTES
    with Client(project, direct=mode == "direct") as client, pytest.raises(RequestError) as refused:
        client.detect_signals(prompt)
    assert refused.value.code == "too_large"
    assert f"limit of {MESSAGE_MAX_BYTES:,} bytes" in refused.value.message
    assert _served(daemon) == served + 1
    assert _memory_files(project) == []


@pytest.mark.parametrize("mode", ["daemon", "direct"])
@pytest.mark.parametrize("command", ["save-semantic", "save-episodic"])
def test_the_cli_names_the_limit_and_the_size(
    request: pytest.FixtureRequest, cli: Cli, project: Path, mode: str, command: str
) -> None:
    if mode == "daemon":
        request.getfixturevalue("daemon").register(project)
    flag = ["--require-daemon"] if mode == "daemon" else []  # no daemon: direct mode
    run = cli(*flag, command, OVER, check=1)
    assert f"is {FACT_MAX_CHARS + 1:,} characters" in run.stderr
    assert f"at most {FACT_MAX_CHARS:,}" in run.stderr
    doc = cli.json(*flag, command, OVER, check=1)
    assert doc["ok"] is False and doc["error"]["code"] == "too_large"
    assert _memory_files(project) == []


def test_an_oversized_tool_memory_is_reported_not_imported(
    cli: Cli, project: Path, user_home: Path
) -> None:
    from maestro_memory.core.toolmem import claude_project_key

    cli("init")
    folder = user_home / ".claude" / "projects" / claude_project_key(str(project)) / "memory"
    folder.mkdir(parents=True)
    (folder / "project_huge.md").write_text(
        f"---\nname: huge\ndescription: d\nmetadata:\n  type: project\n---\n\n{OVER}\n"
    )
    (folder / "project_small.md").write_text(
        "---\nname: small\ndescription: d\nmetadata:\n  type: project\n---\n\nCI runs nightly.\n"
    )
    result = cli.result("import")
    assert [i["src"] for i in result["imported"]] == ["claude:project_small.md"]
    [blocked] = result["blocked"]
    assert blocked["src"] == "claude:project_huge.md"
    assert f"{FACT_MAX_CHARS + 1:,} characters" in blocked["reason"]
    assert "not imported" in blocked["reason"]
    text = cli("import").stdout + cli("entries").stdout
    assert "Use pnpm. Use pnpm." not in (project / ".maestro/memory/semantic.md").read_text()
    assert "CI runs nightly" in text


def test_the_import_rule_blocks_an_oversized_bullet_and_keeps_a_long_one() -> None:
    notes = bullet_notes("gemini", "MEMORY.md", f"- {OVER}\n- {'z' * 1000}\n", "1:1")
    assert "not imported" in notes[0].blocked and not notes[1].blocked
    assert claude_note("k.md", f"---\nname: k\n---\n\n{OVER}\n", "1:1").blocked
