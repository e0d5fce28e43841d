"""The conventions people and scripts expect of ``maestroctl``: ``--version``; ``--json`` on every
command (one JSON document, errors included); ``entries`` whole when piped, wrapped in a
terminal, ``--wide``; ``search`` through the ``search`` op, the same in daemon and direct mode."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import CLI, Cli

from maestro_memory.client import Client
from maestro_memory.client.cli import output as _output
from maestro_memory.client.cli.commands import COMMANDS
from maestro_memory.common.ops import DirectBackend, dispatch_memory_op
from maestro_memory.core import MemoryStore

LONG = (
    "Use PostgreSQL for every new service we build, because the team knows it well and the "
    "tooling around backups, replication and migrations is mature"
)


def test_version(cli: Cli) -> None:
    assert cli("--version").stdout == f"maestroctl {version('maestro-agent-memory')}\n"
    doc = cli("--version", "--json").doc
    assert doc["ok"] is True and doc["result"] == {"version": version("maestro-agent-memory")}
    assert cli("-C", "/nowhere", "--version").stdout.startswith("maestroctl ")


def failing_inputs(project: Path, tmp: Path) -> dict[str, list[str]]:
    """One command line per registered command that fails (a bad value, a refused request,
    a missing daemon or file), each with --json."""
    not_a_dir = tmp / "a-file"
    not_a_dir.write_text("x")
    bad_settings = tmp / "bad-settings"
    (bad_settings / ".claude").mkdir(parents=True)
    (bad_settings / ".claude" / "settings.json").write_text("{,}")
    missing = str(tmp / "missing.md")
    return {
        "start": ["start", "--timeout", "0"],
        "stop": ["stop", "--timeout", "-1"],
        "restart": ["restart", "--timeout", "nan-ish"],
        "status": ["status", "--require-daemon", "--timeout", "0"],
        "paths": ["paths", "--timeout", "0"],
        "doctor": ["doctor", "--timeout", "0"],
        "register": ["register", "-C", str(not_a_dir)],
        "unregister": ["unregister", "--require-daemon"],
        "projects": ["projects", "--require-daemon"],
        "init": ["init", "--require-daemon"],
        "context": ["context", "--max-tokens", "-1"],
        "save-semantic": ["save-semantic", "a fact", "--category", "gossip"],
        "save-episodic": ["save-episodic", "x", "--confidence", "1.5"],
        "detect": ["detect", "--user", "We prefer tabs", "--require-daemon"],
        "reinforce": ["reinforce", "s-00000000"],
        "maintain": ["maintain", "--all"],
        "review": ["review", "--apply", "s-00000000", "explode"],
        "entries": ["entries", "--sector", "nowhere"],
        "search": ["search", "tests", "--limit", "-1"],
        "forget": ["forget", "s-doesnotexist"],
        "import": ["import", "cursor"],
        "log": ["log", "--limit", "0"],
        "service": ["service", "explode"],
        "hook": ["hook", "claude", "explode"],
        "integrate": ["integrate", "claude", "-C", str(bad_settings)],
        "mcp": ["mcp", "--no-such-option"],
        "ui": ["ui", "--no-such-option"],
        "merge-driver": ["merge-driver", missing, missing, missing],
        "git-setup": ["git-setup", "-C", str(not_a_dir)],
        "trust": ["trust", missing],
    }


def test_every_command_answers_json_with_one_document(
    cli: Cli, project: Path, tmp_path: Path
) -> None:
    cases = failing_inputs(project, tmp_path)
    assert set(cases) == set(COMMANDS), "a new command needs a failing input here"
    for name, argv in cases.items():
        run = cli(*argv, "--json", check=None)
        assert run.returncode != 0, (name, run.stdout, run.stderr)
        doc = json.loads(run.stdout)  # exactly one document: json.loads refuses a second
        assert isinstance(doc, dict) and doc["ok"] is False, (name, doc)
        assert doc["error"]["exit_code"] == run.returncode, (name, doc)
        assert doc["error"]["message"] and doc["error"]["code"], (name, doc)


def test_entries_piped_keeps_every_text_whole(cli: Cli, project: Path) -> None:
    MemoryStore(project).save_semantic(LONG, "architecture_decision", 0.9)
    out = cli("entries", env={"COLUMNS": "80"}).stdout
    assert LONG in out and "…" not in out
    assert "0.90 " in out and "████▌" in out  # the number, then its bar


def test_the_table_wraps_in_a_terminal_and_cuts_nothing_when_wide() -> None:
    rows = [["s-1", 0.9, LONG]]
    wrapped = _output.table(["ID", "CONF", "TEXT"], rows, width=60, overflow="wrap")
    lines = wrapped.splitlines()
    assert len(lines) > 3 and all(len(line) <= 60 for line in lines)
    indent = len("s-1  0.90  ")
    assert all(line.startswith(" " * indent) for line in lines[2:])
    words = " ".join(line[indent:].strip() for line in lines[1:])
    assert words == LONG
    whole = _output.table(["ID", "CONF", "TEXT"], rows, width=60, overflow="none")
    assert whole.splitlines()[1].endswith(LONG)


def test_entries_in_a_terminal_wraps_and_wide_does_not(cli: Cli, project: Path) -> None:
    """A real pseudo-terminal on stdout (``script``), COLUMNS=80."""
    script = shutil.which("script")
    if script is None:
        pytest.skip("util-linux 'script' is not installed (it gives the CLI a terminal)")
    MemoryStore(project).save_semantic(LONG, "architecture_decision", 0.9)

    def in_terminal(*args: str) -> str:
        command = " ".join([*CLI, "-C", str(project), *args])
        done = subprocess.run(
            [script, "-qec", command, "/dev/null"],
            env={**cli.env, "COLUMNS": "80"},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout.replace("\r\n", "\n")

    wrapped = in_terminal("entries")
    assert LONG not in wrapped  # wrapped over several lines ...
    assert len(wrapped.splitlines()) > 3
    assert " ".join(wrapped.split()).endswith(" ".join(LONG.split()))  # ... and all there
    assert LONG in in_terminal("entries", "--wide")


def seed(project: Path) -> None:
    store = MemoryStore(project)
    for text in (
        "Run the tests before committing",
        "Integration tests need Postgres; unit tests do not",
        "Deploy with the blue-green script",
        "Tests use pytest fixtures",
    ):
        store.save_semantic(text, "project_context", 0.6)


def ranked(result: dict[str, Any]) -> list[tuple[str, float]]:
    return [(r["id"], r["score"]) for r in result["results"]]


def test_search_is_one_op_daemon_and_direct_agree(
    cli: Cli, project: Path, daemon: Any, maestro_home: Path
) -> None:
    seed(project)
    direct = dispatch_memory_op(DirectBackend(), "search", project.resolve(), {"query": "tests"})
    assert len(direct["results"]) == 3  # the deploy rule does not mention tests
    assert direct["results"][0]["text"] == "Integration tests need Postgres; unit tests do not"
    daemon.register(project)
    with Client(project) as client:
        via_daemon = client.search("tests")
        assert client.last_via == "daemon"
    assert ranked(via_daemon) == ranked(direct)
    cli_result = cli.result("search", "tests")
    assert ranked(cli_result) == ranked(direct)
    assert cli.result("search", "tests", "--limit", "0")["results"] == []
    everywhere = cli.result("search", "tests", "--all")
    assert [r["id"] for r in everywhere["results"]] == [r["id"] for r in direct["results"]]
    assert {r["project"] for r in everywhere["results"]} == {str(project.resolve())}
    text = cli("search", "deploy").stdout
    assert "blue-green" in text and text.splitlines()[0].startswith("#")


def test_a_non_ascii_word_is_relevant_through_both_doors(
    cli: Cli, project: Path, daemon: Any
) -> None:
    """One tokeniser (core/text.py) for search and the context block's relevance: a word
    outside ASCII matches in both, with the daemon up and with none (direct mode)."""
    store = MemoryStore(project)

    def saved(text: str) -> str:
        entry = store.save_semantic(text, "project_context", 0.6).entry
        assert entry is not None
        return entry.id

    umlaut = saved("Verwende Umlaute für Ü-Tests")
    saved("Deploy with the blue-green script")
    russian = saved("Миграции базы данных запускать вручную")

    def play(expect_via: str) -> list[Any]:
        found = [
            [r["id"] for r in cli.json("search", q)["result"]["results"]]
            for q in ("ü-tests", "миграции")
        ]
        block = cli.json("context", "--task", "Миграции на стейджинге")  # no ASCII word
        assert block["via"] == expect_via
        return [found, block["result"]["included"]]

    direct = play("direct")
    assert direct == [[[umlaut], [russian]], [russian]]  # the 0.6 band: only when relevant
    daemon.register(project)
    assert play("daemon") == direct


def test_search_all_needs_the_daemon(cli: Cli) -> None:
    doc = cli.json("search", "x", "--all", check=3)
    assert doc["ok"] is False and "needs maestrod" in doc["error"]["message"]


def test_maestroctl_script_reports_the_package_version() -> None:
    script = Path(sys.executable).parent / "maestroctl"
    if not script.exists():
        pytest.skip("no maestroctl script beside this Python")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"maestroctl {version('maestro-agent-memory')}"
    assert os.path.basename(script) == "maestroctl"


def test_search_refuses_a_huge_query(project: Path) -> None:
    from maestro_memory.common.protocol import OpError

    seed(project)
    with pytest.raises(OpError) as refused:
        dispatch_memory_op(DirectBackend(), "search", project.resolve(), {"query": "tests " * 1000})
    assert refused.value.code == "bad_request" and "at most 4000" in refused.value.message
