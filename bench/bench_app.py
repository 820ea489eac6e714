"""The app's hot paths on a ~500 KB document (a ~200-page PDF's worth of text).

Measured (medians; nothing asserted):

1. Re-chunk + analyse + render after a parameter change, for the structural strategies: the
   core path the Explore page runs (chunk, model-token counts, flags, stats, the highlighted
   window), each run with a new chunk_size so no cache helps. Target under 200 ms.
2. The same through Streamlit itself: AppTest drives the Explore page and moves the chunk-size
   slider (script rerun incl. st.cache_data and element serialisation; no browser).
3. A threshold change on Semantic with the sentence vectors cached (curve + chunks + analysis
   + render). Target under 200 ms. The first, cold embedding of all sentences is reported.
4. The first full comparison of 4 strategies with embeddings (a FAISS index each, as Retrieve
   builds them), cold cache. Reported.
5. Peak memory (max RSS) of the process. Target under 2 GB.

Run: .venv/bin/python bench/bench_app.py [--chars 500000] [--repeat 5] [--fake] [--skip-compare]
``--fake`` uses the deterministic FakeEmbedder (no model; for a quick check of the plumbing).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["CHUNK_EXPLORER_CACHE"] = tempfile.mkdtemp(prefix="bench-app-cache-")  # cold

from common import ROOT, chroma_text, median_time, table

from explorer import Context, Document, get_strategy
from explorer.evaluation.chunk_metrics import chunk_stats
from explorer.evaluation.flags import flag_chunks
from explorer.render.html import render_chunks
from explorer.render.layout import window_around
from explorer.strategies.config import StrategyConfig
from explorer.text.token_cache import count_chunk_tokens

STRUCTURAL = ("fixed", "sentence", "paragraph", "recursive", "markdown")


def explore_path(doc: Document, strategy: str, params: dict, ctx: Context) -> int:
    """What Explore computes after a parameter change (without Streamlit)."""
    chunks = get_strategy(strategy).chunk(doc, params, ctx)
    tokens = count_chunk_tokens(doc, chunks)
    flags = flag_chunks(chunks, doc, token_counts=tokens)
    chunk_stats(chunks, doc, token_counts=tokens)
    bounds = [(c.start, c.end) for c in chunks]
    sel = len(chunks) // 2
    lo, hi = window_around(bounds, sel, len(doc.text))
    html = render_chunks(
        doc.text,
        chunks,
        lo=lo,
        hi=hi,
        selected=sel,
        flags={i: f for i, f in enumerate(flags) if f},
        tokens=tokens,
    )
    return len(html)


def bench_structural(doc: Document, repeat: int) -> list[list]:
    ctx = Context()
    rows = []
    for name in STRUCTURAL:
        try:
            get_strategy(name)
        except Exception:
            continue
        sizes = iter(range(700, 700 + 10 * (repeat + 3), 10))
        params = {"chunk_size": 0}

        def run(name=name, params=params, sizes=sizes):
            params["chunk_size"] = next(sizes)
            p = {"chunk_size": params["chunk_size"]}
            if name == "sentence":
                p = {"chunk_size": params["chunk_size"]}
            return explore_path(doc, name, p, ctx)

        try:
            t, _ = median_time(run, repeat=repeat, warmup=1)
        except Exception as err:  # a strategy without chunk_size
            rows.append([name, "n/a", str(err)[:60]])
            continue
        n = len(get_strategy(name).chunk(doc, {"chunk_size": 720}, ctx))
        rows.append([name, round(1000 * t, 1), f"{n:,} chunks"])
    return rows


def bench_apptest(text: str, repeat: int) -> float | None:
    """Median rerun time of the Explore page after moving the chunk-size slider."""
    try:
        from streamlit.testing.v1 import AppTest
    except ImportError:
        return None
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.switch_page("pages/documents.py").run()
    at.file_uploader[0].set_value(("bench.txt", text.encode(), "text/plain")).run()
    at.switch_page("pages/explore.py").run()
    cfg = next(c for c in at.session_state["configs"] if c["id"] == at.session_state["active_cfg"])
    key = f"p.{cfg['id']}.{cfg['strategy']}.chunk_size"
    times = []
    for i in range(repeat + 1):
        at.slider(key=key).set_value(600 + 37 * i)
        t0 = time.perf_counter()
        at.run()
        dt = time.perf_counter() - t0
        if at.exception:
            raise SystemExit(f"AppTest failed: {at.exception[0].message}")
        if i:  # the first includes imports and the upload's first analysis
            times.append(dt)
    return statistics.median(times)


def bench_semantic(doc: Document, ctx: Context, repeat: int) -> tuple[float, float, int]:
    from explorer.strategies.semantic import semantic_curve

    t0 = time.perf_counter()
    semantic_curve(doc, {}, ctx)  # embeds every sentence once (cold cache)
    cold = time.perf_counter() - t0
    amounts = iter([80 + i for i in range(repeat + 3)])

    def move():
        p = {"breakpoint_amount": float(next(amounts))}
        curve = semantic_curve(doc, p, ctx)
        StrategyConfig.make("semantic", p)
        return explore_path(doc, "semantic", p, ctx), len(curve.points)

    t, (_, n) = median_time(move, repeat=repeat, warmup=1)
    return cold, t, n


def bench_compare(doc: Document, ctx: Context) -> list[list]:
    from explorer.retrieval.search import build_index

    rows = []
    total = 0.0
    for name in ("fixed", "sentence", "recursive", "paragraph"):
        try:
            config = StrategyConfig.make(name, {})
        except Exception:
            continue
        t0 = time.perf_counter()
        idx = build_index([doc], config, ctx)
        dt = time.perf_counter() - t0
        total += dt
        rows.append([name, len(idx.chunks), round(dt, 1)])
    rows.append(["all four (first comparison)", "", round(total, 1)])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fake", action="store_true", help="FakeEmbedder instead of the model")
    ap.add_argument("--skip-compare", action="store_true", help="skip the 4-strategy embedding run")
    ap.add_argument("--skip-apptest", action="store_true")
    args = ap.parse_args()

    text = chroma_text(args.chars)
    doc = Document("bench.md", "text", text)
    print(f"Document: {len(text):,} characters\n")

    print("1. Re-chunk + analyse + render after a parameter change (target < 200 ms)")
    print(table(["strategy", "median ms", "chunks"], bench_structural(doc, args.repeat)))

    if not args.skip_apptest:
        if args.fake:
            os.environ["CHUNK_EXPLORER_FAKE_EMBEDDER"] = "1"
        t = bench_apptest(text, args.repeat)
        if t is not None:
            print(
                f"\n2. Explore page rerun after moving the slider (AppTest, recursive): {1000 * t:,.0f} ms median"
            )

    if args.fake:
        from explorer.embedding.fake import FakeEmbedder

        ctx = Context(embedder=FakeEmbedder(64))
    else:
        ctx = Context()
    try:
        cold, warm, n = bench_semantic(doc, ctx, args.repeat)
        print(
            f"\n3. Semantic: first embedding of the sentences {cold:,.1f} s ({n + 1:,} sentences); "
            f"threshold change with cached vectors {1000 * warm:,.0f} ms median (target < 200 ms)"
        )
    except Exception as err:
        print(f"\n3. Semantic: not measured ({err})")

    if not args.skip_compare:
        print("\n4. First comparison of 4 strategies with embeddings (cold cache), seconds")
        print(table(["strategy", "chunks", "index s"], bench_compare(doc, ctx)))

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n5. Peak memory (max RSS): {peak:,.0f} MB (target < 2,048 MB)")


if __name__ == "__main__":
    main()
