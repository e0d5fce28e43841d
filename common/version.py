"""The installed package's version (``maestroctl --version``, the daemon's hello, the MCP
server), read from the package metadata."""

from __future__ import annotations

from functools import cache
from importlib import metadata

DIST = "maestro-agent-memory"


@cache  # the version of the code this process runs: read once (the hello of every session)
def package_version() -> str:
    try:
        return metadata.version(DIST)
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"
