"""``maestroctl mcp`` without the optional SDK: it says how to install it and exits 1."""

from __future__ import annotations

import os
from pathlib import Path

from .support import run_cli


def test_without_the_sdk_it_says_how_to_install(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "blocker" / "mcp"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text(
        'raise ImportError("No module named \'mcp\' (blocked by the test)", name="mcp")\n'
    )
    env = dict(os.environ, PYTHONPATH=str(blocker.parent))
    proc = run_cli(["mcp"], cwd=project, env=env)
    assert proc.returncode == 1
    assert b"pip install 'maestro-agent-memory[mcp]'" in proc.stderr
    assert proc.stdout == b""
