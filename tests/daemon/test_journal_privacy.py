"""The daemon journal never holds a secret, and ``forget`` can scrub a text from it."""

from __future__ import annotations

import json
from pathlib import Path

from maestro_memory.daemon.journal import Journal, record

AWS = "AKIAZ7QX2M4N5P6R8T3V"


def test_append_screens_every_string_of_a_record(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    project = tmp_path / "proj"
    journal.append(project, [record("save_episodic", session_id=f"s {AWS}", pid=1, changes=[])])
    text = journal.path_for(project).read_text()
    assert AWS not in text
    assert json.loads(text)["session_id"] == "s [redacted: aws key]"


def test_what_a_file_or_client_gave_is_screened_and_what_the_journal_wrote_is_kept(
    tmp_path: Path,
) -> None:
    # The clock, the op and the pid are the journal's own and skip the screen (its cost on the
    # write path); an entry id read from a repository's file and an extra field are screened.
    journal = Journal(tmp_path)
    project = tmp_path / "proj"
    rec = record(
        "external_edit",
        session_id=None,
        pid=7,
        changes=[{"id": f"s-{AWS}", "before": None, "after": None}],
        files=[f"notes {AWS}.md"],
    )
    journal.append(project, [rec])
    text = journal.path_for(project).read_text()
    assert AWS not in text
    written = json.loads(text)
    assert (written["time"], written["op"], written["pid"]) == (rec["time"], "external_edit", 7)
    assert written["entries"] == ["[redacted: aws key]"]
    assert written["files"][0].startswith("notes [redacted: aws key]")


def test_scrub_replaces_the_text_and_keeps_the_other_records(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    project = tmp_path / "proj"
    journal.append(
        project,
        [
            record("save_semantic", session_id="about nebula-7 hosts", pid=1, changes=[]),
            record("save_semantic", session_id="other", pid=2, changes=[]),
        ],
    )
    assert journal.scrub(project, ["nebula-7"]) == 1
    records = journal.tail(project, 10)
    assert [r["session_id"] for r in records] == ["[forgotten]", "other"]
    assert "nebula-7" not in journal.path_for(project).read_text()
    assert journal.scrub(project, ["absent"]) == 0
