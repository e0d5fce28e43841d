"""TEST STAND-IN: record when each commit is vulnerable to a write made without the lock.

``install(path)`` wraps ``fsio.commit`` in this process: a commit with an ``unchanged`` check
records ``start end pid`` (``time.monotonic_ns()``, one clock for every process of the
machine) from just before the check to just after its last rename: the only stretch in which a
person's unlocked write can still be overwritten (before it the check sees the write and the
commit is re-applied to it; after it the write lands on the new file). A commit without a check
records its whole call and is marked ``unchecked``. Used by the daemon (``faulty_maestrod.py``)
and the direct-mode workers (``rel_worker.py``) when ``MAESTRO_TRACE_WINDOWS`` names a file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from maestro_memory.core import fsio

ENV = "MAESTRO_TRACE_WINDOWS"


def install(path: str) -> None:
    original = fsio.commit

    def traced(
        folder: fsio.Folder,
        files: Mapping[str, bytes],
        *,
        unchanged: Callable[[], bool] | None = None,
    ) -> Any:
        started: list[int] = []

        def check() -> bool:
            started.append(time.monotonic_ns())
            assert unchanged is not None
            return unchanged()

        whole = time.monotonic_ns()
        try:
            return original(folder, files, unchanged=check if unchanged else None)
        finally:
            end = time.monotonic_ns()
            kind = "checked" if unchanged is not None else "unchecked"
            start = started[-1] if started else whole
            if files and (started or unchanged is None):
                with open(path, "a", encoding="utf-8") as f:
                    f.write(f"{start} {end} {os.getpid()} {kind}\n")

    fsio.commit = traced  # type: ignore[assignment]


def install_from_env() -> None:
    if os.environ.get(ENV):
        install(os.environ[ENV])


def read(path: Path) -> list[tuple[int, int, str]]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for line in lines:
        start, end, _, kind = line.split()
        out.append((int(start), int(end), kind))
    return out
