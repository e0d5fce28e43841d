"""The real ``maestroctl`` against a real daemon, and again with none (direct mode).

The same session is played both ways; with entry ids normalised, every ``--json`` result is
the same, and so are the files' entries afterwards.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from maestroctl_runner import Cli, normalise_ids

SCENARIO: list[tuple[str, ...]] = [
    ("init", "--session", "s1"),
    (
        "save-semantic",
        "Always run the linter before pushing",
        "--category",
        "quality_rule",
        "--confidence",
        "0.95",
    ),
    ("save-semantic", "CI runs on GitHub Actions"),
    (
        "save-semantic",
        "Use pnpm instead of npm",
        "--category",
        "architecture_decision",
        "--confidence",
        "0.9",
    ),
    (
        "save-episodic",
        "Refactored the auth middleware into one module",
        "--session",
        "s1",
        "--confidence",
        "0.9",
    ),
    ("detect", "--user", "I prefer short commit messages", "--assistant", "Noted."),
    ("detect", "--user", "what time is it?"),
    ("context",),
    ("context", "--task", "set up CI", "--max-tokens", "200"),
    ("context", "--query", "GitHub Actions"),
    ("entries",),
    ("entries", "--sector", "semantic"),
    ("init", "--session", "s2"),
    ("init", "--session", "s2"),
    ("maintain", "--dry-run"),
    ("review",),
    ("maintain",),
    ("entries", "--sector", "archive"),
]


def play(cli: Cli, *, expect_via: str) -> list[dict[str, Any]]:
    results = []
    for step in SCENARIO:
        doc = cli.json(*step)
        assert doc["ok"] is True, (step, doc)
        assert doc["command"] == step[0]
        assert doc["via"] == expect_via, (step, doc)
        results.append(doc["result"])
    # An entry found by id: reinforce the episodic one and confirm a semantic one.
    entries = cli.result("entries")["entries"]
    episodic = next(e for e in entries if e["sector"] == "episodic")
    semantic = next(e for e in entries if e["text"] == "CI runs on GitHub Actions")
    results.append(cli.result("reinforce", episodic["id"]))
    results.append(cli.result("reinforce", semantic["id"], "--confirm"))
    results.append(cli.result("entries"))
    return results


def test_daemon_and_direct_mode_give_the_same_results(
    cli: Cli, daemon: Any, project: Path, tmp_path: Path
) -> None:
    daemon.register(project)
    via_daemon = play(cli, expect_via="daemon")

    other = tmp_path / "other"
    other.mkdir()
    empty_home = tmp_path / "nodaemon"
    direct_cli = Cli({**cli.env, "MAESTRO_HOME": str(empty_home)}, other)
    via_files = play(direct_cli, expect_via="direct")

    assert normalise_ids(via_daemon) == normalise_ids(via_files)
    # Not vacuous: the scenario saved, replaced nothing it should not, and built a context.
    texts = {e["text"] for e in via_daemon[-1]["entries"]}
    assert "Always run the linter before pushing" in texts
    assert "Prefers short commit messages" in texts or any("commit messages" in t for t in texts)
    assert "[Project Memory]" in via_daemon[7]["context"]
    # The daemon really served them: its journal saw this project's writes.
    records = cli.result("log")["records"]
    assert {"save_semantic", "save_episodic", "reinforce"} <= {r["op"] for r in records}


def test_human_context_prints_only_the_block(cli: Cli, daemon: Any, project: Path) -> None:
    daemon.register(project)
    empty = cli("context")
    assert empty.stdout == "" and empty.stderr == ""
    cli("save-semantic", "Never commit secrets", "--confidence", "1.0")
    block = cli("context").stdout
    assert block.startswith("[Project Memory]")
    assert block.rstrip().endswith("[End Project Memory]")
    assert "- [1.00] Never commit secrets" in block


def test_unregistered_project_falls_back_to_direct_mode(cli: Cli, daemon: Any) -> None:
    doc = cli.json("save-semantic", "Prefer small pull requests")
    assert doc["via"] == "direct"
    assert cli.json("context", "--require-daemon", check=1)["error"]["code"] == "not_registered"


def test_project_found_from_a_subdirectory(cli: Cli, project: Path) -> None:
    cli("init")
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    doc = cli.json("save-semantic", "Tabs, not spaces", cwd=deep)
    assert doc["project"] == str(project)
    assert not (deep / ".maestro").exists()
    assert (project / ".maestro" / "memory" / "semantic.md").read_text().count("Tabs") == 1


def test_project_flag_and_missing_directory(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    doc = cli.json("-C", str(missing), "save-semantic", "x", check=1)
    assert doc["ok"] is False and doc["error"]["code"] == "conflict"
    assert not missing.exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli.json("save-semantic", "y", "-C", str(elsewhere))["project"] == str(elsewhere)


@pytest.mark.parametrize("with_daemon", [True, False], ids=["daemon", "direct"])
def test_coded_errors_and_exit_codes(
    cli: Cli, request: pytest.FixtureRequest, project: Path, with_daemon: bool
) -> None:
    if with_daemon:
        request.getfixturevalue("daemon").register(project)
    cli("init")
    bad = cli("reinforce", "s-00000000", check=1)
    assert bad.stdout == ""
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr
    doc = cli.json("reinforce", "s-00000000", check=1)
    assert doc == {
        "ok": False,
        "command": "reinforce",
        "error": {"code": "not_found", "message": doc["error"]["message"], "exit_code": 1},
    }
    assert (
        cli.json("save-semantic", "x", "--category", "gossip", check=1)["error"]["code"]
        == "bad_request"
    )
    assert (
        cli.json("review", "--apply", "s-00000000", "remove", check=1)["error"]["code"]
        == "not_found"
    )
    # usage errors: exit 2, still one JSON document
    assert cli.json("review", "--apply", "s-1", "burn", check=2)["error"]["code"] == "usage"
    assert cli.json("save-semantic", "x", "--confidence", "7", check=2)["error"]["code"] == "usage"
    assert cli.json("nonsense", check=2)["ok"] is False
    usage = cli("context", "--max-tokens", "-5", check=2)
    assert "max-tokens" in usage.stderr
    cli(
        "save-semantic",
        "Always lint before pushing",
        "--category",
        "quality_rule",
        "--confidence",
        "1.0",
    )
    assert "lint" in cli.json("context")["result"]["context"]
    zero = cli.json("context", "--max-tokens", "0")  # zero is a value, not "unset"
    assert zero["result"]["context"] == ""


def test_debug_shows_a_traceback(cli: Cli) -> None:
    cli("init")
    assert "Traceback" in cli("reinforce", "s-00000000", "--debug", check=1).stderr


def test_review_lists_and_applies_decisions(cli: Cli, daemon: Any, project: Path) -> None:
    daemon.register(project)
    saved = cli.result("save-semantic", "Deploys happen on Fridays", "--confidence", "0.24")
    entry_id = saved["entry"]["id"]
    cli("init", "--session", "decay")  # the day's decay pushes it below the 0.2 threshold
    listed = cli.result("review")
    assert listed["dry_run"] is True
    proposal = next(p for p in listed["proposals"] if p["entry"]["id"] == entry_id)
    assert proposal["action"] in ("remove", "archive")
    human = cli("review").stdout
    assert entry_id in human and "PROPOSED" in human
    applied = cli.result("review", "--apply", entry_id, "reinforce")
    assert [p["entry"]["id"] for p in applied["applied"]] == [entry_id]
    after = {e["id"]: e for e in cli.result("entries")["entries"]}
    assert after[entry_id]["confidence"] == pytest.approx(0.5)
    assert cli.result("review")["proposals"] == []


def test_maintain_all_covers_every_registered_project(
    cli: Cli, daemon: Any, project: Path, tmp_path: Path
) -> None:
    second = tmp_path / "second"
    second.mkdir()
    for root in (project, second):
        daemon.register(root)
        cli("-C", str(root), "init")
    result = cli.result("maintain", "--all", "--dry-run")
    assert sorted(p["project"] for p in result["projects"]) == sorted([str(project), str(second)])
    assert all(p["ok"] and p["report"]["dry_run"] for p in result["projects"])


def test_maintain_all_needs_the_daemon(cli: Cli) -> None:
    doc = cli.json("maintain", "--all", check=3)
    assert doc["error"]["code"] == "daemon_unavailable"


def test_daemon_only_commands(cli: Cli, daemon: Any, project: Path) -> None:
    registered = cli.result("register")
    assert registered["path"] == str(project) and registered["added"] is True
    assert cli.result("register")["added"] is False
    assert "already registered" in cli("register").stdout
    listed = cli.result("projects")["projects"]
    assert [p["path"] for p in listed] == [str(project)]
    cli("save-semantic", "Always pin dependencies")
    records = cli.result("log", "--limit", "1")["records"]
    assert len(records) == 1 and records[0]["op"] == "save_semantic"
    assert "save_semantic" in cli("log").stdout
    st = cli.result("status")
    assert st["running"] is True and str(project) in st["projects"]
    text = cli("status").stdout
    assert "maestrod is running" in text and str(project) in text
    assert cli.result("unregister")["removed"] is True
    assert cli.result("projects")["projects"] == []


def test_without_a_daemon(cli: Cli) -> None:
    status = cli("status", check=3)
    assert "maestrod is not running" in status.stdout and "maestroctl start" in status.stdout
    assert cli.json("status", check=3)["result"]["running"] is False
    for args in (("projects",), ("register",), ("unregister",), ("log",), ("stop",)):
        if args == ("stop",):
            assert cli.result(*args)["was_running"] is False
            continue
        doc = cli.json(*args, check=3)
        assert doc["error"]["code"] == "daemon_unavailable", args
        one_line = cli(*args, check=3).stderr.strip()
        assert "\n" not in one_line and "maestroctl start" in one_line


def test_require_daemon_fails_fast(cli: Cli) -> None:
    for extra_env, flag in (({}, ("--require-daemon",)), ({"MAESTRO_REQUIRE_DAEMON": "1"}, ())):
        # With a 60 s timeout, finishing well inside it proves no wait for a reply happened
        # (the wall time itself is not asserted tightly: the machine may be loaded).
        run = cli("--timeout", "60", "context", *flag, "--json", env=extra_env, check=3)
        assert run.seconds < 30.0, run.seconds
        assert run.doc["error"]["code"] == "daemon_unavailable"
        assert not (cli.cwd / ".maestro").exists()


def test_every_command_prints_one_json_document(cli: Cli, daemon: Any, project: Path) -> None:
    daemon.register(project)
    commands: list[tuple[tuple[str, ...], int]] = [
        (("status",), 0),
        (("paths",), 0),
        (("projects",), 0),
        (("register",), 0),
        (("doctor",), 1),
        (("init",), 0),
        (("doctor",), 0),
        (("context",), 0),
        (("entries",), 0),
        (("save-semantic", "Keep functions short"), 0),
        (("save-episodic", "Looked at the parser"), 0),
        (("detect", "--user", "hi"), 0),
        (("maintain",), 0),
        (("review",), 0),
        (("log",), 0),
        (("service", "status"), 0),
        (("service", "install", "--dry-run"), 0),
        (("start",), 0),
        (("reinforce", "e-00000000"), 1),
        (("entries", "--sector", "nope"), 2),
    ]
    for args, code in commands:
        doc = cli.json(*args, check=code)
        # doctor's exit 1 is its verdict (a problem found), not a failed command
        succeeded = code == 0 or args == ("doctor",)
        assert doc["ok"] is succeeded, (args, doc)
        assert set(doc) >= ({"ok", "command", "result"} if succeeded else {"ok", "error"})
    paths = cli.result("paths")
    assert paths["socket"] == str(daemon.paths.socket_path)
    assert re.fullmatch(r".*/maestrod", paths["maestrod"])


def test_help_documents_exit_codes(cli: Cli) -> None:
    text = cli("--help").stdout
    for line in ("0  success", "1  error", "2  usage error", "3  the daemon is required"):
        assert line in text
    for name in ("start", "doctor", "save-semantic", "review", "service"):
        assert name in text


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_entries_and_review_say_which_path_is_gone(cli: Cli, daemon: Any, project: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    daemon.register(project)
    git("init", "-q")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "Dev")
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text("def check(token): ...\n")
    (project / "docs").mkdir()
    (project / "docs" / "API.md").write_text("# The API\n")  # not a copy: git pairs copies
    git("add", "-A")
    git("commit", "-qm", "start")
    auth = cli.result("save-semantic", "Tokens are checked in src/auth.py", "--confidence", "0.9")
    api = cli.result("save-semantic", "The API is documented in docs/API.md", "--confidence", "0.9")
    cli("init", "--session", "one")
    git("mv", "src/auth.py", "src/login.py")
    (project / "docs" / "API.md").unlink()
    cli("init", "--session", "two")
    auth_id, api_id = auth["entry"]["id"], api["entry"]["id"]
    listed = cli("entries", "--wide").stdout
    assert f"stale {auth_id}: `src/auth.py` was renamed to `src/login.py`" in listed
    assert f"stale {api_id}: `docs/API.md` no longer exists" in listed
    review = cli("review").stdout
    assert "rewrite" in review and "`docs/API.md` no longer exists" in review
    assert "waiting for your decision" in cli("maintain").stdout
    rewrote = cli("review", "--apply", auth_id, "rewrite").stdout
    assert "Rewrote" in rewrote and "src/login.py" in rewrote
    texts = {e["id"]: e["text"] for e in cli.result("entries")["entries"]}
    assert texts[auth_id] == "Tokens are checked in src/login.py"
    assert texts[api_id] == "The API is documented in docs/API.md"  # nothing deleted
