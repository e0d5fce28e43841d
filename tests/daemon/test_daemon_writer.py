"""The writer in-process: group commit, a crashing request, a failing commit.

Jobs are queued before the writer thread starts, so they are certain to form one batch.
The reply socket is a real inproc PULL; the commit failure uses the core's fault-injection
seam (``fsio.IO``), not a mock of anything the daemon talks to.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq

from maestro_memory.core import MemoryStore, fsio
from maestro_memory.core.memory import Memory, Settings
from maestro_memory.daemon.cache import ReadCache
from maestro_memory.daemon.journal import Journal
from maestro_memory.daemon.writer import DRAINED, JobOutcome, MemoryJob, Writer


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "proj"
        self.project.mkdir()
        (tmp_path / "journal").mkdir()
        self.context: zmq.Context[Any] = zmq.Context()
        self.replies = self.context.socket(zmq.PULL)
        self.replies.bind("inproc://test-replies")
        self.cache = ReadCache()
        self.journal = Journal(tmp_path / "journal")
        self.writer = Writer(
            self.cache, self.journal, Settings(), self.context, "inproc://test-replies"
        )
        self.writer.projects.attach(self.project)

    def save(self, fact: str) -> MemoryJob:
        return MemoryJob(
            self.project,
            "save_semantic",
            {"fact": fact, "category": "project_context", "confidence": 0.9},
        )

    def run(self, jobs: list[MemoryJob]) -> list[JobOutcome]:
        futures = [self.writer.submit_future(job) for job in jobs]
        self.writer.start()
        return [f.result(timeout=20) for f in futures]

    def close(self) -> None:
        self.writer.close()
        assert self.writer.join(10)
        assert self.replies.recv() == DRAINED
        self.replies.close()
        self.context.term()

    def on_disk(self) -> list[str]:
        return [e.text for e in MemoryStore(self.project).semantic_entries()]


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    yield h
    h.close()


def test_queued_writes_share_one_transaction(harness: Harness) -> None:
    facts = [
        "Deploys use blue green switching",
        "Backups run nightly at two",
        "Staging mirrors production data weekly",
        "Feature flags live in LaunchDarkly",
    ]
    outcomes = harness.run([harness.save(f) for f in facts])
    assert all(o.ok for o in outcomes)
    assert harness.writer.stats["transactions"] == 1 and harness.writer.stats["commits"] == 1
    assert sorted(harness.on_disk()) == sorted(facts)
    view = harness.cache.view(harness.project)
    assert sorted(e.text for e in view.semantic) == sorted(facts)
    records = harness.journal.tail(harness.project, 10)
    assert [r["op"] for r in records] == ["save_semantic"] * 4


def test_a_bad_request_fails_alone(harness: Harness) -> None:
    bad = MemoryJob(harness.project, "save_semantic", {"fact": "x", "category": "nonsense"})
    outcomes = harness.run(
        [harness.save("Logs ship to Loki"), bad, harness.save("Alerts page the on call engineer")]
    )
    assert [o.ok for o in outcomes] == [True, False, True]
    assert outcomes[1].code == "bad_request"
    assert len(harness.on_disk()) == 2


def test_crashing_request_is_internal_and_the_rest_applied_once(harness: Harness) -> None:
    def crash(memory: Memory) -> dict[str, Any]:
        memory.save_semantic("Half applied and then crashed", "project_context", 0.9)
        raise RuntimeError("bug in a handler")

    jobs = [
        harness.save("Tokens expire after fifteen minutes"),
        MemoryJob(harness.project, "crash", apply=crash),
        harness.save("Sessions are stored in Redis"),
    ]
    outcomes = harness.run(jobs)
    assert [o.ok for o in outcomes] == [True, False, True]
    assert outcomes[1].code == "internal"
    # The batch was re-applied to a fresh parse: the crash left nothing, nothing doubled.
    assert sorted(harness.on_disk()) == [
        "Sessions are stored in Redis",
        "Tokens expire after fifteen minutes",
    ]
    first_id = outcomes[0].result["entry"]["id"]  # type: ignore[index]
    assert first_id in {e.id for e in MemoryStore(harness.project).semantic_entries()}


def test_failed_commit_fails_the_batch_and_keeps_the_files(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    MemoryStore(harness.project).save_semantic("Existing fact stays put", "project_context", 0.9)
    harness.writer.projects.check(harness.project)
    before = (harness.project / ".maestro/memory/semantic.md").read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fsio.IO, "fsync", full_disk)
    outcomes = harness.run([harness.save("First lost write"), harness.save("Second lost write")])
    assert all(not o.ok and o.code == "internal" for o in outcomes)
    assert all("intact" in o.message for o in outcomes)
    assert (harness.project / ".maestro/memory/semantic.md").read_bytes() == before
    assert not [p for p in (harness.project / ".maestro/memory").iterdir() if ".tmp-" in p.name]
    view = harness.cache.view(harness.project)
    assert [e.text for e in view.semantic] == ["Existing fact stays put"]
    assert harness.writer.stats["failed_commits"] == 1

    monkeypatch.undo()
    done = harness.writer.submit_future(harness.save("Written once the disk has room"))
    assert done.result(timeout=20).ok
    assert "Written once the disk has room" in harness.on_disk()


# -- the writer never waits for analysis (issue 36) -------------------------------------------
def test_the_writer_commits_while_a_job_is_being_prepared(harness: Harness) -> None:
    import threading
    from concurrent.futures import Future

    release = threading.Event()
    prepared = harness.save("Prepared off the writer thread")
    prepared.future = Future()
    where: list[str] = []

    def prepare() -> None:
        where.append(threading.current_thread().name)
        assert release.wait(20)

    harness.writer.start()
    harness.writer.submit_prepared(prepared, prepare)
    other = harness.writer.submit_future(harness.save("Committed in the meantime"))
    assert other.result(timeout=20).ok  # the writer did not wait for the preparation
    assert harness.on_disk() == ["Committed in the meantime"]
    assert not prepared.future.done()
    release.set()
    assert prepared.future.result(timeout=20).ok
    assert sorted(harness.on_disk()) == [
        "Committed in the meantime",
        "Prepared off the writer thread",
    ]
    assert where and where[0].startswith("analysis")


def test_a_job_being_prepared_at_shutdown_is_still_run(harness: Harness) -> None:
    import threading

    release = threading.Event()
    prepared = harness.save("Accepted before the shutdown")
    harness.writer.start()
    harness.writer.submit_prepared(prepared, lambda: release.wait(20) and None)
    harness.writer.close()  # what a SIGTERM does: no new job, the queue drained
    assert not harness.writer.join(0.2)  # still waiting for the job being prepared
    release.set()
    assert harness.writer.join(20)
    assert harness.on_disk() == ["Accepted before the shutdown"]
    assert harness.replies.recv() == DRAINED
    harness.writer = Writer(  # the fixture's close() expects a writer to stop: a fresh one
        harness.cache, harness.journal, Settings(), harness.context, "inproc://test-replies"
    )
    harness.writer.start()
