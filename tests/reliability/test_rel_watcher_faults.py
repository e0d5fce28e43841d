"""Watcher faults: after each, the daemon's cache ends up equal to the files on disk (the
``entries`` op against a fresh ``MemoryStore(root).read()``), and status names the watcher
mode in force.

* the memory dir deleted and recreated (with new content), several times in a row;
* the memory dir, and ``.maestro``, renamed away (edited while away) and back;
* a ``git checkout``-like storm: the files replaced by rename 200 times within a second, then
  a write through the daemon that must build on the storm's last version, not a stale parse;
* the same faults for a project the daemon watches by *polling* because inotify ran out of
  watches (a real ENOSPC from the kernel, in a user namespace whose watch limit is 4, as in
  tests/daemon/test_daemon_watcher.py; the global ``fs.inotify.max_user_watches`` is not
  lowered, since every other process of this uid, other test runs included, would lose
  their watches too);
* watches added and dropped (register/unregister) while events pour in: this deadlocked the
  watcher against watchdog's own lock, and through ``watch()`` the writer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from maestrod_testkit import DaemonFactory, DaemonHandle
from reliability_kit import disk_entry_view, disk_state, entry_view, memory_dir, wait_for

from maestro_memory.core import MemoryStore

SETTLE = 20.0  # seconds a check may take to land (debounce, polling interval, rescan)


def semantic_text(*rules: str) -> str:
    lines = "".join(f"- [2026-01-05] [0.90] {rule}\n" for rule in rules)
    return f"# Semantic Memory\n\n## Quality Rules\n{lines}\n## Maintenance Log\n"


def replace_file(path: Path, text: str) -> None:
    """Write a new version the way git and most editors do: a new file renamed over it."""
    tmp = path.with_name(f"{path.name}.checkout-tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def cache_matches_disk(daemon: DaemonHandle, root: Path) -> bool:
    return entry_view(daemon.result("entries", root)["entries"]) == disk_entry_view(root)


def settle(daemon: DaemonHandle, root: Path, what: str) -> None:
    wait_for(
        lambda: cache_matches_disk(daemon, root),
        timeout=SETTLE,
        message=f"the cache to equal the files after {what}",
    )


def mode_of(daemon: DaemonHandle, root: Path) -> str:
    mode: str = daemon.status()["projects"][str(root)]["watcher"]
    return mode


def texts_in_cache(daemon: DaemonHandle, root: Path) -> set[str]:
    return {e["text"] for e in daemon.result("entries", root)["entries"]}


def new_project(root: Path, *rules: str) -> Path:
    root.mkdir()
    MemoryStore(root).initialize("setup")
    (memory_dir(root) / "semantic.md").write_text(semantic_text(*rules))
    return root


def run_faults(daemon: DaemonHandle, root: Path, mode: str) -> None:
    md = memory_dir(root)
    assert mode_of(daemon, root) == mode
    settle(daemon, root, "registration")

    # 1. deleted and recreated, three times, each time with other content
    for round_ in range(3):
        shutil.rmtree(md)
        wait_for(
            lambda: daemon.result("entries", root)["entries"] == [],
            timeout=SETTLE,
            message="the deletion to empty the cache",
        )
        assert disk_state(root).memory.semantic_entries() == []
        md.mkdir()
        (md / "semantic.md").write_text(semantic_text(f"Recreated rule number{round_}"))
        settle(daemon, root, f"recreation {round_}")
        assert texts_in_cache(daemon, root) == {f"Recreated rule number{round_}"}
        assert mode_of(daemon, root) == mode

    # 2. renamed away, edited while away, renamed back (the memory dir, then .maestro)
    for moved in (md, root / ".maestro"):
        away = moved.with_name(moved.name + ".away")
        os.rename(moved, away)
        wait_for(
            lambda: daemon.result("entries", root)["entries"] == [],
            timeout=SETTLE,
            message=f"{moved.name} renamed away to empty the cache",
        )
        inner = away if moved == md else away / "memory"
        replace_file(inner / "semantic.md", semantic_text(f"Edited away in {moved.name}"))
        os.rename(away, moved)
        settle(daemon, root, f"{moved.name} renamed back")
        assert texts_in_cache(daemon, root) == {f"Edited away in {moved.name}"}
        assert mode_of(daemon, root) == mode

    # 3. a checkout storm: 200 replacements back to back (well within a second on an idle
    #    machine; not asserted, since a loaded machine is slower and tests never fail on timings)
    path = md / "semantic.md"
    for i in range(200):
        replace_file(path, semantic_text(*(f"Storm rule r{i}x{k}" for k in range(i % 5 + 1))))
        if i % 40 == 39:
            (md / "episodic.md").write_text(
                f"# Episodic Memory\n\n## Entries\n\n"
                f"### [salience: 1.0] [confidence: 0.70] "
                f"[2026-01-05] [s]\nStorm episode {i}\n"
            )
    settle(daemon, root, "the storm")
    assert texts_in_cache(daemon, root) == {
        "Storm episode 199",
        *(f"Storm rule r199x{k}" for k in range(5)),
    }
    # The writer builds on the storm's last version, not on a parse it kept from before.
    daemon.result(
        "save_semantic", root, fact="After the storm zzq", category="quality_rule", confidence=0.9
    )
    on_disk = set(disk_state(root).semantic_texts())
    assert on_disk == {"After the storm zzq", *(f"Storm rule r199x{k}" for k in range(5))}
    assert cache_matches_disk(daemon, root)
    assert mode_of(daemon, root) == mode
    assert daemon.status()["projects"][str(root)]["external_edits"] >= 8


def test_watcher_faults_inotify(daemon: DaemonHandle, tmp_path: Path) -> None:
    root = new_project(tmp_path / "proj", "Always pin versions")
    daemon.register(root)
    run_faults(daemon, root, "inotify")


def _userns_watch_limit() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-U", "-r", "sh", "-c", "echo 4 > /proc/sys/user/max_inotify_watches"],
        capture_output=True,
    )
    return probe.returncode == 0


@pytest.mark.skipif(
    not _userns_watch_limit(), reason="needs a user namespace with its own inotify watch limit"
)
def test_watcher_faults_when_inotify_runs_out(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    first = new_project(tmp_path / "a", "Rule of project a")
    second = new_project(tmp_path / "b", "Rule of project b")
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
    daemon.register(second)  # needs 3 more watches: only 1 left
    assert "inotify limit reached" in daemon.log_text()
    run_faults(daemon, second, "polling")
    # The first project kept its inotify watches through all of that, and still sees edits.
    assert mode_of(daemon, first) == "inotify"
    replace_file(memory_dir(first) / "semantic.md", semantic_text("Edited rule of project a"))
    settle(daemon, first, "an edit of the inotify project")
    assert texts_in_cache(daemon, first) == {"Edited rule of project a"}


def test_watches_come_and_go_while_events_pour_in(daemon: DaemonHandle, tmp_path: Path) -> None:
    """register/unregister (watchdog schedule/unschedule) and stale-dir re-arming while the
    observer threads are busy dispatching events. The daemon must keep answering."""
    busy = [new_project(tmp_path / f"busy{k}", f"Busy rule {k}") for k in range(3)]
    for root in busy:
        daemon.register(root)
    churn = [new_project(tmp_path / f"churn{k}", f"Churn rule {k}") for k in range(4)]
    stop = threading.Event()

    def storm() -> None:
        i = 0
        while not stop.is_set():
            for root in busy:
                replace_file(memory_dir(root) / "semantic.md", semantic_text(f"Busy r{i}"))
                if i % 25 == 0:  # a vanished directory makes the clock re-arm its watch
                    shutil.rmtree(memory_dir(root))
                    memory_dir(root).mkdir()
                    replace_file(memory_dir(root) / "semantic.md", semantic_text(f"Busy r{i}"))
            i += 1

    thread = threading.Thread(target=storm)
    thread.start()
    try:
        # At least 3 rounds and at least 6 s of storm, however slow the machine; a stall
        # fails on the request timeout (a hang guard, not a speed test).
        deadline = time.monotonic() + 6.0
        rounds = 0
        while rounds < 3 or time.monotonic() < deadline:
            for root in churn:
                daemon.send("register", args={"path": str(root)}, timeout=60)
                daemon.send("unregister", args={"path": str(root)}, timeout=60)
            rounds += 1
    finally:
        stop.set()
        thread.join(30)
    for root in busy:
        settle(daemon, root, "the churn")
        assert mode_of(daemon, root) == "inotify"
    saved = daemon.result(
        "save_semantic", busy[0], fact="Still writing zzw", category="quality_rule", confidence=0.9
    )
    assert saved["action"] == "added"
