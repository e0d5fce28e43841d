"""A prompt's detection runs on an analysis thread, off the writer (issue 36): over the real
socket, the daemon saves what direct mode saves for the same prompts, and replies the same."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from maestrod_testkit import DaemonHandle

from maestro_memory.common.ops import DirectBackend, dispatch_memory_op
from maestro_memory.core import MemoryStore

ENTRY_ID = re.compile(r"\b[se]-[0-9a-f]{8}\b")
PROMPTS = [
    ("I prefer tabs over spaces in this repo", "ok"),
    ("From now on always use pnpm, never npm", "Understood."),
    ("Fix the flaky login test please", "Done."),
    ("Actually, switch to bun instead of pnpm from now on", "Switched."),
    ("Never deploy on Fridays. Also the API lives in services/api.", "Noted."),
    ("my api key is sk-live-1234567890abcdefghijklmnop, remember it", "No."),
]


def _without_ids(value: Any) -> Any:
    """The reply with the generated entry ids (``s-…``, wherever they appear) blanked."""
    if isinstance(value, dict):
        return {k: _without_ids(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_ids(v) for v in value]
    if isinstance(value, str):
        return ENTRY_ID.sub("<id>", value)
    return value


def _saved(project: Path) -> list[tuple[str, str | None, float, str]]:
    return [
        (e.text, e.category, e.confidence, e.state) for e in MemoryStore(project).semantic_entries()
    ]


def test_detection_off_the_writer_saves_what_direct_mode_saves(
    daemon: DaemonHandle, tmp_path: Path
) -> None:
    served, direct = tmp_path / "served", tmp_path / "direct"
    for root in (served, direct):
        root.mkdir()
    daemon.register(served)
    backend = DirectBackend()
    for user, assistant in PROMPTS:
        args = {"user_message": user, "assistant_response": assistant}
        by_daemon = daemon.result("detect_signals", served, **args)
        in_process = dispatch_memory_op(backend, "detect_signals", direct, dict(args))
        assert _without_ids(by_daemon) == _without_ids(in_process), user
    assert _saved(served) == _saved(direct)
    assert any(text.startswith("Prefers tabs") for text, *_ in _saved(served))
