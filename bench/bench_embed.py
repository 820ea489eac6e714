"""Embedding throughput: cold (model work) vs warm (memory and disk cache), fp32 vs int8.

Texts: sentences and ~1,000-character chunks of the Chroma Wikipedia corpus. Cold runs use a
fresh cache each time (the model is loaded once, untimed); warm runs read the same texts back
from the in-memory level and from the SQLite file (a new cache object, empty memory). The int8
option (dynamic quantisation of the Linear layers) is measured beside fp32, with how close its
vectors are and its effect on retrieval recall on part of the Chroma benchmark (k = 5,
recursive 250 MiniLM tokens, overlap 0, the report's separators).

Run: .venv/bin/python bench/bench_embed.py [--sentences 400] [--chunks 60] [--repeat 3] [--no-recall]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings

import numpy as np
from common import CHROMA, CORPORA, median_time, table

from explorer import Context, Document
from explorer.cache import EmbeddingCache
from explorer.config import StrategyConfig
from explorer.embed import get_embedder
from explorer.sentences import sentence_spans

RECALL_CORPORA = ("state_of_the_union", "chatlogs", "wikitexts")


def texts(n_sent: int, n_chunks: int) -> tuple[list[str], list[str]]:
    text = (CORPORA / "wikitexts.md").read_text(encoding="utf-8")
    sents = [text[s:e] for s, e in sentence_spans(text)]
    sents = list(dict.fromkeys(sents))[:n_sent]  # distinct, so every one is model work
    chunks = [text[i : i + 1000] for i in range(0, len(text), 1000)][:n_chunks]
    return sents, chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-int8", action="store_true")
    ap.add_argument("--no-recall", action="store_true")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)

    sents, chunks = texts(args.sentences, args.chunks)
    t0 = time.perf_counter()
    base = get_embedder()
    base.sharing_model(EmbeddingCache.memory())  # loads torch + weights
    t_load = time.perf_counter() - t0
    base.sharing_model(EmbeddingCache.memory()).encode(sents[:64])  # warm-up, untimed
    variants = {"fp32": base}
    if not args.no_int8:
        t0 = time.perf_counter()
        q = get_embedder(quantize=True)
        q.sharing_model(EmbeddingCache.memory()).encode(sents[:64])
        variants["int8"] = q
        t_qload = time.perf_counter() - t0
    print(
        f"{len(sents)} sentences (mean {np.mean([len(s) for s in sents]):.0f} chars), "
        f"{len(chunks)} chunks of 1,000 chars; model load {t_load:.1f} s"
        + ("" if args.no_int8 else f", int8 conversion {t_qload:.1f} s")
    )

    rows = []
    vectors: dict[str, dict[str, np.ndarray]] = {}
    for name, emb in variants.items():
        vectors[name] = {}
        for label, batch in (("sentences", sents), ("chunks", chunks)):
            t_cold, vecs = median_time(
                lambda b=batch, e=emb: e.sharing_model(EmbeddingCache.memory()).encode(b),
                repeat=args.repeat,
                warmup=0,
            )
            vectors[name][label] = vecs
            with tempfile.TemporaryDirectory() as tmp:
                disk_emb = emb.sharing_model(EmbeddingCache(tmp))
                disk_emb.encode(batch)  # fills memory and the file
                t_mem, _ = median_time(lambda b=batch, e=disk_emb: e.encode(b), repeat=5)
                t_disk, _ = median_time(
                    lambda b=batch, e=emb, d=tmp: e.sharing_model(EmbeddingCache(d)).encode(b), repeat=5
                )
            n = len(batch)
            rows.append([name, label, n / t_cold, n / t_disk, n / t_mem, t_cold / t_disk])
    print()
    print(
        table(
            ["model", "texts", "cold /s", "warm disk /s", "warm memory /s", "disk speed-up"],
            rows,
        )
    )
    if "int8" in vectors:
        for label in ("sentences", "chunks"):
            cos = (vectors["fp32"][label] * vectors["int8"][label]).sum(axis=1)
            print(f"int8 vs fp32 cosine on {label}: mean {cos.mean():.4f}, min {cos.min():.4f}")
        speed = [r[2] for r in rows]
        half = len(speed) // 2
        print(
            "int8 speed-up (cold): "
            + ", ".join(
                f"{lbl} {q / f:.2f}x"
                for lbl, f, q in zip(("sentences", "chunks"), speed[:half], speed[half:], strict=True)
            )
        )
    if not args.no_recall and "int8" in variants:
        recall(variants)


def recall(variants: dict) -> None:
    """Chroma metrics on part of the benchmark (3 of 5 corpora, their questions), per model."""
    from explorer.evaluate import evaluate, load_questions

    docs_all = [Document(f.name, "text", f.read_text(encoding="utf-8")) for f in sorted(CORPORA.glob("*.md"))]
    keep = [d for d in docs_all if d.name.removesuffix(".md") in RECALL_CORPORA]
    ids = {d.id for d in keep}
    questions = [
        q
        for q in load_questions(CHROMA / "questions_df.csv", docs_all)
        if all(r[0] in ids for r in q.references)
    ]
    cfg = StrategyConfig.make(
        "recursive",
        {
            "chunk_size": 250,
            "chunk_overlap": 0,
            "length": "tokens",
            "separators": ["\n\n", "\n", ".", "?", "!", " ", ""],
        },
    )
    rows = []
    for name, emb in variants.items():
        ctx = Context(embedder=emb.sharing_model(EmbeddingCache.memory()))
        t0 = time.perf_counter()
        (res,) = evaluate(keep, [cfg], questions, k=5, ctx=ctx)
        s = res.scores
        rows.append(
            [
                name,
                res.chunk_count,
                s.recall.mean * 100,
                s.precision.mean * 100,
                s.iou.mean * 100,
                time.perf_counter() - t0,
            ]
        )
    print(
        f"\nretrieval on {', '.join(RECALL_CORPORA)} ({len(questions)} questions, k=5, recursive 250 tokens):"
    )
    print(table(["model", "chunks", "recall %", "precision %", "IoU %", "seconds (embed + search)"], rows))


if __name__ == "__main__":
    main()
