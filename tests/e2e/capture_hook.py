"""A hook command that records what the agent CLI passed, then runs the real hook.

``python capture_hook.py LOG TAG [-- COMMAND ...]``: appends one JSON line to LOG with TAG, the
hook's stdin (parsed when it is JSON), its argv and a few environment variables, runs COMMAND
(if given) with the same stdin, records its stdout and exit code too, and passes both through.
Used by the e2e tests to capture the real payloads each CLI sends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    log, tag = argv[0], argv[1]
    command = argv[3:] if len(argv) > 2 and argv[2] == "--" else []
    raw = sys.stdin.buffer.read()
    try:
        payload: object = json.loads(raw)
    except ValueError:
        payload = raw.decode("utf-8", "replace")
    started = time.monotonic()
    out, code = b"", 0
    if command:
        done = subprocess.run(command, input=raw, stdout=subprocess.PIPE)
        out, code = done.stdout, done.returncode
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLAUDE", "CODEX", "GEMINI"))}
    record = {
        "tag": tag,
        "payload": payload,
        "cwd": os.getcwd(),
        "env": env,
        "stdout": out.decode("utf-8", "replace"),
        "exit": code,
        "seconds": round(time.monotonic() - started, 3),
    }
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.buffer.write(out)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
