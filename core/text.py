"""Lexical basis shared by relevance ranking, duplicate detection and contradiction checks.

Everything here is a pure function of its input. The rules, written down once:

* **Tokenisation** (``tokens``, the one word tokeniser of relevance, search and the contradiction
  checks): a word starts with a letter or digit of any script (or ``_``, or ``*``/``.`` before
  one: ``*.test.ts``, ``.env``) and goes on over letters, digits, combining marks and
  ``_ . * + # ' / -``; a trailing ``. - / '`` is dropped, so ``"*.test.ts"`` and ``c++`` stay one
  token while ``"(cost"`` becomes ``"cost"``. Scripts written without spaces between words
  have no word boundaries to find: a Han character (Chinese, Japanese kanji) is a word by itself,
  a run of hiragana or of katakana is one word (Hangul is spaced: its words are words). Thai,
  Lao, Khmer and Burmese runs stay one word each: matching inside them needs a dictionary.
  Text is NFKC-normalised first (full-width letters are letters). ``words`` lower-cases with
  ``str.casefold`` (``ß`` = ``ss``), drops a leading ``.``/``_`` and folds the accents of Latin
  letters (``für`` = ``fur``, as SQLite's FTS5 did for search); other scripts keep their marks.
* **Stop words**: a fixed list of English function words (``lexicon.STOP_WORDS``) carries no
  topic and is removed from *content* tokens. Negations (``lexicon.NEGATIONS``: ``not``,
  ``never``, ``don't`` …) are removed from topic comparison too.
* **Stemming**: a small suffix stripper (``stem``): plural ``-s``/``-es``/``-ies``, ``-ing``,
  ``-ed``, ``-ly``, ``-ment``, ``-ation`` …, applied once, never shortening a word below three
  letters, to English (ASCII) words only. It is deliberately conservative: it must map
  ``tests``/``testing``/``tested`` together without merging unrelated words.
* **Token estimate** (``estimate_tokens``, at home in ``common/limits.py`` so that the hooks count
  alike without loading the core): ``ceil(characters / 4)``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..common.limits import estimate_tokens
from .lexicon import NEGATIONS, STOP_WORDS

__all__ = [
    "NEGATIONS",
    "STOP_WORDS",
    "content_set",
    "content_tokens",
    "estimate_tokens",
    "stem",
    "tokens",
    "words",
]

# Scripts without spaces between words (see the module docstring): Han one character at a time,
# hiragana and katakana by runs. Kept out of the ordinary word class below.
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_HIRAGANA = "\u3040-\u309f"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_UNSPACED = _HAN + _HIRAGANA + _KATAKANA
# Combining marks that are part of a word (Python's \w leaves them out): the general diacritics
# and the Indic scripts' vowel signs.
_MARKS = "\u0300-\u036f\u0900-\u0963\u0966-\u0dff"
_START = rf"[^\W{_UNSPACED}]"  # a letter, digit or _ of a spaced script
_INNER = rf"(?:[^\W{_UNSPACED}]|[{_MARKS}.*+#'/\-])"
_TOKEN = re.compile(
    rf"\*?\.?{_START}{_INNER}*|\*\.(?:[^\W{_UNSPACED}]|\.)+"
    rf"|[{_HAN}]|[{_HIRAGANA}]+|[{_KATAKANA}]+"
)
_TOKEN_MARKS = re.compile(_TOKEN.pattern + r"|%|[:=]")
_TRAIL = ".-/'"

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ness", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("sses", "ss"),
    ("shes", "sh"),
    ("ches", "ch"),
    ("xes", "x"),
    ("edly", ""),
    ("ly", ""),
    ("ed", ""),
    ("es", "e"),
    ("s", ""),
)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Strip one common English suffix; words with digits or punctuation, or not in ASCII,
    are left alone."""
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        return word
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix):
            base = word[: -len(suffix)] + repl
            if len(base) < 3:
                return word
            # "running" -> "runn" -> "run": undo a doubled final consonant left by -ing/-ed.
            if (
                suffix in ("ing", "ed", "ings")
                and len(base) > 3
                and base[-1] == base[-2]
                and base[-1] not in "lsz"
            ):
                base = base[:-1]
            return base
    return word


def tokens(text: str, *, marks: bool = False) -> list[str]:
    """The words of ``text`` as written (case kept), trailing ``. - / '`` dropped; ``marks``:
    ``%``, ``:`` and ``=`` are tokens too (the contradiction checks read a value after them)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    pattern = _TOKEN_MARKS if marks else _TOKEN
    out: list[str] = []
    for match in pattern.finditer(text):
        token = match.group(0).rstrip(_TRAIL)
        if token:
            out.append(token)
    return out


def words(text: str) -> list[str]:
    """``tokens`` case-folded, a leading ``.``/``_`` dropped, Latin letters' accents folded."""
    out: list[str] = []
    for token in tokens(text):
        word = _fold(token.casefold()).lstrip("._")
        if word:
            out.append(word)
    return out


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    if word.isascii():
        return word
    kept: list[str] = []
    for ch in unicodedata.normalize("NFD", word):
        # A combining mark after a Latin letter is an accent (für = fur); elsewhere it is part
        # of the letter (Cyrillic й, Devanagari vowel signs) and stays.
        if "\u0300" <= ch <= "\u036f" and kept and kept[-1] < "\u0250":
            continue
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens without stop words or negations: what a text is *about*."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS and w not in NEGATIONS]


@lru_cache(maxsize=16384)
def content_set(text: str) -> frozenset[str]:
    """``content_tokens`` as a set, cached: the hot path of relevance ranking."""
    return frozenset(content_tokens(text))
