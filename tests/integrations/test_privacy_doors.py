"""Issue 11 at every door: secrets and ``<private>`` spans pushed through the CLI (direct and
through the daemon), the daemon's socket, the MCP tools and the Claude Code hooks never reach
any file under the project's ``.maestro/`` or under ``MAESTRO_HOME`` (journal, logs, hook log);
``forget`` works through each door and leaves no copy of the text."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore

from .support import run_cli

AWS = "AKIAZ7QX2M4N5P6R8T3V"
GHP = "ghp_Fa4KeT0kenF0rTestsOnly1234567890abcd"
PASSWORD = "hunter2"
PRIVATE = "Zanzibar-salary-figures"  # a private span's word: in no file, ever
SECRET_FACT = f"Remember that the staging database password is {PASSWORD} and the key is {AWS}"
VALUES = (AWS, GHP, PASSWORD, PRIVATE)


def leaks(*roots: Path) -> dict[str, list[str]]:
    """Which forbidden values appear in which files under ``roots`` (regular files only)."""
    found: dict[str, list[str]] = {}
    for root in roots:
        for dirpath, _dirs, names in os.walk(root):
            for name in names:
                path = Path(dirpath) / name
                if not path.is_file() or path.is_symlink():
                    continue  # the socket, the lock's peers
                data = path.read_bytes()
                for value in VALUES:
                    if value.encode() in data:
                        found.setdefault(value, []).append(str(path))
    return found


def all_file_names(*roots: Path) -> list[str]:
    return sorted(str(p) for root in roots for p in root.rglob("*") if p.is_file())


def cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return run_cli(list(args), cwd=cwd, input=stdin)


def doc(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(proc.stdout)
    return parsed


def push_through_cli(project: Path) -> str:
    """The CLI door; returns the id of an entry to forget afterwards."""
    rejected = cli("save-semantic", SECRET_FACT, "--json", cwd=project)
    assert rejected.returncode == 1, rejected
    error = doc(rejected)["error"]
    assert error["code"] == "rejected" and "password" in error["message"]
    assert PASSWORD not in error["message"] and AWS not in error["message"]

    saved = cli(
        "save-episodic",
        f"Rotated the CI token {GHP} after the leak <private>{PRIVATE}</private>",
        "--json",
        cwd=project,
    )
    assert saved.returncode == 0, saved.stderr
    text = doc(saved)["result"]["entry"]["text"]
    assert "[redacted: github token]" in text and "Rotated the CI token" in text

    private = cli("save-semantic", f"<private>{PRIVATE}</private>", "--json", cwd=project)
    assert private.returncode == 1 and doc(private)["error"]["code"] == "rejected"

    detect = cli("detect", "--user", SECRET_FACT, "--json", cwd=project)
    assert detect.returncode == 0
    assert [s["action"] for s in doc(detect)["result"]["signals"]] == ["rejected"]

    keep = cli("save-semantic", "Always use the bastion nebula-7 for ssh", "--json", cwd=project)
    entry_id: str = doc(keep)["result"]["entry"]["id"]
    return entry_id


def check_forget_by_cli(project: Path, entry_id: str) -> None:
    unknown = cli("forget", "s-00000000", "--json", cwd=project)
    assert unknown.returncode == 1 and doc(unknown)["error"]["code"] == "not_found"
    dry = cli("forget", "--match", "NEBULA", "--dry-run", "--json", cwd=project)
    assert [e["id"] for e in doc(dry)["result"]["forgotten"]] == [entry_id]
    assert "nebula-7" in (project / ".maestro/memory/semantic.md").read_text()
    gone = cli("forget", entry_id, "--json", cwd=project)
    assert gone.returncode == 0, gone.stderr
    memory = "".join(p.read_text() for p in (project / ".maestro/memory").glob("*.md"))
    assert "nebula" not in memory
    assert f"Forgotten: {entry_id} (forgotten by request)" in memory


def test_cli_direct_mode(maestro_home: Path, project: Path) -> None:
    entry_id = push_through_cli(project)
    check_forget_by_cli(project, entry_id)
    assert leaks(project / ".maestro", maestro_home) == {}


def test_cli_and_socket_through_the_daemon(daemon: Any, project: Path) -> None:
    daemon.register(project)
    entry_id = push_through_cli(project)
    # The socket itself: a rejected save is an error reply with the code, not the value.
    reply = daemon.request("save_semantic", project, fact="deploy with it", category=AWS)
    assert reply["ok"] is False and reply["error"]["code"] == "bad_request"
    # An unknown op is logged with its message, which quotes what the client sent: screened.
    assert daemon.request(f"op-{GHP}", project)["error"]["code"] == "unknown_op"
    reply = daemon.request(
        "save_semantic", project, fact=f"deploy with {AWS}", category="project_context"
    )
    assert reply["ok"] is False and reply["error"]["code"] == "rejected"
    assert AWS not in json.dumps(reply)
    reply = daemon.request("save_episodic", project, context=f"pw={PASSWORD}x9", session_id="s1")
    assert reply["ok"] is True and PASSWORD not in json.dumps(reply), reply
    reply = daemon.request("forget", project, entry_ids=["s-00000000"])
    assert reply["ok"] is False and reply["error"]["code"] == "not_found"
    check_forget_by_cli(project, entry_id)
    assert daemon.request("log", project)["ok"]
    assert leaks(project / ".maestro", daemon.home) == {}
    log = daemon.log_text()
    assert "unknown op '[redacted: github token]'" in log, log[-2000:]
    journal = list((daemon.home).rglob("*.jsonl"))
    assert journal, all_file_names(daemon.home)


def test_mcp_tools(maestro_home: Path, project: Path) -> None:
    pytest.importorskip("mcp")
    from .support import in_mcp_session

    (project / ".maestro").mkdir()

    async def body(session: Any) -> None:
        bad = await session.call_tool(
            "remember", {"fact": SECRET_FACT, "category": "project_context"}
        )
        assert bad.is_error is True
        message = "".join(c.text for c in bad.content if c.type == "text")
        assert "secret" in message and AWS not in message and PASSWORD not in message
        note = await session.call_tool(
            "note", {"context": f"used {GHP} <private>{PRIVATE}</private> today"}
        )
        assert note.is_error is False
        entry_id = note.structured_content["entry"]["id"]
        gone = await session.call_tool("forget", {"entry_ids": [entry_id]})
        assert gone.is_error is False
        assert [e["id"] for e in gone.structured_content["forgotten"]] == [entry_id]
        missing = await session.call_tool("forget", {"entry_ids": [entry_id]})
        assert missing.is_error is True

    in_mcp_session(project, body)
    assert MemoryStore(project).episodic_entries() == []
    assert leaks(project / ".maestro", maestro_home) == {}


def hook(event: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[bytes]:
    return run_cli(["hook", "claude", event], input=json.dumps(payload).encode())


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_claude_code_hooks(
    request: pytest.FixtureRequest, maestro_home: Path, project: Path, with_daemon: bool
) -> None:
    (project / ".maestro").mkdir()
    if with_daemon:
        request.getfixturevalue("daemon").register(project)
    base = {"session_id": "sess-1", "cwd": str(project), "hook_event_name": "UserPromptSubmit"}
    for prompt in (
        SECRET_FACT,
        f"From now on, use pnpm instead of npm. <private>{PRIVATE} {AWS}</private>",
        f"<private>Always mention {PRIVATE}",  # unclosed: private to the end
    ):
        proc = hook("user-prompt", dict(base, prompt=prompt))
        assert proc.returncode == 0, proc.stderr
        for value in VALUES:
            assert value.encode() not in proc.stdout
    texts = [e.text for e in MemoryStore(project).semantic_entries()]
    hook_log = maestro_home.rglob("hooks.log")
    gave_up = any("gave up after" in p.read_text() for p in hook_log)
    # A hook that ran to its end kept the public part of the prompt. (Under heavy load the
    # hook's own deadline may end it first: fail-open by design, and then nothing is saved.)
    assert gave_up or any("pnpm" in t for t in texts), texts
    assert not any(PRIVATE in t for t in texts)
    hook("session-end", dict(base, hook_event_name="SessionEnd"))
    assert leaks(project / ".maestro", maestro_home) == {}


def test_the_hook_log_is_screened(maestro_home: Path) -> None:
    """No hook path quotes its input in the log today; the log line is screened regardless,
    so a future message that does cannot leak (tested in-process: the function itself)."""
    from maestro_memory.client.integrations import hooks

    hooks.log_reason("user-prompt", f"daemon said: unknown category '{AWS}'")
    text = hooks.log_path().read_text()
    assert AWS not in text and "[redacted: aws key]" in text


def test_forget_match_needs_yes_for_several_and_doctor_finds_old_secrets(
    maestro_home: Path, project: Path
) -> None:
    store = MemoryStore(project)
    a = store.save_semantic("Use the bastion nebula-7 for ssh", "project_context", 0.9)
    b = store.save_semantic("Always tunnel through nebula before deploys", "quality_rule", 0.9)
    assert a.entry is not None and b.entry is not None
    refused = cli("forget", "--match", "nebula", "--json", cwd=project)
    assert refused.returncode == 1 and doc(refused)["error"]["code"] == "rejected"
    assert len(store.matching("nebula")) == 2  # nothing forgotten
    done = cli("forget", "--match", "nebula", "--yes", "--json", cwd=project)
    assert sorted(e["id"] for e in doc(done)["result"]["forgotten"]) == sorted(
        [a.entry.id, b.entry.id]
    )
    assert store.matching("nebula") == []

    # A secret typed into the file before the screen existed: doctor finds it, by id and kind.
    semantic = store.memory_dir / "semantic.md"
    semantic.write_text(
        semantic.read_text().replace(
            "## Project Context\n", f"## Project Context\n- the deploy key is {AWS}\n"
        )
    )
    report = cli("doctor", "--json", cwd=project, stdin=None)
    checks = [c for c in doc(report)["result"]["checks"] if c["name"] == "secrets in memory"]
    assert len(checks) == 1 and checks[0]["status"] == "fail", checks
    (hand_id,) = [e.id for e in store.semantic_entries() if "deploy key" in e.text]
    assert hand_id in checks[0]["detail"] and "aws key" in checks[0]["detail"]
    assert AWS not in json.dumps(checks)
    assert f"maestroctl forget {hand_id}" in checks[0]["fix"]
    assert "git filter-repo" in checks[0]["fix"]
    assert cli("forget", hand_id, cwd=project).returncode == 0
    assert AWS not in semantic.read_text()


# Credentials stated in words (issue 33): a few shapes of tests/data/secrets_prose.jsonl.
PROSE = (
    ("Always ssh root@10.0.4.12 with password hunter2x! for the deploys", "hunter2x"),
    ("From now on use Tr0ub4dor&3 as the admin password", "Tr0ub4dor&3"),
    ("Always log into the VPN as deploy / S3cr3t!x", "S3cr3t!x"),
    ("Always run mysqldump --password=Wint3rIsC0ming before a migration", "Wint3rIsC0ming"),
    ("Remember that the PIN is 4821", "4821"),
)


@pytest.mark.parametrize("with_daemon", [False, True], ids=["direct", "daemon"])
def test_prose_secrets_at_the_cli_doors(
    request: pytest.FixtureRequest, maestro_home: Path, project: Path, with_daemon: bool
) -> None:
    (project / ".maestro").mkdir()
    if with_daemon:
        request.getfixturevalue("daemon").register(project)
    for sentence, value in PROSE:
        refused = cli("save-semantic", sentence, "--json", cwd=project)
        assert refused.returncode == 1, (sentence, refused.stdout)
        error = doc(refused)["error"]
        assert error["code"] == "rejected" and "secret" in error["message"], error
        assert value not in json.dumps(error)
        detect = cli("detect", "--user", sentence, "--json", cwd=project)
        assert detect.returncode == 0, detect.stderr
        assert value not in detect.stdout.decode()
        actions = [s["action"] for s in doc(detect)["result"]["signals"]]
        assert "added" not in actions and "replaced" not in actions, (sentence, actions)
    assert MemoryStore(project).semantic_entries() == []
    for _sentence, value in PROSE:
        for path in (project / ".maestro").rglob("*"):
            assert not path.is_file() or value.encode() not in path.read_bytes(), (value, path)


def test_prose_secrets_at_the_mcp_door(maestro_home: Path, project: Path) -> None:
    pytest.importorskip("mcp")
    from .support import in_mcp_session

    (project / ".maestro").mkdir()

    async def body(session: Any) -> None:
        for sentence, value in PROSE:
            bad = await session.call_tool(
                "remember", {"fact": sentence, "category": "project_context"}
            )
            assert bad.is_error is True, sentence
            message = "".join(c.text for c in bad.content if c.type == "text")
            assert "secret" in message and value not in message

    in_mcp_session(project, body)
    assert MemoryStore(project).semantic_entries() == []
