"""A writer process for the reliability tests: writes until told to stop, reports each ack.

    rel_worker.py MODE PROJECT WORKER COUNT TIMEOUT STOP_FILE

MODE ``daemon``: the real ``Client(project, require_daemon=True)``; a daemon that dies is
tolerated (``MaestroError`` is caught, the worker waits for a daemon to hold the lock again and
goes on). MODE ``direct``: ``Client(project, direct=True)`` (no daemon, the lock protocol).

Write ``i`` of worker ``w`` is ``save_semantic("w{w}a{i} w{w}b{i} w{w}c{i}")``: its tokens are
shared with no other fact, so the core never classifies two of them as duplicate or
contradiction. Every acknowledged write is printed as ``{"ack": {...}}`` (only after the call
returned, i.e. after the daemon said it is durable); a failed one as ``{"err": code}``. A
write whose reply never came is not reported as acked: it may or may not be on disk.

COUNT < 0: until STOP_FILE exists; else at most COUNT writes (also stopping at STOP_FILE).
"""

from __future__ import annotations

import json
import os
import sys
import time

from maestro_memory.client import Client
from maestro_memory.client.errors import DaemonUnavailable, MaestroError

CATEGORIES = ("user_preference", "architecture_decision", "quality_rule", "project_context")


def emit(record: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def main() -> int:
    import rel_trace  # next to this file

    rel_trace.install_from_env()
    mode, project, worker_s, count_s, timeout_s, stop_file = sys.argv[1:7]
    worker, count, timeout = int(worker_s), int(count_s), float(timeout_s)
    if mode == "daemon":
        client = Client(project, require_daemon=True, timeout=timeout, retries=0)
    elif mode == "direct":
        client = Client(project, direct=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    i = 0
    while (count < 0 or i < count) and not os.path.exists(stop_file):
        fact = f"w{worker}a{i} w{worker}b{i} w{worker}c{i}"
        category = CATEGORIES[(worker + i) % len(CATEGORIES)]
        try:
            result = client.save_semantic(fact, category, 0.9)
        except DaemonUnavailable as exc:
            emit({"err": exc.code})
            # The daemon died (or is restarting): wait until one holds the lock again.
            while not client.daemon_running() and not os.path.exists(stop_file):
                time.sleep(0.01)
        except MaestroError as exc:
            emit({"err": exc.code})
        else:
            entry = result.get("entry") or {}
            emit(
                {
                    "ack": {
                        "w": worker,
                        "i": i,
                        "fact": fact,
                        "category": category,
                        "action": result.get("action"),
                        "id": entry.get("id"),
                        "via": client.last_via,
                    }
                }
            )
        i += 1
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
