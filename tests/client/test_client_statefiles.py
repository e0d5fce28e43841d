"""``projects`` and ``log`` through ``Client``: the daemon's answer and, when it is down, the
same answer read from its files (``direct_when_down=True``, ``common/statefiles.py``). The ui
reads the switcher and the chart this way, never importing the daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from maestrod_testkit import DaemonHandle

from maestro_memory.client import Client, DaemonNotRunning, RequestError


def test_the_registry_and_the_journal_read_the_same_with_and_without_the_daemon(
    daemon: DaemonHandle, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    daemon.register(project)
    daemon.register(other)
    with Client(project, paths=daemon.paths) as client:
        client.save_semantic("Run the linters before every commit", "quality_rule", 0.9)
        client.save_semantic("Prefer small commits", "user_preference", 0.8)
        live_projects = client.projects(direct_when_down=True)
        live_log = client.log(1000, direct_when_down=True)
        assert client.last_via == "daemon"
        assert live_projects == client.projects()
    assert [p["path"] for p in live_projects["projects"]] == sorted([str(project), str(other)])
    assert [r["op"] for r in live_log["records"]][-2:] == ["save_semantic", "save_semantic"]

    daemon.stop()
    with Client(project, paths=daemon.paths) as client:
        with pytest.raises(DaemonNotRunning):
            client.projects()  # without the option: the daemon's op, as before
        assert client.projects(direct_when_down=True) == live_projects
        assert client.log(1000, direct_when_down=True) == live_log
        assert client.last_via == "direct"
        assert client.log(2, direct_when_down=True)["records"] == live_log["records"][-2:]
        with pytest.raises(RequestError) as bad:
            client.log(0, direct_when_down=True)  # the op's own limit check, both ways
        assert bad.value.code == "bad_request"
