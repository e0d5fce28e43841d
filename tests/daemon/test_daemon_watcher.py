"""Changes made by someone else reach the cache without a restart; the daemon's own do not
count as external; a broken file is reported, never rewritten."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle, wait_for

from maestro_memory.core import MemoryStore
from maestro_memory.daemon.watcher import relevant


def memory_dir(project: Path) -> Path:
    return project / ".maestro" / "memory"


def context_of(daemon: DaemonHandle, project: Path) -> str:
    text: str = daemon.result("build_context", project, max_tokens=2000)["context"]
    return text


def append_line(path: Path, line: str) -> None:
    """A person's editor: rewrite the file in place."""
    text = path.read_text()
    path.write_text(text.replace("## Quality Rules\n", f"## Quality Rules\n{line}\n", 1))


def test_external_edit_shows_up_without_restart(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result(
        "save_semantic",
        project,
        fact="Always run the linter before pushing",
        category="quality_rule",
        confidence=1.0,
    )
    append_line(
        memory_dir(project) / "semantic.md", "- [2026-01-05] [1.00] Never merge on a red build"
    )
    wait_for(
        lambda: "Never merge on a red build" in context_of(daemon, project),
        message="the edit in build_context",
    )
    status = daemon.status()["projects"][str(project)]
    assert status["last_external_edit"] is not None
    # One edit; a check that lands in the middle of the (non-atomic) write sees it in two
    # steps on a loaded machine, each an external edit.
    assert status["external_edits"] >= 1
    records = daemon.result("log", project)["records"]
    external = [r for r in records if r["op"] == "external_edit"]
    assert len(external) == 1 and external[0]["files"] == ["semantic.md"]
    assert external[0]["changes"][0]["before"] is None
    # The daemon's next write builds on the edited file, not on its stale copy.
    daemon.result(
        "save_semantic",
        project,
        fact="Prefer small pull requests",
        category="user_preference",
        confidence=0.9,
    )
    texts = [e.text for e in MemoryStore(project).semantic_entries()]
    assert "Never merge on a red build" in texts and "Prefer small pull requests" in texts


def test_direct_mode_writer_is_seen(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result("initialize", project, session_id="s1")
    MemoryStore(project).save_semantic(
        "Deploy only from the release branch", "project_context", 1.0
    )
    wait_for(
        lambda: "release branch" in context_of(daemon, project),
        message="the direct-mode write in the cache",
    )


def test_deleted_memory_dir_is_watched_again(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result(
        "save_semantic",
        project,
        fact="Always pin dependency versions",
        category="quality_rule",
        confidence=1.0,
    )
    backup = project.parent / "backup"
    shutil.copytree(memory_dir(project), backup)
    shutil.rmtree(project / ".maestro")
    wait_for(
        lambda: daemon.result("entries", project)["entries"] == [],
        message="the deletion to empty the cache",
    )
    assert daemon.status()["projects"][str(project)]["memory_dir_exists"] is False
    (project / ".maestro").mkdir()
    shutil.copytree(backup, memory_dir(project))
    wait_for(
        lambda: "pin dependency versions" in context_of(daemon, project),
        message="the restored dir to be read",
    )
    # ... and it is watched again: a later edit is picked up as well.
    append_line(memory_dir(project) / "semantic.md", "- [2026-01-05] [1.00] Never vendor code")
    wait_for(
        lambda: "Never vendor code" in context_of(daemon, project),
        message="an edit in the re-created dir",
    )


def test_memory_dir_created_after_registration(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    MemoryStore(project).save_semantic("Never commit secrets", "quality_rule", 1.0)
    wait_for(
        lambda: "Never commit secrets" in context_of(daemon, project),
        message="a memory dir created by someone else",
    )


def test_parse_problem_reported_not_fixed(daemon: DaemonHandle, project: Path) -> None:
    daemon.register(project)
    daemon.result(
        "save_semantic",
        project,
        fact="Always squash merge",
        category="quality_rule",
        confidence=1.0,
    )
    path = memory_dir(project) / "semantic.md"
    append_line(path, "- [2026-01-05] [1.7] Confidence out of range")
    edited = path.read_text()

    def problem() -> object:
        problems = daemon.status()["projects"][str(project)]["problems"]
        return problems.get("semantic.md")

    found = wait_for(problem, message="the problem in status")
    assert "1.7" in str(found)
    assert daemon.result("entries", project)["problems"]["semantic.md"]
    assert path.read_text() == edited  # untouched by the daemon


def test_noise_is_ignored(daemon: DaemonHandle, project: Path) -> None:
    """Temp files, the lock and plain reads are not changes."""
    daemon.register(project)
    daemon.result("initialize", project, session_id="s1")
    md = memory_dir(project)
    (md / ".semantic.md.tmp-1-abcd").write_text("half written")
    (md / ".lock").touch()
    (md / "semantic.md").read_text()
    (md / ".semantic.md.tmp-1-abcd").unlink()
    daemon.result(
        "save_semantic",
        project,
        fact="Prefer rebase over merge",
        category="user_preference",
        confidence=0.9,
    )
    status = daemon.status()["projects"][str(project)]
    assert status["external_edits"] == 0


def test_event_filter() -> None:
    from watchdog.observers.inotify_c import InotifyConstants as C

    modify, moved_to, create = int(C.IN_MODIFY), int(C.IN_MOVED_TO), int(C.IN_CREATE | C.IN_ISDIR)
    assert relevant("memory", modify, "semantic.md")
    assert relevant("memory", moved_to, "semantic.md")  # a temp file renamed over it
    assert relevant("memory", int(C.IN_DELETE), "archive.md")
    assert relevant("root", create, ".maestro")
    assert relevant(".maestro", create, "memory")
    assert relevant("memory", int(C.IN_DELETE_SELF), "")  # the watched dir itself went
    assert relevant("root", int(C.IN_MOVE_SELF), "")
    assert relevant("memory", int(C.IN_IGNORED), "")
    assert not relevant("memory", modify, ".semantic.md.tmp-1-ab")
    assert not relevant("memory", modify, ".lock")
    assert not relevant("memory", modify, ".state.json")
    assert not relevant("root", int(C.IN_CREATE), "README.md")
    assert not relevant("root", create, "memory")  # not the chain at this level
    assert not relevant(".maestro", create, ".maestro")


def test_forced_polling_still_sees_edits(daemon_factory: DaemonFactory, project: Path) -> None:
    daemon = daemon_factory(config="[watcher]\nforce_polling = true\n")
    daemon.register(project)
    daemon.result("initialize", project, session_id="s1")
    assert daemon.status()["projects"][str(project)]["watcher"] == "polling"
    append_line(memory_dir(project) / "semantic.md", "- [2026-01-05] [1.00] Never skip review")
    wait_for(
        lambda: "Never skip review" in context_of(daemon, project),
        message="the edit seen by polling",
    )


def _userns_available() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-U", "-r", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    not _userns_available(), reason="needs a user namespace with its own inotify watch limit"
)
def test_inotify_limit_falls_back_to_polling(daemon_factory: DaemonFactory, tmp_path: Path) -> None:
    # In its own user namespace the daemon gets 4 inotify watches: the first project takes
    # 3 (root, .maestro, memory), the second runs out and must poll.
    first, second = tmp_path / "a", tmp_path / "b"
    for root in (first, second):
        MemoryStore(root).initialize("setup")
    daemon = daemon_factory(
        argv_prefix=[
            "unshare",
            "-U",
            "-r",
            "sh",
            "-c",
            'echo 4 > /proc/sys/user/max_inotify_watches && exec "$@"',
            "sh",
        ]
    )
    daemon.register(first)
    daemon.register(second)
    projects = daemon.status()["projects"]
    assert projects[str(first)]["watcher"] == "inotify"
    assert projects[str(second)]["watcher"] == "polling"
    assert "inotify limit reached" in daemon.log_text()
    for root in (first, second):
        append_line(
            memory_dir(root) / "semantic.md",
            f"- [2026-01-05] [1.00] Never touch {root.name} on Fridays",
        )
    for root in (first, second):
        wait_for(
            lambda r=root: f"Never touch {r.name}" in context_of(daemon, r),  # type: ignore[misc]
            message=f"the edit in {root.name}",
        )


def _daemon_threads_and_inotify_fds(pid: int) -> tuple[int, int]:
    threads = len(os.listdir(f"/proc/{pid}/task"))
    fds = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds += "inotify" in os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed while we looked
            continue
    return threads, fds


def test_many_projects_share_one_inotify_instance_and_thread(
    daemon: DaemonHandle, tmp_path: Path
) -> None:
    """Watching more projects adds watches, not threads or inotify instances."""
    roots = []
    for k in range(40):
        root = tmp_path / f"many{k}"
        MemoryStore(root).initialize("setup")
        roots.append(root)
    daemon.register(roots[0])
    threads_one, fds_one = _daemon_threads_and_inotify_fds(daemon.proc.pid)
    for root in roots[1:]:
        daemon.register(root)
    threads_all, fds_all = _daemon_threads_and_inotify_fds(daemon.proc.pid)
    assert fds_one == fds_all == 1
    assert threads_all - threads_one < 5, (threads_one, threads_all)  # was 3 per project
    projects = daemon.status()["projects"]
    assert {projects[str(r)]["watcher"] for r in roots} == {"inotify"}
    # ... and each of them still sees its edits.
    for root in (roots[0], roots[-1]):
        MemoryStore(root).save_semantic(f"Never rename {root.name} casually", "quality_rule", 1.0)
    for root in (roots[0], roots[-1]):
        wait_for(
            lambda r=root: f"Never rename {r.name}" in context_of(daemon, r),  # type: ignore[misc]
            message=f"the edit in {root.name}",
        )


@pytest.mark.skipif(
    not _userns_available(), reason="needs a user namespace with its own inotify limits"
)
def test_no_inotify_instance_left_falls_back_to_polling(
    daemon_factory: DaemonFactory, project: Path
) -> None:
    # In its own user namespace the daemon may create no inotify instance at all (EMFILE).
    daemon = daemon_factory(
        argv_prefix=[
            "unshare",
            "-U",
            "-r",
            "sh",
            "-c",
            'echo 0 > /proc/sys/user/max_inotify_instances && exec "$@"',
            "sh",
        ]
    )
    daemon.register(project)
    daemon.result("initialize", project, session_id="s1")
    assert daemon.status()["projects"][str(project)]["watcher"] == "polling"
    assert "inotify limit reached" in daemon.log_text()
    append_line(memory_dir(project) / "semantic.md", "- [2026-01-05] [1.00] Never poll twice")
    wait_for(
        lambda: "Never poll twice" in context_of(daemon, project),
        message="the edit seen by polling",
    )


# -- the daemon's own commits are not checked; an edit right after one still is (issue 36) ----
def _entry_texts(daemon: DaemonHandle, project: Path) -> list[str]:
    return [e["text"] for e in daemon.result("entries", project, sector="semantic")["entries"]]


@pytest.mark.parametrize("folder", ["existing", "made by the first save"])
def test_an_edit_in_place_that_keeps_the_stat_of_our_commit_is_seen(
    daemon: DaemonHandle, project: Path, folder: str
) -> None:
    # The worst case for "is this event ours?": the same inode, size and mtime_ns as the file
    # our commit left, only the content differs. Written in place, so never taken for ours.
    # When the first save makes the memory folder, the edit may come before its watch does:
    # the check after the watch is added compares the content too.
    if folder == "existing":
        memory_dir(project).mkdir(parents=True)
    daemon.register(project)
    daemon.result("save_semantic", project, fact="Tag releases with vX.Y.Z",
                  category="project_context", confidence=0.9)  # fmt: skip
    path = memory_dir(project) / "semantic.md"
    before = os.stat(path)
    text = path.read_text()
    assert "vX.Y.Z" in text
    with open(path, "r+") as fh:  # in place: the same inode
        fh.write(text.replace("vX.Y.Z", "vA.B.C"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)  # fmt: skip
    wait_for(
        lambda: "Tag releases with vA.B.C" in _entry_texts(daemon, project),
        message="the in-place edit in the cache",
    )
    # The daemon's next write builds on the edited file.
    daemon.result("save_semantic", project, fact="Changelogs list every breaking change",
                  category="project_context", confidence=0.9)  # fmt: skip
    texts = [e.text for e in MemoryStore(project).semantic_entries()]
    assert "Tag releases with vA.B.C" in texts and "Tag releases with vX.Y.Z" not in texts


def test_a_file_renamed_into_place_right_after_our_commit_is_seen(
    daemon: DaemonHandle, project: Path
) -> None:
    # What an editor or git does, right after the daemon's own rename of the same file.
    daemon.register(project)
    path = memory_dir(project) / "semantic.md"
    for i in range(3):
        daemon.result("save_semantic", project, fact=f"Port {8000 + i} is reserved for tests",
                      category="project_context", confidence=0.9)  # fmt: skip
        text = path.read_text()
        new = path.with_name("semantic.md.edit")
        new.write_text(text.replace(f"Port {8000 + i} is", f"Port {9000 + i} is"))
        os.replace(new, path)
        wait_for(
            lambda i=i: f"Port {9000 + i} is reserved for tests" in _entry_texts(daemon, project),
            message=f"the renamed edit {i} in the cache",
        )
    records = daemon.result("log", project)["records"]
    assert [r["op"] for r in records].count("external_edit") >= 3
    assert daemon.status()["projects"][str(project)]["external_edits"] >= 3
