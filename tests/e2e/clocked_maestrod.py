"""TEST STAND-IN: ``maestrod`` whose calendar day is read from a file (days cannot pass in a
test run, and ``decay_unit = "day"`` ages memory once per calendar day with a session).

The daemon asks ``core.store.today`` for the day (the writer imports it by name, and
``MemoryStore``'s ``clock`` defaults to it). This wrapper points all three at a function that
reads ``MAESTRO_E2E_TODAY`` (the path of a file holding an ISO date, which the test rewrites
to move the clock), then runs the real ``maestro_memory.daemon.__main__.main``. Nothing else
is changed; the hooks and ``maestroctl`` processes talk to it as to any daemon.

Started as ``python clocked_maestrod.py <python> -m maestro_memory.daemon`` (the
``argv_prefix`` of the ``daemon_factory`` fixture); the trailing arguments are ignored.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

ENV = "MAESTRO_E2E_TODAY"


def fake_today() -> str:
    return dt.date.fromisoformat(Path(os.environ[ENV]).read_text().strip()).isoformat()


def install() -> None:
    from maestro_memory.core import store
    from maestro_memory.daemon import writer

    store.today = fake_today
    writer.today = fake_today  # type: ignore[attr-defined]
    defaults = store.MemoryStore.__init__.__kwdefaults__
    assert defaults is not None and "clock" in defaults
    defaults["clock"] = fake_today


if __name__ == "__main__":
    install()
    from maestro_memory.daemon.__main__ import main

    sys.exit(main([]))
