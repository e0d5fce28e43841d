"""core.context.semantic_band: the page's band label follows the build's own thresholds."""

from __future__ import annotations

import pytest

from maestro_memory.core.context import Candidate, ContextIndex, semantic_band


@pytest.mark.parametrize(
    ("confidence", "band"),
    [
        (1.0, "always"),
        (0.71, "always"),
        (0.7, "relevant"),
        (0.4, "relevant"),
        (0.39, "queried"),
        (0.2, "queried"),
        (0.19, "flagged"),
        (0.01, "flagged"),
        (0.0, "contradicted"),
    ],
)
def test_bands(confidence: float, band: str) -> None:
    assert semantic_band(confidence) == band


@pytest.mark.parametrize("confidence", [0.0, 0.1, 0.2, 0.3, 0.4, 0.55, 0.7, 0.75, 1.0])
def test_band_agrees_with_what_the_build_includes(confidence: float) -> None:
    entry = [Candidate("s-1", "deploy the staging slot first", confidence)]

    def included(task: str | None, query: str | None) -> bool:
        result = ContextIndex(entry, []).build(task, query, 500, "relevant")
        return result.included == ["s-1"]

    band = semantic_band(confidence)
    assert included(None, None) == (band == "always")
    assert included("staging deploy", None) == (band in ("always", "relevant"))
    assert included(None, "staging") == (band in ("always", "relevant", "queried"))
