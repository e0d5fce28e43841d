"""Every on-disk state a crash can leave during a commit recovers to one whole version.

ALICE-style (Pillai et al., OSDI 2014): the real commit runs once with ``fsio.IO`` wrapped to
RECORD its file-system operations (create, write, fsync, rename, unlink, directory fsync; the
wrapper calls the real syscalls too). From the recording, every state a crash could leave is
built under the persistence model below, written into a fresh directory, read as a lock-free
reader does (``MemoryStore.read``) and recovered as every writer does
(``MemoryStore.transaction``: lock, ``fsio.recover``, read), and checked.

Persistence model (also in ARCHITECTURE.md, "Crash states"):

* A crash happens after any prefix of the recorded operations (0 .. all of them).
* The state before the first commit is durable.
* Data written to a file and not yet fsynced may be lost or partly persisted: any prefix of the
  pending bytes at 4096-byte block granularity, plus none and all of them.
* ``fsync(file)`` makes that file's data durable before anything issued after it.
* A create, rename or unlink is durable only after a later fsync of its directory; before that,
  any subset of them may have persisted, except that operations naming the same file persist in
  the order they were issued (a rename of a temp file never persists without its creation).
* Operations on different files persist in any order unless an fsync orders them.

Checked for every state: the memory files (``semantic.md``, ``episodic.md``, ``archive.md``,
``.state.json``) are byte for byte exactly the last acknowledged version or exactly the version
being committed (never a mix, never a torn file); once a commit has returned its version is
never lost; recovery leaves no temp or intent file. Identical states are checked once; the
counts per shape are printed (``pytest -s``) and asserted to be non-trivial. The full
enumeration is run, not a sample.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from maestro_memory.core import MemoryStore, fsio
from maestro_memory.core.memory import Memory
from maestro_memory.core.store import READ_NAMES

BLOCK = 4096
DAY = "2026-12-02"
NEXT_DAY = "2026-12-03"
FLAGGED = "Maybe use tabs in the old scripts"


# -- recording ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Op:
    kind: str  # create | write | fsync | rename | unlink | fsync_dir | acked
    a: str = ""  # a path (create, rename src, unlink) or an inode id (write, fsync)
    b: str = ""  # rename dst
    data: bytes = b""


@dataclass
class Recorder:
    """Wraps ``fsio.IO``: records each step, then performs it for real."""

    ops: list[Op] = field(default_factory=list)
    fds: dict[int, str] = field(default_factory=dict)
    inodes: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        io = fsio.IO
        real: dict[str, Callable[..., Any]] = {
            n: getattr(io, n) for n in ("open_temp", "write", "fsync", "replace", "unlink")
        }
        real["fsync_dir"] = io.fsync_dir

        def open_temp(dir_fd: int, name: str, mode: int) -> int:
            fd: int = real["open_temp"](dir_fd, name, mode)
            self.fds[fd] = f"inode{next(self.inodes)}"
            self.ops.append(Op("create", name, self.fds[fd]))
            return fd

        def write(fd: int, data: bytes) -> int:
            n: int = real["write"](fd, data)
            self.ops.append(Op("write", self.fds[fd], data=bytes(data[:n])))
            return n

        def fsync(fd: int) -> None:
            real["fsync"](fd)
            self.ops.append(Op("fsync", self.fds[fd]))

        def replace(dir_fd: int, src: str, dst: str) -> None:
            real["replace"](dir_fd, src, dst)
            self.ops.append(Op("rename", src, dst))

        def unlink(dir_fd: int, name: str) -> None:
            real["unlink"](dir_fd, name)
            self.ops.append(Op("unlink", name))

        def fsync_dir(dir_fd: int) -> None:
            real["fsync_dir"](dir_fd)
            self.ops.append(Op("fsync_dir"))

        for name, fn in (
            ("open_temp", open_temp),
            ("write", write),
            ("fsync", fsync),
            ("replace", replace),
            ("unlink", unlink),
            ("fsync_dir", fsync_dir),
        ):
            monkeypatch.setattr(io, name, fn)


# -- the model --------------------------------------------------------------------------------
# A directory: name -> inode id. Inode contents: inode id -> bytes.
Dir = dict[str, str]


def _lengths(durable: int, total: int) -> list[int]:
    """Possible persisted lengths of a file with ``durable`` bytes fsynced of ``total``."""
    out = {durable, total}
    out.update(range(durable - durable % BLOCK + BLOCK, total, BLOCK))
    return sorted(n for n in out if durable <= n <= total)


def _names(op: Op) -> set[str]:
    return {op.a, op.b} - {""} if op.kind != "create" else {op.a}


def _closed_subsets(pending: list[tuple[int, Op]]) -> Iterator[list[tuple[int, Op]]]:
    """Subsets of the unsynced directory operations in which an op naming a file only
    persists together with every earlier op naming that file."""
    for mask in range(1 << len(pending)):
        chosen = [pending[i] for i in range(len(pending)) if mask >> i & 1]
        ok = True
        for i, (_, op) in enumerate(pending):
            if not mask >> i & 1:
                continue
            for j in range(i):
                if not mask >> j & 1 and _names(pending[j][1]) & _names(op):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            yield chosen


def crash_states(old: dict[str, bytes], ops: list[Op], k: int) -> Iterator[dict[str, bytes]]:
    """Every directory content the model allows after a crash following ``ops[:k]``."""
    done = ops[:k]
    data: dict[str, bytes] = {}  # inode -> bytes written (all of it)
    synced: dict[str, int] = {}  # inode -> bytes known durable
    pending_dir: list[tuple[int, Op]] = []
    durable_dir: list[tuple[int, Op]] = []
    for i, op in enumerate(done):
        if op.kind == "create":
            data[op.b] = b""
            synced[op.b] = 0
            pending_dir.append((i, op))
        elif op.kind == "write":
            data[op.a] += op.data
        elif op.kind == "fsync":
            synced[op.a] = len(data[op.a])
        elif op.kind in ("rename", "unlink"):
            pending_dir.append((i, op))
        elif op.kind == "fsync_dir":
            durable_dir.extend(pending_dir)
            pending_dir = []
    inode_ids = sorted(data)
    choices = [_lengths(synced[n], len(data[n])) for n in inode_ids]
    for subset in _closed_subsets(pending_dir):
        applied = sorted(durable_dir + subset)
        names: Dir = {name: f"old:{name}" for name in old}
        for _, op in applied:
            if op.kind == "create":
                names[op.a] = op.b
            elif op.kind == "rename":
                names[op.b] = names.pop(op.a)
            elif op.kind == "unlink":
                names.pop(op.a, None)
        visible = [n for n in inode_ids if n in names.values()]
        vis_choices = [choices[inode_ids.index(n)] for n in visible]
        for lengths in itertools.product(*vis_choices):
            cut = dict(zip(visible, lengths, strict=True))
            state: dict[str, bytes] = {}
            for name, inode in names.items():
                if inode.startswith("old:"):
                    state[name] = old[inode[4:]]
                else:
                    state[name] = data[inode][: cut[inode]]
            yield state


# -- the product's recovery ------------------------------------------------------------------
def snapshot(memory_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(memory_dir.iterdir()) if p.is_file()}


def content(files: dict[str, bytes]) -> tuple[bytes | None, ...]:
    return tuple(files.get(name) for name in READ_NAMES)


def rendered(memory: Memory) -> tuple[str, ...]:
    """Everything a reader can get from a Memory: each file as parsed and rendered."""
    return (*(doc.render() for doc in memory.docs.values()), memory.state.render())


def recover_state(root: Path, state: dict[str, bytes]) -> tuple[bytes | None, ...]:
    memory_dir = root / ".maestro" / "memory"
    if root.exists():
        shutil.rmtree(root)
    memory_dir.mkdir(parents=True)
    for name, body in state.items():
        (memory_dir / name).write_bytes(body)
    store = MemoryStore(root, clock=lambda: DAY)
    # A lock-free reader first (direct-mode reads, the daemon's first look): what it reads
    # must already be one whole version.
    seen = rendered(store.read())
    with store.transaction():  # what every writer does first: lock, recover, read
        pass
    after = snapshot(memory_dir)
    texts = {n: b.decode("utf-8", "surrogateescape") for n, b in after.items() if n in READ_NAMES}
    recovered = Memory.load(texts, today=DAY)
    assert seen == rendered(recovered), "a lock-free reader saw other content than recovery left"
    leftovers = [n for n in after if fsio.is_temp_name(n) or n == fsio.INTENT_FILE]
    assert leftovers == [], f"recovery left {leftovers}"
    store.read()  # loads without raising
    return content(after)


# -- shapes -----------------------------------------------------------------------------------
def seeded(root: Path) -> MemoryStore:
    """A store whose files span several blocks, so partial persistence can tear them."""
    store = MemoryStore(root, clock=lambda: DAY)
    store.initialize("s-seed")
    for i in range(60):
        store.save_semantic(
            f"Rule number {i} about module {i} says keep the interface stable "
            f"and document every change {'x' * 40}",
            "quality_rule",
            0.9,
        )
    for i in range(40):
        store.save_episodic(f"Session work item {i} " + "y" * 80, f"s{i}", 0.8)
    store.save_semantic("JWT with 15min expiry", "architecture_decision", 1.0)
    store.save_semantic(FLAGGED, "quality_rule", 0.1)  # flagged
    return store


def _next_day(store: MemoryStore) -> MemoryStore:
    store.clock = lambda: NEXT_DAY
    return store


def _entry_id(store: MemoryStore, text: str) -> str:
    return next(e.id for e in store.semantic_entries() if e.text == text)


SHAPES: dict[str, list[Callable[[MemoryStore], object]]] = {
    # One file: a new fact changes semantic.md only (no intent file).
    "one_file": [lambda s: s.save_semantic("Deploys go through staging", "project_context", 0.9)],
    # Several files with the intent file: a replacement rewrites semantic.md and archive.md.
    "several_files_intent": [
        lambda s: s.save_semantic("JWT with 30min expiry", "architecture_decision", 1.0)
    ],
    # The archive: maintenance moves an entry from semantic.md into archive.md.
    "archive": [lambda s: s.memory_maintenance({_entry_id(s, FLAGGED): "archive"})],
    # The sidecar state: the first session of a new day writes .state.json and the files it
    # decays (decay_unit "day": a later session of the same day would write the ledger only).
    "sidecar_state": [lambda s: _next_day(s).initialize("s-new-session")],
    # Two acknowledged commits in a row: the first is never lost while the second runs.
    "two_commits": [
        lambda s: s.save_semantic("Deploys go through staging", "project_context", 0.9),
        lambda s: s.save_semantic("JWT with 30min expiry", "architecture_decision", 1.0),
    ],
}

EXPECTED_FILES = {
    "one_file": {"semantic.md"},
    "several_files_intent": {"semantic.md", "archive.md", fsio.INTENT_FILE},
    "archive": {"semantic.md", "archive.md", fsio.INTENT_FILE},
    "sidecar_state": {".state.json", "semantic.md", "episodic.md", fsio.INTENT_FILE},
}

COUNTS: dict[str, tuple[int, int]] = {}


@pytest.fixture(scope="module")
def seed_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crash-seed")
    seeded(root)
    return root


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_crash_state_recovers_to_one_whole_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_dir: Path, shape: str
) -> None:
    shutil.copytree(seed_dir, tmp_path / "live", symlinks=True)
    store = MemoryStore(tmp_path / "live", clock=lambda: DAY)
    old = snapshot(store.memory_dir)
    assert len(old["semantic.md"]) > 3 * BLOCK  # partial persistence can tear it
    versions = [content(old)]
    recorder = Recorder()
    recorder.install(monkeypatch)
    ends: list[int] = []  # index in ops after which each commit had returned
    for step in SHAPES[shape]:
        step(store)
        ends.append(len(recorder.ops))
        versions.append(content(snapshot(store.memory_dir)))
    monkeypatch.undo()
    ops = recorder.ops
    assert len(set(versions)) == len(versions), "each step must change the files"
    touched = {op.b for op in ops if op.kind == "rename"}
    if shape in EXPECTED_FILES:
        assert EXPECTED_FILES[shape] <= touched, (shape, touched)
        assert all(t in EXPECTED_FILES[shape] for t in touched), (shape, touched)

    # Sanity of the model: replaying every operation durably gives the real final directory.
    final = list(crash_states(old, ops, len(ops)))
    assert final, "no state at the end"
    real_final = snapshot(store.memory_dir)
    full = [s for s in final if content(s) == content(real_final)]
    assert full, "the model's fully persisted state is not the real directory"

    seen: set[tuple[tuple[str, bytes], ...]] = set()
    generated = 0
    work = tmp_path / "state"
    for k in range(len(ops) + 1):
        acked = sum(1 for end in ends if end <= k)  # commits returned before the crash
        allowed = {versions[acked]} | ({versions[acked + 1]} if acked < len(ends) else set())
        for state in crash_states(old, ops, k):
            generated += 1
            key = tuple(sorted(state.items()))
            if key in seen:
                continue
            seen.add(key)
            got = recover_state(work, state)
            if got not in allowed:
                which = [
                    name
                    for name, g, o in zip(READ_NAMES, got, versions[acked], strict=True)
                    if g != o
                ]
                pytest.fail(
                    f"{shape}: crash after op {k}/{len(ops)} ({ops[k - 1].kind if k else '-'}) "
                    f"recovered to neither the acknowledged nor the new version; differs in "
                    f"{which}; state files {sorted(state)}"
                )
    COUNTS[shape] = (generated, len(seen))
    print(
        f"\ncrash states [{shape}]: {len(ops)} operations, {generated} states generated, "
        f"{len(seen)} distinct states recovered and checked"
    )
    assert len(seen) > len(ops)  # the enumeration explored more than the crash points


def test_an_intent_with_absolute_paths_still_recovers_after_the_project_moved(
    tmp_path: Path,
) -> None:
    """Intents written before they held names named absolute paths; a project moved after a
    crash must still be rolled forward (by name), never half-applied."""
    memory_dir = tmp_path / "moved" / ".maestro" / "memory"
    memory_dir.mkdir(parents=True)
    elsewhere = tmp_path / "original" / ".maestro" / "memory"
    (memory_dir / "semantic.md").write_text("old semantic\n")
    (memory_dir / "archive.md").write_text("old archive\n")
    (memory_dir / ".semantic.md.tmp-1-aa").write_text("new semantic\n")
    (memory_dir / ".archive.md.tmp-1-bb").write_text("new archive\n")
    renames = [
        [str(elsewhere / ".semantic.md.tmp-1-aa"), str(elsewhere / "semantic.md")],
        [str(elsewhere / ".archive.md.tmp-1-bb"), str(elsewhere / "archive.md")],
        [str(elsewhere / ".evil.tmp-1-cc"), str(elsewhere / ".lock")],  # never onto the lock
    ]
    (memory_dir / fsio.INTENT_FILE).write_text(json.dumps({"renames": renames}))
    (memory_dir / ".evil.tmp-1-cc").write_text("not a lock")
    (memory_dir / ".lock").write_text("")
    with fsio.open_folder(memory_dir) as folder, fsio.project_lock(folder):
        actions = fsio.recover(folder)
    assert (memory_dir / "semantic.md").read_text() == "new semantic\n"
    assert (memory_dir / "archive.md").read_text() == "new archive\n"
    assert (memory_dir / ".lock").read_text() == ""
    assert sorted(os.listdir(memory_dir)) == [".lock", "archive.md", "semantic.md"]
    assert "completed interrupted write of semantic.md" in actions
