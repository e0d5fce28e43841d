"""The meaning layer (``core/meaning``): its tokeniser, its vectors and its checksums, on the
model the package ships (no network, no torch)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from maestro_memory.core import meaning
from maestro_memory.core.meaning import MODEL_DIR, ModelError, embed, load, similarity, wordpieces


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        # Expected pieces as BERT's own uncased tokeniser gives them for this vocabulary.
        ("Use pnpm, never npm!", "use p ##np ##m , never np ##m !"),
        ("Run `pytest -vx` in tests/unit", "run ` p ##yte ##st - v ##x ` in tests / unit"),
        ("Café naïve ÉCOLE", "cafe naive ecole"),
        ("unaffable gofumpt", "una ##ffa ##ble go ##fu ##mpt"),
        ("日本語 text", "日 本 語 text"),
        ("x" * 101 + " ok", "ok"),  # a word over 100 characters is unknown, left out
        ("tab\tand\x00nul\u200b", "tab and ##nu ##l"),
    ],
)
def test_wordpieces_read_text_as_bert_uncased(text: str, pieces: str) -> None:
    assert wordpieces(text) == pieces.split()


def test_vectors_are_unit_length_and_zero_for_no_words() -> None:
    vectors = embed(["Always use pnpm", "", "!!!", "x" * 200])
    assert vectors.shape == (4, meaning.model().dims) and vectors.dtype == np.float32
    assert abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5
    assert not vectors[3].any()
    assert similarity("", "Always use pnpm") == 0.0
    assert similarity("Always use pnpm", "Always use pnpm") == pytest.approx(1.0, abs=1e-5)


def test_a_text_of_identifiers_alone_has_no_meaning() -> None:
    # Fragments shared by every identifier ("w", "##0") made these 0.9 alike: words that all
    # hold a digit, no meaning. One word of letters is enough, known whole or in pieces.
    assert similarity("w0q0 w0k0 w0z0", "w0q1 w0k1 w0z1") == 0.0
    assert not embed(["x9y8 z7q6", "v1.2"]).any()
    assert similarity("Port 8001", "Port 8002") > 0.9
    assert all(row.any() for row in embed(["中", "使用 pnpm"]))


def test_batched_products_equal_the_pairwise_cosines(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"The {w} service keeps rule {i}" for i, w in enumerate(("auth", "billing") * 40)]
    other = "the billing service keeps a rule"
    want = [similarity(t, other) for t in texts]
    assert meaning.similarities(texts, other) == pytest.approx(want, abs=1e-5)  # most rows
    assert meaning.similarities(texts[:3], other) == pytest.approx(want[:3], abs=1e-5)  # a few
    monkeypatch.setattr(meaning._Rows, "LIMIT", 100)  # full: it starts again, still right
    fresh = [f"{t} again" for t in texts]
    again = meaning.similarities(fresh, other)
    assert again == pytest.approx([similarity(t, other) for t in fresh], abs=1e-5)
    assert meaning.similarities(texts, other) == pytest.approx(want, abs=1e-5)
    monkeypatch.setattr(meaning._Rows, "LIMIT", 50)  # more texts than it keeps
    assert meaning.similarities(texts, other) == pytest.approx(want, abs=1e-5)


def test_near_picks_the_positions_the_products_reach() -> None:
    texts = [f"The {w} service keeps rule {i}" for i, w in enumerate(("auth", "billing") * 40)]
    texts += ["w1q1 w1k1", "the billing service keeps a rule", texts[3]]  # zero row, equal, twice
    other = "the billing service keeps a rule"
    products = meaning.similarities(texts, other)
    for floor in (-1.0, 0.0, 0.5, sorted(products)[len(products) // 2], max(products), 2.0):
        want = [i for i, p in enumerate(products) if p >= floor]
        assert meaning.near(texts, other, floor) == want
        few = meaning.similarities(texts[:3], other)  # the other product (few rows)
        assert meaning.near(texts[:3], other, floor) == [i for i, p in enumerate(few) if p >= floor]
    assert meaning.near([], other, 0.0) == []


def test_a_rewording_is_closer_than_another_rule() -> None:
    same = similarity(
        "Run the unit tests before every commit", "Before committing, always run unit tests"
    )
    other = similarity("Run the unit tests before every commit", "The API server listens on 8080")
    assert same > other + 0.2


def test_the_shipped_model_is_the_pinned_one() -> None:
    m = meaning.model()
    assert m.manifest["upstream"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert m.manifest["upstream_licence"] == "Apache-2.0"
    assert m.vectors.shape == (m.manifest["tokens"], m.manifest["dims"]) == (30522, 256)


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(MODEL_DIR, folder)
    return folder


def test_a_changed_byte_in_any_file_is_refused(tmp_path: Path) -> None:
    for name in ("vectors.npy", "scales.npy", "vocab.txt", "manifest.json"):
        folder = _copy(tmp_path / name)
        data = bytearray((folder / name).read_bytes())
        data[-2] ^= 1
        (folder / name).write_bytes(bytes(data))
        with pytest.raises(ModelError, match="checksum"):
            load(folder)
    assert load(_copy(tmp_path / "intact")).vectors.shape[0] == 30522


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "scales.npy").unlink()
    with pytest.raises(ModelError, match="missing"):
        load(folder)


def test_a_model_asked_for_while_it_loads_is_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemon starts loading it in the background; a save asking meanwhile waits for that.
    import functools
    import threading

    entered, go = threading.Event(), threading.Event()
    loads: list[int] = []

    def slow_load() -> meaning.Model:
        loads.append(1)
        entered.set()
        go.wait(10)
        return load()

    monkeypatch.setattr(meaning, "_shipped", functools.cache(slow_load))
    got: list[meaning.Model] = []
    first = threading.Thread(target=lambda: got.append(meaning.model()))
    first.start()
    assert entered.wait(10)
    second = threading.Thread(target=lambda: got.append(meaning.model()))
    second.start()
    go.set()
    first.join(10)
    second.join(10)
    assert len(got) == 2 and got[0] is got[1]
    assert loads == [1]
