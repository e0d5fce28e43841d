"""The meaning layer: a small static text-embedding model, loaded once, that says how close two
texts are in meaning.

The model (``data/``) is distilled by ``tools/meaning/build_model.py`` from
``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0): one 256-dimension vector per WordPiece
token of its vocabulary, int8 with a scale per row. A text's vector is the mean of its tokens'
vectors, normalised to length 1; ``similarity`` is the cosine of two of them. The rules:

* **Tokens**: BERT's uncased reading, done here: control characters dropped, CJK characters
  split apart, lower-cased, accents stripped, split on white space and on every punctuation mark,
  then WordPiece, longest match first, with ``##`` continuations (a word with no match, or of
  more than 100 characters, is unknown and left out).
* **Loading**: lazily, once per process (``model()``), and only by the daemon or a direct-mode
  command that needs it: the hook and MCP-door processes never import this module (numpy is
  heavy; ``tests/client/test_cli_imports.py``), and an idle daemon that has judged no save stays
  small (P6). The manifest's sha256 is pinned here and each
  file's sha256 is in the manifest: a file that does not match is ``ModelError``, never a model.
* **No words**: a text with no known token has the zero vector, similar to nothing (0.0). So
  has a text whose every known word holds a digit: identifiers such as ``w0q1 w0k1`` fall
  apart into fragments (``w``, ``##0``) shared by every identifier, which say nothing of
  meaning (they made each such text "may replace" the one before). A word of letters alone,
  known whole or in pieces (``pnpm``), is enough.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

__all__ = [
    "MODEL_DIR",
    "Model",
    "ModelError",
    "embed",
    "model",
    "near",
    "similarities",
    "similarity",
    "wordpieces",
]

MODEL_DIR = Path(__file__).resolve().parent / "data"
MANIFEST_SHA256 = "b7c2f24b1f4eaa894f4685f920bf5b5fe0b426e0ab1591883338362776b4104b"
MAX_WORD_CHARS = 100  # BERT's limit: a longer word is unknown
_FILES = ("vectors.npy", "scales.npy", "vocab.txt")


class ModelError(Exception):
    """The shipped model is missing or does not match its pinned checksums."""


# ---- BERT's uncased tokenisation, then WordPiece ------------------------------------------


def _punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def basic_words(text: str) -> list[str]:
    """The words and punctuation marks of ``text`` as BERT's uncased basic tokeniser reads it."""
    chars: list[str] = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        if ch.isspace():
            chars.append(" ")
        elif unicodedata.category(ch).startswith("C") and ch not in "\t\n\r":
            continue
        elif _cjk(cp):
            chars.append(f" {ch} ")
        else:
            chars.append(ch)
    out: list[str] = []
    for word in "".join(chars).lower().split():
        word = "".join(
            c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
        )
        current = ""
        for ch in word:
            if _punctuation(ch):
                if current:
                    out.append(current)
                out.append(ch)
                current = ""
            else:
                current += ch
        if current:
            out.append(current)
    return out


@dataclass(frozen=True, eq=False)  # hashed by identity: one model per process
class Model:
    """The loaded model: vocabulary and quantised token vectors."""

    vocab: dict[str, int]
    vectors: Any  # int8, tokens x dims
    scales: Any  # float32, one per token
    manifest: dict[str, Any]

    @property
    def dims(self) -> int:
        return int(self.vectors.shape[1])

    def word_ids(self, word: str) -> tuple[int, ...]:
        """WordPiece ids of one basic word, longest match first; () when unknown."""
        return _word_ids(self, word)

    def ids(self, text: str) -> list[int]:
        return [i for word in basic_words(text) for i in self.word_ids(word)]


@lru_cache(maxsize=65536)
def _word_ids(m: Model, word: str) -> tuple[int, ...]:
    if len(word) > MAX_WORD_CHARS:
        return ()
    ids: list[int] = []
    start = 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            found = m.vocab.get(piece)
            if found is not None:
                break
            end -= 1
        if found is None:
            return ()  # BERT: the whole word is [UNK]
        ids.append(found)
        start = end
    return tuple(ids)


def wordpieces(text: str) -> list[str]:
    """The WordPiece tokens of ``text`` (unknown words left out)."""
    m = model()
    names = {i: t for t, i in m.vocab.items()}
    return [names[i] for i in m.ids(text)]


def _verified(path: Path, want: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"the meaning model is missing: {path} ({exc.strerror})") from None
    if hashlib.sha256(data).hexdigest() != want:
        raise ModelError(f"the meaning model's {path.name} does not match its checksum")
    return data


