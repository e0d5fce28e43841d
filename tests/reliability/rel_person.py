"""A person editing semantic.md by hand while the tools write, WITHOUT the lock.

    rel_person.py SEMANTIC_MD APPENDS EDIT_EVERY PACE_SECONDS

* appends: ``- [2026-01-05] [1.00] person p{i}a p{i}b p{i}c`` as one ``write()`` on an
  ``O_APPEND`` descriptor (an append is atomic: it can land before or after a rename, never
  inside a file's bytes), under ``## Project Context``, the last section of the file;
* every EDIT_EVERY appends, an edit of an earlier line of its own (``p{k}b`` becomes
  ``edited p{k}x``), the way an editor saves: read the file, write a new file beside it,
  rename it over the original. Like vim's "file changed since reading it" warning, the editor
  looks at the file (inode, size, mtime) right before the rename and starts again from a fresh
  read if it changed.

Each operation is printed as a JSON line with its vulnerable interval in
``time.monotonic_ns()``: an append from before ``open`` to after ``close``; an edit from
before its last look at the file to after its rename.
"""

from __future__ import annotations

import json
import os
import sys
import time


def stat_of(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def line(i: int) -> str:
    return f"person p{i}a p{i}b p{i}c"


def edited(i: int) -> str:
    return f"person p{i}a edited p{i}x p{i}c"


def emit(record: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def edit(path: str, k: int) -> None:
    swap = os.path.join(os.path.dirname(path), ".semantic.md.swp-person")  # not a tool temp
    for attempt in range(1, 50):
        before = stat_of(path)
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
        if line(k) not in text:
            emit({"kind": "edit", "k": k, "missing": True})
            return
        with open(swap, "w", encoding="utf-8", newline="") as f:
            f.write(text.replace(line(k), edited(k), 1))
            f.flush()
            os.fsync(f.fileno())
        t0 = time.monotonic_ns()
        if stat_of(path) != before:
            os.unlink(swap)
            continue  # "the file has changed since reading it": start again
        os.replace(swap, path)
        t1 = time.monotonic_ns()
        emit({"kind": "edit", "k": k, "t0": t0, "t1": t1, "attempts": attempt})
        return
    emit({"kind": "edit", "k": k, "gave_up": True})


def main() -> int:
    path, appends_s, edit_every_s, pace_s = sys.argv[1:5]
    appends, edit_every, pace = int(appends_s), int(edit_every_s), float(pace_s)
    for i in range(appends):
        data = f"- [2026-01-05] [1.00] {line(i)}\n".encode()
        t0 = time.monotonic_ns()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            assert os.write(fd, data) == len(data)
        finally:
            os.close(fd)
        t1 = time.monotonic_ns()
        emit({"kind": "append", "i": i, "t0": t0, "t1": t1})
        time.sleep(pace)  # a person's pace, not a synchronisation
        if i % edit_every == edit_every - 1 and i >= 3:
            edit(path, i - 3)
            time.sleep(pace)
    emit({"kind": "done"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
