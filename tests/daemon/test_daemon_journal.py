"""The journal rotates by size, keeps a bounded number of files, and is read across them."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
from maestrod_testkit import DaemonHandle

from maestro_memory.daemon.journal import Journal, journal_name, record


def rec(i: int) -> dict[str, object]:
    return record("save_semantic", session_id=f"s{i}", pid=1, changes=[], n=i)


def test_rotation_keeps_a_bounded_history_read_as_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path, rotate_bytes=2000, keep=2)
    project = Path("/some/project")
    caplog.set_level(logging.INFO, logger="maestrod")
    for i in range(200):
        journal.append(project, [rec(i)])
    names = sorted(os.listdir(tmp_path))
    base = journal_name(project)
    assert names == sorted([base, f"{base}.1", f"{base}.2"])  # bounded: keep=2 rotated
    assert all((tmp_path / n).stat().st_size < 2000 + 400 for n in names)
    assert "deleting the oldest rotated file" in caplog.text  # nothing deleted silently
    # A reader sees the newest records, in order, across the rotation boundaries.
    on_disk = sum(len((tmp_path / n).read_text().splitlines()) for n in names)
    tail = journal.tail(project, 1000)
    assert len(tail) == on_disk
    ns = [r["n"] for r in tail]
    assert ns == list(range(200 - on_disk, 200))
    assert [r["n"] for r in journal.tail(project, 5)] == [195, 196, 197, 198, 199]
    current = (tmp_path / base).read_text().splitlines()
    assert len(current) < on_disk  # the tail really spans more than the current file


def test_a_torn_last_line_is_skipped_not_fatal(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    project = Path("/p")
    journal.append(project, [rec(1), rec(2)])
    with open(journal.path_for(project), "a") as out:
        out.write('{"time": "2026')  # a crash mid-append
    assert [r["n"] for r in journal.tail(project, 10)] == [1, 2]


def test_maestroctl_log_op_reads_across_rotation(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result("save_semantic", project, fact="Use pnpm", category="project_context")
    current = daemon.paths.journal_dir / journal_name(project)
    assert current.exists()
    # An older, rotated file as the rotation leaves it (the daemon rotates at 4 MiB).
    older = current.with_name(current.name + ".1")
    older.write_text(json.dumps(rec(7), sort_keys=True) + "\n")
    records = daemon.result("log", project, limit=10)["records"]
    assert [r["op"] for r in records] == ["save_semantic", "save_semantic"]
    assert records[0].get("n") == 7  # the rotated record comes first: oldest first
