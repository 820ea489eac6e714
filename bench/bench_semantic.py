"""`semantic` end to end on ~100 KB of prose against LangChain's and Chonkie's SemanticChunker.

All three use the same loaded all-MiniLM-L6-v2 weights on CPU and the same window (LangChain
buffer_size=1, i.e. 3 sentences; Chonkie similarity_window=3), in the same process, cold (no
cached vectors). Ours embeds each sentence once and pools windows; LangChain embeds every
3-sentence window; Chonkie embeds the windows and the sentences.

Agreement: LangChain is also run on *our* sentences (its `_get_single_sentences_list` is
replaced), so both compute a breakpoint between the same sentence pairs. We print how many of
LangChain's breakpoints ours reproduces exactly and within ±1 sentence, and the correlation of
the two distance curves (LangChain's window vectors are recorded as it embeds them).

Run: .venv/bin/python bench/bench_semantic.py [--chars 100000] [--repeat 1] [--no-chonkie] [--noise-floor]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
from common import CORPORA, median_time, table

from explorer import Context, Document, get_strategy
from explorer.cache import EmbeddingCache
from explorer.embed import get_embedder
from explorer.sentences import sentence_spans
from explorer.strategies.semantic import (
    breakpoint_scores,
    clear_sentence_cache,
    semantic_curve,
    sentence_vectors,
    window_vectors,
)


def prose(chars: int) -> str:
    """The first ~``chars`` characters of the Wikipedia corpus, cut at a paragraph end."""
    text = (CORPORA / "wikitexts.md").read_text(encoding="utf-8")
    cut = text.rfind("\n\n", 0, chars)
    return text[: cut if cut > chars // 2 else chars]


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``fn()`` (CPU time sums torch's threads: it measures the
    work done even when other processes share the cores), and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), result


class RecordingEmbeddings:
    """LangChain ``Embeddings`` over the loaded sentence-transformers model (no download, no
    langchain-huggingface); remembers the last vectors so we can read its distance curve."""

    def __init__(self, model):
        self.model = model
        self.last: np.ndarray | None = None

    def embed_documents(self, texts):
        vecs = self.model.encode(
            list(texts),
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.last = vecs
        return vecs.tolist()

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def lc_breaks(chunks: list[str], sentences: list[str]) -> list[int]:
    """Sentence indexes i after which LangChain broke (its chunks are " ".join(sentences))."""
    out, i = [], 0
    for chunk in chunks[:-1]:
        n = len(sentences[i])
        i += 1
        while n < len(chunk):
            n += 1 + len(sentences[i])
            i += 1
        assert n == len(chunk), "could not align LangChain's chunks with the sentences"
        out.append(i - 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per contender (median)")
    ap.add_argument("--no-chonkie", action="store_true")
    ap.add_argument("--no-int8", action="store_true")
    ap.add_argument("--no-joined", action="store_true", help="skip the LangChain-exact joined-window mode")
    ap.add_argument(
        "--noise-floor",
        action="store_true",
        help="also run LangChain with the int8 model (its own agreement)",
    )
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)

    text = prose(args.chars)
    doc = Document("wikitexts.md[:100k]", "text", text)
    spans = sentence_spans(text)
    sents = [text[s:e] for s, e in spans]
    print(f"text: {len(text):,} chars, {len(sents):,} sentences (explorer.sentences)")
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")

    t0 = time.perf_counter()
    base = get_embedder()
    model = base.sharing_model(EmbeddingCache.memory())._load()
    print(f"model load (import torch + weights): {time.perf_counter() - t0:.1f} s, threads {_threads()}")
    model.encode(sents[:64], batch_size=32, show_progress_bar=False)  # first-call warm-up, untimed
    sem = get_strategy("semantic")
    params = {"breakpoint_mode": "percentile", "breakpoint_amount": 95, "buffer_size": 1}

    joined_ctx: list[Context] = []

    def ours(quantize: bool = False, window: str = "pooled"):
        src = get_embedder(quantize=True) if quantize else base
        ctx = Context(embedder=src.sharing_model(EmbeddingCache.memory()))  # cold: nothing cached
        clear_sentence_cache()
        if window == "joined":
            joined_ctx[:] = [ctx]
        return sem.chunk(doc, {**params, "window_embedding": window}, ctx)

    rows = []
    t_ours, c_ours, our_chunks = timed(ours, args.repeat)
    rows.append(["explorer semantic (sentences once, pooled)", t_ours, c_ours, len(our_chunks), len(sents)])
    windows = 3 * len(sents) - 2  # sentences inside LangChain's 3-sentence windows

    # warm: threshold change with cached vectors (what the Semantic page does)
    warm_ctx = Context(embedder=base.sharing_model(EmbeddingCache.memory()))
    sem.chunk(doc, params, warm_ctx)
    t_warm, _ = median_time(
        lambda: sem.chunk(doc, {**params, "breakpoint_amount": 90}, warm_ctx), repeat=5, warmup=1
    )

    from langchain_experimental.text_splitter import SemanticChunker

    rec = RecordingEmbeddings(model)
    lc_same = SemanticChunker(rec, buffer_size=1, breakpoint_threshold_type="percentile")
    lc_same._get_single_sentences_list = lambda _t: list(sents)  # same sentences as ours
    t_lc_same, c_lc_same, lc_chunks = timed(lambda: lc_same.split_text(text), args.repeat)
    lc_vecs = rec.last
    rows.append(["LangChain SemanticChunker (our sentences)", t_lc_same, c_lc_same, len(lc_chunks), windows])

    lc_stock = SemanticChunker(
        RecordingEmbeddings(model), buffer_size=1, breakpoint_threshold_type="percentile"
    )
    t_lc, c_lc, lc_stock_chunks = timed(lambda: lc_stock.split_text(text), args.repeat)
    n_regex = len(lc_stock._get_single_sentences_list(text))
    rows.append(["LangChain SemanticChunker (its regex)", t_lc, c_lc, len(lc_stock_chunks), 3 * n_regex - 2])

    if not args.no_chonkie:
        from chonkie import SemanticChunker as ChonkieSemantic
        from chonkie.embeddings import SentenceTransformerEmbeddings

        ck = ChonkieSemantic(
            embedding_model=SentenceTransformerEmbeddings(model), similarity_window=3, chunk_size=100_000
        )
        t_ck, c_ck, ck_chunks = timed(lambda: ck.chunk(text), args.repeat)
        rows.append(["Chonkie SemanticChunker (window 3)", t_ck, c_ck, len(ck_chunks), "~4 per sentence"])

    if not args.no_int8:
        get_embedder(quantize=True)._load()
        t_q, c_q, q_chunks = timed(lambda: ours(True), args.repeat)
        rows.append(["explorer semantic, int8 model", t_q, c_q, len(q_chunks), len(sents)])
    if not args.no_joined:
        t_j, c_j, j_chunks = timed(lambda: ours(window="joined"), args.repeat)
        rows.append(["explorer semantic, window_embedding=joined", t_j, c_j, len(j_chunks), windows])

    print()
    print(
        table(
            ["contender (cold, same model)", "wall s", "CPU s", "chunks", "sentences through the model"],
            rows,
        )
    )
    print(
        f"\nspeed-up vs LangChain, wall (CPU): its regex {t_lc / t_ours:.2f}x ({c_lc / c_ours:.2f}x); "
        f"same sentences {t_lc_same / t_ours:.2f}x ({c_lc_same / c_ours:.2f}x)"
    )
    if not args.no_chonkie:
        print(f"speed-up vs Chonkie, wall (CPU): {t_ck / t_ours:.2f}x ({c_ck / c_ours:.2f}x)")
    if not args.no_int8:
        print(f"int8 option vs LangChain (its regex), wall (CPU): {t_lc / t_q:.2f}x ({c_lc / c_q:.2f}x)")
    print(f"threshold change with cached vectors (warm re-chunk): {t_warm * 1000:.0f} ms median")

    # -- agreement with LangChain on the same sentences --------------------------------------
    lc_d = _distances(lc_vecs)
    ref95 = lc_breaks(lc_chunks, sents)
    assert ref95 == _breaks(lc_d, 95), "LangChain's chunks and its recorded distances disagree"
    sv = sentence_vectors(doc, warm_ctx)
    variants = {
        "ours: token-weighted pooling (default)": _distances(window_vectors(sv.vectors, 1, sv.weights)),
        "ours: plain mean pooling": _distances(window_vectors(sv.vectors, 1)),
    }
    if not args.no_int8:
        qctx = Context(embedder=get_embedder(quantize=True).sharing_model(EmbeddingCache.memory()))
        variants["ours, int8 model"] = semantic_curve(doc, params, qctx).distances
    if not args.no_joined:
        jparams = {**params, "window_embedding": "joined"}
        variants["ours: window_embedding=joined"] = semantic_curve(doc, jparams, joined_ctx[0]).distances
    if args.noise_floor:
        rec_q = RecordingEmbeddings(get_embedder(quantize=True)._load())
        lc_q = SemanticChunker(rec_q, buffer_size=1, breakpoint_threshold_type="percentile")
        lc_q._get_single_sentences_list = lambda _t: list(sents)
        lc_q.split_text(text)
        variants["LangChain itself, int8 model"] = _distances(rec_q.last)
    rows2 = []
    for pct in (90, 95, 98):
        ref = _breaks(lc_d, pct)
        for name, d in variants.items():
            ours_b = _breaks(d, pct)
            ex, near, near2 = (_recall(ref, ours_b, k) for k in (0, 1, 2))
            corr = float(np.corrcoef(lc_d, d)[0, 1])
            rows2.append([name, pct, len(ref), len(ours_b), ex * 100, near * 100, near2 * 100, corr])
    print("\nagreement with LangChain's breakpoints (buffer 1, same sentences; % of LangChain's found):")
    print(
        table(
            ["distances", "percentile", "LC breaks", "our breaks", "exact %", "±1 %", "±2 %", "curve corr."],
            rows2,
        )
    )


def _distances(win: np.ndarray) -> np.ndarray:
    win = win / np.linalg.norm(win, axis=1, keepdims=True)
    return 1 - np.einsum("ij,ij->i", win[:-1], win[1:])


def _breaks(d: np.ndarray, pct: float) -> list[int]:
    scores, thr = breakpoint_scores(d, "percentile", pct)
    return [i for i, x in enumerate(scores) if x > thr]


def _recall(ref: list[int], ours: list[int], k: int) -> float:
    s = set(ours)
    return sum(any(b + d in s for d in range(-k, k + 1)) for b in ref) / max(len(ref), 1)


def _threads() -> int:
    import torch

    return torch.get_num_threads()


if __name__ == "__main__":
    main()
