"""What ``python -m build`` makes from this checkout is the whole package, and nothing else.

A hand-kept package list once left ``client/commands/`` out of the wheel (every command but
``--version`` failed for anyone who installed it). Here the wheel is compared with the
checkout's folders, file by file, so a new subpackage or data file cannot be left out again.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from .support import (
    PACKAGE,
    REPO,
    build_dists,
    distribution_name,
    expected_wheel_files,
    only,
    project_version,
    shipped_roots,
    wheel_digests,
    wheel_files,
)


def test_the_wheel_holds_every_file_of_every_package_folder(wheel: Path) -> None:
    expected = expected_wheel_files()
    got = wheel_files(wheel)
    assert not expected - got, f"missing from the wheel: {sorted(expected - got)}"
    assert not got - expected, (
        f"in the wheel but not in the package folders: {sorted(got - expected)}"
    )


def test_the_expected_list_covers_the_parts_a_user_needs() -> None:
    """Guards the guard: the comparison above would pass on an empty checkout."""
    assert {"core", "common", "daemon", "client", "ui", "systemd", "launchd"} <= set(
        shipped_roots()
    )
    files = expected_wheel_files()
    for needed in (
        "client/__init__.py",
        "daemon/__main__.py",
        "systemd/maestrod.service",
        "launchd/com.maestro.memory.plist",
        "ui/static/index.html",
        "ui/static/app.js",
        "core/meaning/data/vectors.npy",  # the meaning model, with its licence and notice
        "core/meaning/data/LICENSE",
        "core/meaning/data/NOTICE",
    ):
        assert f"{PACKAGE}/{needed}" in files, needed
    assert any(name.startswith(f"{PACKAGE}/client/") and name.count("/") >= 3 for name in files), (
        "expected at least one subpackage under client/"
    )


def test_the_wheel_declares_both_commands_and_the_extras(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        info = next(n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt"))
        entry_points = zf.read(info).decode()
        meta = zf.read(info.replace("entry_points.txt", "METADATA")).decode()
    assert "maestroctl = maestro_memory." in entry_points
    assert "maestrod = maestro_memory.daemon.__main__:main" in entry_points
    assert f"Name: {distribution_name()}\n" in meta
    assert f"Version: {project_version()}\n" in meta
    for extra in ("ui", "mcp"):
        assert f"Provides-Extra: {extra}\n" in meta


def test_the_wheel_is_named_for_our_distribution(wheel: Path, sdist: Path) -> None:
    stem = distribution_name().replace("-", "_")
    assert wheel.name == f"{stem}-{project_version()}-py3-none-any.whl"
    assert sdist.name == f"{stem}-{project_version()}.tar.gz"


def test_the_sdist_builds_the_same_wheel_as_the_checkout(wheel: Path, tmp_path: Path) -> None:
    """``dists``' wheel was built from the sdist; one built straight from the tree must match."""
    build_dists(tmp_path, "--wheel")
    direct = only(tmp_path, "*.whl")
    assert wheel_digests(direct) == wheel_digests(wheel)


def test_twine_accepts_both_distributions(wheel: Path, sdist: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_sdist_carries_what_the_build_needs(sdist: Path) -> None:
    import tarfile

    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for needed in ("pyproject.toml", "setup.py", "README.md", "ui/static/index.html"):
        assert needed in names, f"{needed} missing from {sdist.name}"
    assert (REPO / "setup.py").is_file()
