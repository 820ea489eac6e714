"""One-pass preview ("late chunking") against exact embedding, per registered model.

For each model: exact hit@5 and MRR versus preview (:mod:`explorer.embedding.late`) on

- the French set (``bench/data/french/``: 5 documents, 60 questions), and
- the Chroma benchmark restricted to some of its corpora (default chatlogs, state_of_the_union
  and wikitexts: 208,000 characters, 276 questions; ``--corpora`` for others),

with ``recursive`` at 400, 600, 800 and 1,000 characters (overlap 0), k = 5, and the time of
the four configurations both ways from cold (a fresh embedding cache, an empty token store):
exact = embedding their distinct chunks; preview = reading each document once and pooling the
four configurations' chunks; "preview again" = the same four with every token vector stored
(pooling and scoring only: what any further configuration costs). Questions are embedded
beforehand (exact in both modes), untimed. Times are wall-clock on a shared machine: compare
the columns of one row, not rows of different runs.
The gap of a model is the largest |exact − preview| hit@5, in points, over sets and sizes: the
figure the registry records (``ModelSpec.preview_gap``) and the gate compares with 2.

    .venv/bin/python bench/bench_late.py                      # every model, at its window
    .venv/bin/python bench/bench_late.py --windows 512 128 64 # other window sizes too
    .venv/bin/python bench/bench_late.py --models all-MiniLM-L6-v2 --sets chroma

About 6 minutes on 2 busy CPU cores with the default backend (int8 ONNX).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time

from common import CHROMA, CORPORA, ROOT, table

from explorer.documents.loaders import load_path
from explorer.embedding import late
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.evaluation.evaluate import evaluate
from explorer.evaluation.questions import load_questions
from explorer.models.registry import MODELS, find_spec
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

FRENCH = ROOT / "bench" / "data" / "french"
SMALL_CORPORA = ("chatlogs", "state_of_the_union", "wikitexts")


def load_set(name: str, corpora: list[str]):
    if name == "french":
        docs = [load_path(p) for p in sorted(FRENCH.glob("*.txt"))]
        return docs, load_questions(FRENCH / "questions.jsonl", docs)
    docs = [load_path(CORPORA / f"{c}.md") for c in corpora]
    rows = list(csv.DictReader(io.StringIO((CHROMA / "questions_df.csv").read_text(encoding="utf-8"))))
    buf = io.StringIO()
    out = csv.DictWriter(buf, fieldnames=["question", "references", "corpus_id"])
    out.writeheader()
    out.writerows({k: r[k] for k in ("question", "references", "corpus_id")} for r in rows if r["corpus_id"] in corpora)
    return docs, load_questions(buf.getvalue().encode(), docs, "questions_df.csv")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=[m.name for m in MODELS])
    ap.add_argument("--backend", default="auto", help="auto, onnx or torch (default auto: int8 ONNX)")
    ap.add_argument("--sets", nargs="+", default=["french", "chroma"], choices=("french", "chroma"))
    ap.add_argument("--corpora", nargs="+", default=list(SMALL_CORPORA), help="Chroma corpora to use")
    ap.add_argument("--sizes", nargs="+", type=int, default=[400, 600, 800, 1000])
    ap.add_argument(
        "--windows", nargs="+", default=["default"],
        help="word pieces per model input for preview: 'default' (the registry's choice) and/or numbers",
    )  # fmt: skip
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    configs = [StrategyConfig.make("recursive", {"chunk_size": s, "chunk_overlap": 0}) for s in args.sizes]
    sets = {name: load_set(name, args.corpora) for name in args.sets}
    for name, (docs, qs) in sets.items():
        print(f"{name}: {len(docs)} documents, {sum(len(d.text) for d in docs):,} chars, {len(qs)} questions", file=sys.stderr)

    rows, gaps, times = [], {}, []
    for model in args.models:
        base = get_embedder(model, backend=args.backend)
        for name, (docs, qs) in sets.items():
            emb = base.sharing_model(EmbeddingCache.memory())  # cold: nothing cached
            emb.encode_queries([q.text for q in qs])  # exact in both modes, untimed
            emb.stats.reset()
            ctx = Context(model=model, embedder=emb)
            t0 = time.perf_counter()
            exact = evaluate(docs, configs, qs, args.k, ctx)
            t_exact = time.perf_counter() - t0
            calls_exact = emb.stats.model_calls
            for window in args.windows:
                w = None if window == "default" else int(window)
                w_used = late.default_window(emb, w)
                late.get_store().clear()
                emb.stats.reset()
                pctx = Context(model=model, embedder=emb, preview_window=w)
                t0 = time.perf_counter()
                prev = evaluate(docs, configs, qs, args.k, pctx, mode="preview", force_preview=True)
                t_prev = time.perf_counter() - t0
                calls_prev = emb.stats.model_calls
                t0 = time.perf_counter()  # again: every token vector stored, pooling and scoring only
                evaluate(docs, configs, qs, args.k, pctx, mode="preview", force_preview=True)
                t_warm = time.perf_counter() - t0
                assert emb.stats.model_calls == calls_prev, "a stored document was read again"
                who = f"{model} ({emb.backend}), window {w_used}"
                for size, e, p in zip(args.sizes, exact, prev, strict=True):
                    eh, ph = 100 * e.scores.hit_rate.mean, 100 * p.scores.hit_rate.mean
                    em, pm = 100 * e.scores.mrr.mean, 100 * p.scores.mrr.mean
                    rows.append([who, name, size, round(eh, 1), round(ph, 1), round(ph - eh, 1), round(em, 1), round(pm, 1), round(pm - em, 1)])
                    gaps.setdefault(who, []).append(abs(ph - eh))
                times.append([who, name, round(t_exact, 1), calls_exact, round(t_prev, 1), calls_prev, round(t_exact / t_prev, 1), round(t_warm, 1)])
                print(f"  {who} {name}: exact {t_exact:.0f}s, preview {t_prev:.0f}s", file=sys.stderr)
    print(f"\nExact vs preview, recursive (chars, overlap 0), k={args.k}; hit@{args.k} and MRR in %:\n")
    print(table(["model, window", "set", "size", f"hit@{args.k} exact", "preview", "Δ", "MRR exact", "preview", "Δ"], rows))
    print(f"\nTime of the {len(configs)} configurations from cold (seconds; model calls = batches):\n")
    print(table(["model, window", "set", "exact s", "calls", "preview s", "calls", "speed-up", "preview again s"], times))
    print("\nGap = largest |Δ hit@5| over sets and sizes (the registry's preview_gap; offered within 2):\n")
    grow = []
    for who, g in gaps.items():
        spec = find_spec(who.split(" (")[0])
        grow.append([who, round(max(g), 1), "yes" if max(g) <= 2.0 else "no", spec.preview_gap if spec else None])
    print(table(["model, window", "gap (points)", "within 2", "registry now"], grow))
    return 0


if __name__ == "__main__":
    sys.exit(main())
