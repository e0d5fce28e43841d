"""The judged form of a text (``lexicon.normalise``) and the rule parse behind contradiction
and the write path's pre-filter run in linear time on any entry a person may paste or a file
may hold, and the linear dash pattern gives exactly what the original expression gave.

Seen in the file fuzzer: one entry with a 200,000-space run made ``save_semantic`` spend an
hour in ``_DASH`` (``\\s*`` tried at every position of the run), so the write path hung.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro_memory.core import lexicon
from maestro_memory.core.related import may_relate
from maestro_memory.core.rule_reading import parse_rule

OLD_DASH = re.compile(r"\s*[\u2013\u2014\u2015]+\s*|\s+--\s+")

PIECES = st.sampled_from([" ", "  ", "\t", "\u2014", "\u2013", "\u2015", "--", "-", "a", "word"])


@settings(max_examples=1000, deadline=None)
@given(text=st.lists(PIECES, max_size=16).map("".join))
def test_the_dash_pattern_agrees_with_the_original_expression(text: str) -> None:
    assert lexicon._DASH.sub(" - ", text) == OLD_DASH.sub(" - ", text)


LONG_LINES: list[Callable[[int], str]] = [
    lambda n: "x" + " " * n + "y",  # the fuzzer's case
    lambda n: " " * n + "-- " + " " * n,
    lambda n: "**a " * (n // 4),  # emphasis openers without a closer
    lambda n: "*a " * (n // 3),
    lambda n: "__a " * (n // 4),
    lambda n: "x \u2014" * (n // 3),
    lambda n: "[a" * (n // 2),
    lambda n: "`a" * (n // 2),
    lambda n: "word\n" * (n // 5),  # continued lines
]


@pytest.mark.parametrize("make", LONG_LINES)
def test_judging_a_huge_entry_is_linear(make: Callable[[int], str]) -> None:
    text = make(50_000)
    started = time.monotonic()
    judged = lexicon.normalise(text)
    assert len(judged) <= len(text) * 3
    parse_rule(text)
    assert may_relate("use pnpm", [("s-1", text)]) in ([], [("s-1", text)])
    # A hang guard, not a speed test: the quadratic dash pattern took minutes at this size
    # (26 s at 20,000 spaces, four times that per doubling).
    assert time.monotonic() - started < 120


def test_emphasis_is_still_stripped() -> None:
    assert lexicon.normalise("**Always** use _pnpm_, not *npm*") == "Always use pnpm, not npm"
