"""The README's install commands, run as printed: ``pipx install`` and ``uv tool install``, from
a checkout and from a built wheel, with the ``mcp`` extra.

Each installs into folders of its own (``PIPX_HOME``/``PIPX_BIN_DIR``, ``UV_TOOL_DIR``/
``UV_TOOL_BIN_DIR``), so nothing of the real user's tools is touched. What it checks is what the
agent tools need from such an install: ``maestroctl`` on that bin folder, its version the
distribution's, and ``maestroctl mcp`` answering (the extra came along).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .support import REPO, clean_env, only, project_version
from .test_installed_smoke import TIMEOUT, _read_line

INSTALL_TIMEOUT = 900.0


def _tool(name: str) -> str:
    """pipx and uv come with the test extra, beside this interpreter."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed (it is in the 'test' extra)"
    return found


def _install(installer: str, source: str, cwd: Path, tmp: Path) -> Path:
    bin_dir = tmp / "bin"
    env = clean_env(HOME=str(tmp / "home"))
    (tmp / "home").mkdir()
    if installer == "pipx":
        env.update(PIPX_HOME=str(tmp / "pipx"), PIPX_BIN_DIR=str(bin_dir))
        env["PIPX_MAN_DIR"] = str(tmp / "man")
        argv = [_tool("pipx"), "install", source]
    else:
        env.update(UV_TOOL_DIR=str(tmp / "uv-tools"), UV_TOOL_BIN_DIR=str(bin_dir))
        env["UV_PYTHON_DOWNLOADS"] = "never"  # an interpreter of this machine, none downloaded
        # uv's cache stays the user's (a cache only: it speeds up a second run).
        env["UV_CACHE_DIR"] = os.environ.get("UV_CACHE_DIR", str(Path.home() / ".cache" / "uv"))
        argv = [_tool("uv"), "tool", "install", source]
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"{' '.join(argv)}:\n{done.stdout}\n{done.stderr}"
    return bin_dir


def _checkout(dest: Path) -> Path:
    """A fresh checkout of this tree: its tracked and new (not ignored) files, copied. The
    installers build in the source folder; a copy keeps their ``build/`` and ``*.egg-info``
    out of the repository, and a stale ``build/lib`` of an earlier layout out of the wheel."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
        timeout=TIMEOUT,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _pip_wheel(checkout: Path, out: Path) -> Path:
    """``python3 -m pip wheel --no-deps -w dist .`` in the checkout, as the README says."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), "."],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return only(out, "maestro_agent_memory-*.whl")


@pytest.mark.parametrize("installer", ["pipx", "uv"])
@pytest.mark.parametrize("origin", ["checkout", "wheel"])
def test_the_readme_install_command_gives_a_working_maestroctl(
    installer: str, origin: str, tmp_path: Path
) -> None:
    # The README's words: '.' in the checkout, or a wheel from 'pip wheel'.
    checkout = _checkout(tmp_path / "checkout")
    if origin == "checkout":
        bin_dir = _install(installer, ".", checkout, tmp_path)
    else:
        built = _pip_wheel(checkout, tmp_path / "dist")
        bin_dir = _install(installer, str(built), tmp_path, tmp_path)
    maestroctl = bin_dir / "maestroctl"
    assert maestroctl.exists() and (bin_dir / "maestrod").exists()

    project = tmp_path / "project"
    project.mkdir()
    env = clean_env(HOME=str(tmp_path / "home"), MAESTRO_HOME=str(tmp_path / "maestro"))
    version = subprocess.run(
        [str(maestroctl), "--version"], env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert version.stdout == f"maestroctl {project_version()}\n", version.stderr
    init = subprocess.run(
        [str(maestroctl), "-C", str(project), "init"],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert init.returncode == 0, init.stderr
    assert (project / ".maestro" / "memory" / "semantic.md").is_file()

    mcp = subprocess.Popen(
        [str(maestroctl), "-C", str(project), "mcp"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert mcp.stdin is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "install-paths", "version": "1"},
            },
        }
        mcp.stdin.write(json.dumps(hello) + "\n")
        mcp.stdin.flush()
        reply = json.loads(_read_line(mcp, time.monotonic() + TIMEOUT))
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["version"] == project_version()
    finally:
        if mcp.stdin:
            mcp.stdin.close()
        try:
            mcp.wait(timeout=TIMEOUT)
        finally:
            if mcp.poll() is None:
                mcp.kill()