def load(directory: Path = MODEL_DIR, manifest_sha256: str = MANIFEST_SHA256) -> Model:
    """Read and verify a model folder (``model()`` is this, once, on the shipped one)."""
    import numpy as np

    manifest = json.loads(_verified(directory / "manifest.json", manifest_sha256))
    data = {name: _verified(directory / name, manifest["sha256"][name]) for name in _FILES}
    vectors = np.load(io.BytesIO(data["vectors.npy"]), allow_pickle=False)
    scales = np.load(io.BytesIO(data["scales.npy"]), allow_pickle=False)
    tokens = data["vocab.txt"].decode("utf-8").split("\n")[:-1]
    if vectors.dtype != np.int8 or vectors.shape[0] != len(tokens) != scales.shape[0]:
        raise ModelError("the meaning model's files do not fit together")
    return Model({t: i for i, t in enumerate(tokens)}, vectors, scales, manifest)


@cache
def _shipped() -> Model:
    return load()


_LOADING = threading.Lock()


def model() -> Model:
    """The shipped model, loaded and verified once per process (a thread that asks while
    another loads it waits for that load: the writer and the analysis threads may both ask)."""
    with _LOADING:
        return _shipped()


def embed(texts: Sequence[str]) -> Vectors:
    """One unit vector per text (float32, len(texts) x dims); the zero row for a text with no
    known token."""
    import numpy as np

    m = model()
    out = np.zeros((len(texts), m.dims), dtype=np.float32)
    for row, text in enumerate(texts):
        out[row] = _embed_one(text)
    return out


def _wordlike(word: str) -> bool:
    return not any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


@lru_cache(maxsize=16384)
def _embed_one(text: str) -> Vectors:
    import numpy as np

    m = model()
    special = {m.vocab.get(t) for t in ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]")}
    words = [(word, m.word_ids(word)) for word in basic_words(text)]
    ids = [i for _, pieces in words for i in pieces if i not in special]
    if not ids or not any(pieces and _wordlike(word) for word, pieces in words):
        return np.zeros(m.dims, dtype=np.float32)
    rows = m.vectors[ids].astype(np.float32) * m.scales[ids, None]
    mean = rows.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    vec: Vectors = mean / norm if norm else mean
    vec.setflags(write=False)
    return vec


def similarity(a: str, b: str) -> float:
    """Cosine of the two texts' vectors, in [-1, 1]; 0.0 when either has no known token."""
    return float(_embed_one(a) @ _embed_one(b))


def similarities(texts: Sequence[str], other: str) -> list[float]:
    """``similarity(text, other)`` of each of ``texts``, in one matrix product: equal to it up
    to float32 rounding (the products are summed in another order), so a caller that compares
    with a threshold re-checks the near ones with ``similarity``."""
    if not texts:
        return []
    return _ROWS.products(texts, _embed_one(other)).tolist()  # type: ignore[no-any-return]


def near(texts: Sequence[str], other: str, floor: float) -> list[int]:
    """The positions, in order, of the ``texts`` whose ``similarities`` product with ``other``
    is ``floor`` or more: picked in the matrix, so a caller that keeps only the near ones
    (a save against every entry of its category) makes no Python value per text."""
    if not texts:
        return []
    import numpy as np

    products = _ROWS.products(texts, _embed_one(other))
    return np.flatnonzero(products >= floor).tolist()


class _Rows:
    """Each text's vector once, as a row of one matrix: a save compares its text with every
    entry of its category, and gathering rows by index costs a fraction of stacking that many
    vectors. Bounded like ``_embed_one``'s cache (full, it starts again); a lock, because the
    analysis thread and the writer may both ask."""

    LIMIT = 16384

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._row: dict[str, int] = {}
        self._matrix: Vectors | None = None

    def products(self, texts: Sequence[str], vector: Vectors) -> Vectors:
        """Each text's vector times ``vector``: over the rows asked for, or, when they are
        most of the rows kept, over all of them and then picked (no copy of the rows)."""
        import numpy as np

        if len(texts) > self.LIMIT:  # more than it keeps (a memory file holds far fewer)
            return np.stack([_embed_one(t) for t in texts]) @ vector
        with self._lock:
            rows = self._row
            try:  # the common case: every text has its row already
                index = np.fromiter(map(rows.__getitem__, texts), dtype=np.intp, count=len(texts))
            except KeyError:
                if len(rows) + len(texts) > self.LIMIT:
                    rows.clear()
                self._add([t for t in dict.fromkeys(texts) if t not in rows])
                index = np.fromiter(map(rows.__getitem__, texts), dtype=np.intp, count=len(texts))
            matrix = self._matrix
            assert matrix is not None
            if 2 * len(texts) >= len(rows):
                return (matrix[: len(rows)] @ vector)[index]
            return matrix[index] @ vector

    def _add(self, texts: list[str]) -> None:
        import numpy as np

        start = len(self._row)
        need = start + len(texts)
        matrix = self._matrix
        if matrix is None or matrix.shape[0] < need:
            grown = np.zeros((min(max(need, 2 * start, 256), self.LIMIT), model().dims), np.float32)
            if matrix is not None:
                grown[:start] = matrix[:start]
            matrix = self._matrix = grown
        for offset, text in enumerate(texts):
            matrix[start + offset] = _embed_one(text)
            self._row[text] = start + offset


_ROWS = _Rows()
