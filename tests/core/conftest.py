"""Fixtures shared by the core tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from maestro_memory.core import frame


@pytest.fixture
def meaning_layer() -> Iterator[None]:
    """The meaning layer on, as the daemon saves and as ``python -m bench.replay`` runs; both
    of ``frame``'s globals put back afterwards, so no later test inherits it."""
    previous = frame._similar, frame._batched
    frame.use_meaning()
    yield
    frame._similar, frame._batched = previous
