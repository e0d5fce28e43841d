"""Shared fixtures: a private ``MAESTRO_HOME`` and a real ``maestrod`` talking over its socket.

``daemon`` starts ``python -m maestro_memory.daemon`` as a subprocess, waits (with a deadline,
not a sleep) until a raw DEALER ``hello`` is answered, and stops it with SIGTERM afterwards.
``daemon_factory`` starts more (or differently configured) daemons. The helpers (the
``DaemonHandle`` with ``.request``/``.result``/``.register``, ``wait_for`` …) live in
``tests/daemon/maestrod_testkit.py``; they speak protocol v1 directly over pyzmq, on purpose
independent of the client library.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "daemon"))

from maestrod_testkit import (
    DaemonFactory,
    DaemonHandle,
    spawn_daemon,
    wait_ready,
)

from maestro_memory.common import paths as daemon_paths


@pytest.fixture
def maestro_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private MAESTRO_HOME for this test (also set in ``os.environ``)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MAESTRO_HOME", str(home))
    return home


@pytest.fixture
def daemon_factory(maestro_home: Path) -> Iterator[DaemonFactory]:
    """``start(home=None, env=None, config=None, wait=True, argv_prefix=None, python=None)`` ->
    DaemonHandle; all stopped at teardown. ``config`` is TOML text written to ``config.toml``
    before the start; ``python`` runs another interpreter's installed maestrod."""
    started: list[DaemonHandle] = []

    def start(
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        config: str | None = None,
        wait: bool = True,
        argv_prefix: list[str] | None = None,
        python: str | None = None,
    ) -> DaemonHandle:
        home = home or maestro_home
        paths = daemon_paths.resolve({"MAESTRO_HOME": str(home)})
        if config is not None:
            paths.config_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            paths.config_path.write_text(config)
        proc, stderr_path, full_env = spawn_daemon(home, env, argv_prefix, python)
        handle = DaemonHandle(
            home=home, paths=paths, proc=proc, env=full_env, stderr_path=stderr_path
        )
        started.append(handle)
        if wait:
            wait_ready(handle)
        return handle

    yield start
    for handle in started:
        handle.stop()
        fallback = handle.paths.socket_path.parent
        if fallback != handle.paths.runtime_dir:
            with contextlib.suppress(OSError):
                fallback.rmdir()  # the short /tmp/maestro-<uid>/<hash> dir, if empty


@pytest.fixture
def daemon(daemon_factory: DaemonFactory) -> DaemonHandle:
    """A running maestrod on this test's MAESTRO_HOME."""
    return daemon_factory()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory (not registered)."""
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 256 KiB tmpfs, for full-disk tests (root only; skipped with the reason else)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
