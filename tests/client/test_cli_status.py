"""``status``: when the daemon is down, what it can still say; when up, who started it and
failures apart from fallbacks."""

from __future__ import annotations

from pathlib import Path

from maestroctl_runner import Cli

from maestro_memory.core import MemoryStore


def test_status_down_still_says_what_it_knows(cli: Cli, project: Path, maestro_home: Path) -> None:
    doc = cli.json("status", check=3)
    result = doc["result"]
    assert result["running"] is False
    assert result["service_installed"] is False
    assert result["memory_present"] is False and result["recent_errors"] == []

    MemoryStore(project).save_semantic("Use tabs", "quality_rule", 0.9)
    log = maestro_home / "log" / "maestrod.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(
        "2026-01-01 10:00:00,000 INFO [MainThread] listening\n"
        "2026-01-01 10:00:01,000 ERROR [writer] commit in /p failed: disk full\n"
    )
    result = cli.json("status", check=3)["result"]
    assert result["memory_present"] is True and result["memory_files"]["semantic"] is True
    assert result["recent_errors"] == [
        "2026-01-01 10:00:01,000 ERROR [writer] commit in /p failed: disk full"
    ]
    text = cli("status", check=3).stdout
    assert "not installed" in text and "semantic" in text and "disk full" in text


def test_status_up_says_who_started_it(
    cli: Cli, project: Path, tmp_path: Path, stop_background: None
) -> None:
    cli("start")
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    cli("entries", "-C", str(stranger))  # not registered: answered not_registered, then direct
    result = cli.result("status")
    assert result["started"]["by"] == "maestroctl start"
    assert result["requests"]["failed"] == 0 and result["requests"]["fallbacks"] >= 1
    text = cli("status").stdout
    assert "by maestroctl start" in text and " 0 failed" in text
    assert "unregistered projects" in text
