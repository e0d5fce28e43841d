"""The replies' ``TypedDict``s (``common/replies.py``) name exactly the keys a real reply has:
through a running daemon and in direct mode, for the ops typed from a core report or built by
hand (``save_semantic``, ``maintenance``, ``forget``, ``search``, ``status``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from maestro_memory.client import Client
from maestro_memory.common import paths, replies


def keys(shape: Any) -> set[str]:
    return set(shape.__required_keys__) | set(shape.__optional_keys__)


def check_memory_replies(client: Client, project: Path, via: str) -> None:
    saved = client.save_semantic("Always run the tests before committing", "quality_rule", 1.0)
    assert client.last_via == via
    assert set(saved) == keys(replies.SaveSemanticReply)
    assert saved["action"] == "added" and saved["entry"] is not None
    client.save_semantic("Use tabs in the makefiles", "quality_rule", 0.15)

    found = client.search("tests before committing")
    assert set(found) == keys(replies.SearchReply)
    assert found["results"] and "score" in found["results"][0]

    review = client.maintenance(dry_run=True)
    assert set(review) == keys(replies.MaintenanceReply)
    for proposal in review["proposals"]:
        assert set(proposal) == keys(replies.ProposalInfo)
    assert review["proposals"], review  # the 0.15 entry is flagged

    gone = client.forget([saved["entry"]["id"]])
    assert set(gone) == keys(replies.ForgetReply)
    assert [e["id"] for e in gone["forgotten"]] == [saved["entry"]["id"]]


def test_direct_mode_replies_have_the_typed_keys(maestro_home: Path, project: Path) -> None:
    (project / ".maestro").mkdir()
    with Client(project, direct=True) as client:
        check_memory_replies(client, project, "direct")


def test_daemon_replies_have_the_typed_keys(daemon: Any, project: Path) -> None:
    (project / ".maestro").mkdir()
    daemon.register(project)
    with Client(project, paths=paths.resolve(), require_daemon=True) as client:
        check_memory_replies(client, project, "daemon")
        status = client.status()
        assert set(status) == keys(replies.StatusReply)
        assert set(status["started"]) == keys(replies.StartedInfo)
        assert str(project) in status["projects"]
