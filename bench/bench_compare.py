"""A first 4-strategy comparison, cold: the project's default path against the naive pipeline.

Workload: the French set (bench/data/french, five documents, ~216 KB) and the bundled samples
(a 6-page PDF, a French report, a Markdown guide); four configurations (recursive 500 chars,
sentence, paragraph, fixed 256 tokens), every chunk of every configuration embedded once
(distinct texts). The naive pipeline embeds the same distinct chunk texts with
sentence-transformers all-MiniLM-L6-v2 in float32, batch 32 (chunking not counted); the
project's path chunks, then embeds with the default model and backend into an empty cache.
Both run in this process, interleaved, medians of ``--repeat`` runs.

    .venv/bin/python bench/bench_compare.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from common import ROOT, table

from explorer.documents.loaders import load_path
from explorer.documents.samples import SAMPLES, load_sample
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.retrieval.search import chunk_documents
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

CONFIGS = [
    StrategyConfig.make("recursive", {"chunk_size": 500, "chunk_overlap": 0}),
    StrategyConfig.make("sentence", {}),
    StrategyConfig.make("paragraph", {}),
    StrategyConfig.make("fixed", {"chunk_size": 256, "chunk_overlap": 0, "length": "tokens"}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    docs = [load_path(p) for p in sorted((ROOT / "bench/data/french").glob("*.txt"))]
    docs += [load_sample(name) for name in SAMPLES]
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {len(docs)} documents, {sum(len(d.text) for d in docs):,} chars")

    from sentence_transformers import SentenceTransformer

    from explorer.models.paths import resolve_model_path

    naive = SentenceTransformer(str(resolve_model_path("all-MiniLM-L6-v2")), device="cpu")
    default = get_embedder()
    default.sharing_model(EmbeddingCache.memory()).encode(["warm up"])
    naive.encode(["warm up"])

    def ours() -> int:
        emb = default.sharing_model(EmbeddingCache.memory())
        ctx = Context(embedder=emb)
        texts = [c.text for cfg in CONFIGS for c in chunk_documents(docs, cfg, ctx)]
        emb.encode(texts)
        return emb.stats.encoded

    texts = list(dict.fromkeys(c.text for cfg in CONFIGS for c in chunk_documents(docs, cfg, Context())))
    times: dict[str, list[float]] = {"naive": [], "ours": []}
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        naive.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        times["naive"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        n = ours()
        times["ours"].append(time.perf_counter() - t0)
    t_naive, t_ours = statistics.median(times["naive"]), statistics.median(times["ours"])
    print(
        table(
            ["pipeline", "distinct chunks", "seconds (median)", "× naive"],
            [
                ["naive: sentence-transformers all-MiniLM-L6-v2 fp32, batch 32", len(texts), t_naive, 1.0],
                [f"ours: chunk + {default.name} ({default.backend}), cold cache", n, t_ours, round(t_ours / t_naive, 2)],
            ],
        )
    )


if __name__ == "__main__":
    main()
