"""core.search: BM25 over the one tokeniser, entries in, ranked (entry, score) out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maestro_memory.core.model import Entry
from maestro_memory.core.search import query_terms, search, terms


def sem(i: int, text: str, category: str = "project_context") -> Entry:
    return Entry(
        id=f"s-{i:08x}",
        sector="semantic",
        text=text,
        confidence=0.9,
        date="2026-12-03",
        state="active",
        original_confidence=0.9,
        category=category,
    )


def epi(i: int, text: str, session: str) -> Entry:
    return Entry(
        id=f"e-{i:08x}",
        sector="episodic",
        text=text,
        confidence=0.7,
        date="2026-12-03",
        state="active",
        original_confidence=0.7,
        salience=1.0,
        session_id=session,
    )


ENTRIES = [
    sem(1, "Always run the tests before committing", "quality_rule"),
    sem(2, "JWT auth with 15 min expiry, refresh token in an HttpOnly cookie"),
    sem(3, "Supabase Auth chosen over Auth0 for cost and integration"),
    sem(4, "CI runs on GitHub Actions and must pass before merge"),
    epi(5, "Fixed the flaky upload test by waiting on the progress event", "sess-42"),
]


def ids(results: list[tuple[Entry, float]]) -> list[str]:
    return [e.id for e, _ in results]


def test_more_matching_words_rank_first_and_scores_are_positive() -> None:
    results = search(ENTRIES, "auth cookie")
    assert ids(results) == ["s-00000002", "s-00000003"]
    assert results[0][1] > results[1][1] > 0


def test_stemming_matches_word_forms() -> None:
    assert ids(search(ENTRIES, "committed")) == ["s-00000001"]
    assert set(ids(search(ENTRIES, "testing"))) == {"s-00000001", "e-00000005"}


def test_category_and_session_are_searchable_but_weigh_less() -> None:
    assert ids(search(ENTRIES, "quality")) == ["s-00000001"]
    assert ids(search(ENTRIES, "sess-42")) == ["e-00000005"]
    both = [sem(10, "quality of the build output"), sem(11, "unrelated", "quality_rule")]
    assert ids(search(both, "quality")) == ["s-0000000a", "s-0000000b"]


@pytest.mark.parametrize(
    "query", ['"', "AND", "NEAR(", "auth*", "-auth", "a:b", "(((", "^", "'; DROP TABLE doc; --"]
)
def test_query_syntax_is_never_interpreted(query: str) -> None:
    results = search(ENTRIES, query)  # no FTS5 syntax error, whatever was typed
    for entry, _ in results:
        assert set(query_terms(query)) & set(terms(entry.text) + terms(entry.category or ""))


def test_empty_query_limits_and_input_order() -> None:
    assert search(ENTRIES, "") == []
    assert search(ENTRIES, "  ... !!! ") == []
    assert search([], "auth") == []
    assert search(ENTRIES, "auth", limit=0) == []
    assert len(search(ENTRIES, "auth", limit=1)) == 1
    assert len(search(ENTRIES, "the", limit=None)) == 2  # every match: 1 and 5
    twins = [sem(20, "deploy on friday"), sem(21, "deploy on friday")]
    assert ids(search(twins, "deploy")) == ["s-00000014", "s-00000015"]  # ties: input order
    with pytest.raises(ValueError, match="limit"):
        search(ENTRIES, "auth", limit=-1)


def test_a_compound_is_found_by_its_parts() -> None:
    expected = ["user_preference", "user", "preference", "auth"]
    assert query_terms("user_preference AUTH auth") == expected
    hooks = [sem(30, "Run the pre-commit hooks before pushing"), sem(31, "Push on green")]
    assert ids(search(hooks, "commit")) == ["s-0000001e"]


def test_a_non_ascii_word_is_found() -> None:
    found = [
        sem(40, "Verwende Umlaute für Ü-Tests"),
        sem(41, "Используй pnpm"),
        sem(42, "包管理器"),
    ]
    assert ids(search(found, "ü-tests")) == ["s-00000028"]
    assert ids(search(found, "Tests")) == ["s-00000028"]  # a compound's part
    assert ids(search(found, "используй")) == ["s-00000029"]
    assert ids(search(found, "管理")) == ["s-0000002a"]  # Han: one character a word


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_is_a_valid_query(query: str) -> None:
    results = search(ENTRIES, query)
    assert all(score > 0 for _, score in results)
    assert len(set(ids(results))) == len(results)
