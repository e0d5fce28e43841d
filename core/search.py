"""Full-text search over memory entries: entries in, ranked ``(entry, score)`` out.

One ranking for every place that searches (``maestroctl ui`` now; ``maestroctl search`` and the
MCP ``search`` tool are meant to call the same function). It is BM25 as SQLite's FTS5 computes
it, over an in-memory index built from the entries given -- nothing is stored, nothing is read
from disk, so the function is pure apart from the throw-away database.

* **Tokens**: FTS5's ``unicode61`` tokeniser (case- and diacritic-folded) with the Porter
  stemmer, so "tests" finds "testing".
* **Query**: free text, never FTS5 syntax. Each word of the query is quoted and the words are
  OR-ed, so punctuation, ``AND``/``NEAR``/``*`` or a stray quote in what a person typed cannot
  raise a syntax error or change the meaning; entries matching more words rank higher (BM25).
* **Fields**: the entry's text, and its category (semantic) or session id (episodic) at a
  tenth of the weight, so ``quality`` finds the quality rules without outranking a text match.
* **Score**: ``-bm25`` (bigger is better, always > 0 for a match). Ties keep the input order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from .model import Entry

# A word of the query: letters and digits (any script); everything else separates words.
_WORD = re.compile(r"\w+", re.UNICODE)
DEFAULT_LIMIT = 20


def query_terms(query: str) -> list[str]:
    """The words of ``query`` that the search matches on, lower-cased, without repeats."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        phrase = " ".join(word.replace("_", " ").split())  # snake_case: a two-word phrase
        if phrase:
            seen.setdefault(phrase, None)
    return list(seen)


def search(
    entries: Sequence[Entry], query: str, *, limit: int | None = DEFAULT_LIMIT
) -> list[tuple[Entry, float]]:
    """The entries matching ``query``, best first, each with its score (``-bm25``, > 0).

    An empty query (or one with no words) matches nothing. ``limit=None`` returns every match;
    ``limit=0`` returns none.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    terms = query_terms(query)
    if not terms or not entries or limit == 0:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE doc USING fts5(text, tag, tokenize='porter unicode61')")
        db.executemany(
            "INSERT INTO doc(rowid, text, tag) VALUES (?, ?, ?)",
            (
                (pos, e.text, (e.category or "").replace("_", " ") or (e.session_id or ""))
                for pos, e in enumerate(entries)
            ),
        )
        sql = (
            "SELECT rowid, bm25(doc, 1.0, 0.1) AS rank FROM doc WHERE doc MATCH ? "
            "ORDER BY rank, rowid"
        )
        params: tuple[object, ...] = (match,)
        if limit is not None:
            sql += " LIMIT ?"
            params += (limit,)
        rows = db.execute(sql, params).fetchall()
    finally:
        db.close()
    return [(entries[rowid], -float(rank)) for rowid, rank in rows]
