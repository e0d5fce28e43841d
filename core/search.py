"""Full-text search over memory entries: entries in, ranked ``(entry, score)`` out.

One ranking for every place that searches (``maestroctl search``, the MCP ``search`` tool and
``maestroctl ui`` call it through the ``search`` op). It is Okapi BM25 as SQLite's FTS5 computes
it (k1 = 1.2, b = 0.75, an IDF that never falls below 1e-6), over the entries given: pure,
nothing stored, nothing read.

* **Tokens**: the one word tokeniser (``core.text.words``: any script, case- and Latin
  accent-folded), each word stemmed (``text.stem``), and a compound word's parts as terms too
  (``pre-commit`` is found by ``commit``, ``user_preference`` by ``preference``).
* **Query**: free text, never a syntax: each term of it counts, entries matching more terms
  (and rarer ones) rank higher.
* **Fields**: the entry's text, and its category (semantic) or session id (episodic) at a
  tenth of the weight, so ``quality`` finds the quality rules without outranking a text match.
* **Score**: the BM25 score (bigger is better, always > 0 for a match). Ties keep the input
  order.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from .model import Entry
from .text import stem, words

DEFAULT_LIMIT = 20
K1 = 1.2
B = 0.75
TAG_WEIGHT = 0.1
_PARTS = re.compile(r"[._*/+#'\-]+")


def terms(text: str) -> list[str]:
    """The terms ``text`` is searched on: its words stemmed, then each compound's parts."""
    out: list[str] = []
    for word in words(text):
        out.append(stem(word))
        parts = [part for part in _PARTS.split(word) if part]
        if len(parts) > 1:
            out.extend(stem(part) for part in parts)
    return out


@lru_cache(maxsize=16384)
def _counts(text: str) -> Counter[str]:
    """``terms`` counted, cached: an entry's text is tokenised once per process, not per query."""
    return Counter(terms(text))


def query_terms(query: str) -> list[str]:
    """The terms of ``query`` that the search matches on, without repeats, in query order."""
    return list(dict.fromkeys(terms(query)))


def search(
    entries: Sequence[Entry], query: str, *, limit: int | None = DEFAULT_LIMIT
) -> list[tuple[Entry, float]]:
    """The entries matching ``query``, best first, each with its score (BM25, > 0).

    An empty query (or one with no words) matches nothing. ``limit=None`` returns every match;
    ``limit=0`` returns none.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be 0 or more, got {limit}")
    wanted = query_terms(query)
    if not wanted or not entries or limit == 0:
        return []
    docs = [_counts(e.text) for e in entries]  # shared with the cache: never modified here
    tags = [_counts((e.category or "").replace("_", " ") or (e.session_id or "")) for e in entries]
    lengths = [d.total() + t.total() for d, t in zip(docs, tags, strict=True)]
    average = sum(lengths) / len(lengths) or 1.0
    count = len(entries)
    wanted_set = set(wanted)
    postings: dict[str, list[int]] = {term: [] for term in wanted}
    for i, (d, t) in enumerate(zip(docs, tags, strict=True)):
        for term in wanted_set.intersection(d.keys() | t.keys()):
            postings[term].append(i)
    scores: dict[int, float] = {}
    for term in wanted:
        hits = postings[term]
        if not hits:
            continue
        idf = math.log((count - len(hits) + 0.5) / (len(hits) + 0.5))
        idf = idf if idf > 0 else 1e-6
        for i in hits:
            freq = docs[i][term] + TAG_WEIGHT * tags[i][term]
            norm = K1 * (1 - B + B * lengths[i] / average)
            scores[i] = scores.get(i, 0.0) + idf * freq * (K1 + 1) / (freq + norm)
    ranked = sorted(scores, key=lambda i: (-scores[i], i))
    if limit is not None:
        ranked = ranked[:limit]
    return [(entries[i], scores[i]) for i in ranked]
