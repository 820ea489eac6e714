"""`semantic` end to end on ~100 KB of prose against LangChain's and Chonkie's SemanticChunker.

All three use the same loaded all-MiniLM-L6-v2 weights on CPU and the same window (LangChain
buffer_size=1, i.e. 3 sentences; Chonkie similarity_window=3), in the same process, cold (no
cached vectors). Ours (default ``window_embedding="contextual"``) runs every token through the
model once, each sentence seeing its window's neighbours, in packed sequences; LangChain embeds
every 3-sentence window (each sentence three times); Chonkie embeds the windows and the
sentences. Contenders run interleaved, ``--repeat`` times each, and medians are compared.

Agreement: LangChain is also run on *our* sentences (its `_get_single_sentences_list` is
replaced), so both compute a breakpoint between the same sentence pairs. We print how many of
LangChain's breakpoints ours reproduces exactly and within ±1 sentence, and the correlation of
the two distance curves (LangChain's window vectors are recorded as it embeds them), on the
first 100 KB of each of the five Chroma corpora.

Run: .venv/bin/python bench/bench_semantic.py [--chars 100000] [--repeat 3] [--no-chonkie] [--noise-floor]
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
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.strategies.curve import breakpoint_scores, clear_sentence_cache
from explorer.strategies.semantic import semantic_curve
from explorer.text.sentences import sentence_spans


def prose(chars: int, corpus: str = "wikitexts.md") -> str:
    """The first ~``chars`` characters of a Chroma corpus (Wikipedia by default), cut at a paragraph end."""
    text = (CORPORA / corpus).read_text(encoding="utf-8")
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
    ap.add_argument("--repeat", type=int, default=3, help="cold runs per contender (median)")
    ap.add_argument("--no-chonkie", action="store_true")
    ap.add_argument("--no-int8", action="store_true")
    ap.add_argument("--no-joined", action="store_true", help="skip the LangChain-exact joined-window mode")
    ap.add_argument("--no-corpora", action="store_true", help="agreement on wikitexts only")
    ap.add_argument(
        "--noise-floor",
        action="store_true",
        help="also run LangChain with the int8 model (how far LangChain moves from itself)",
    )
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)

    text = prose(args.chars)
    doc = Document("wikitexts.md[:100k]", "text", text)
    spans = sentence_spans(text)
    sents = [text[s:e] for s, e in spans]
    print(f"text: {len(text):,} chars, {len(sents):,} sentences (explorer.text.sentences)")
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")

    t0 = time.perf_counter()
    base = get_embedder()
    model = base.sharing_model(EmbeddingCache.memory())._load()
    print(f"model load (import torch + weights): {time.perf_counter() - t0:.1f} s, threads {_threads()}")
    model.encode(sents[:64], batch_size=32, show_progress_bar=False)  # first-call warm-up, untimed
    sem = get_strategy("semantic")
    # uncapped, as LangChain (the default caps chunks at 256 tokens: a recursive split on top)
    params = {"breakpoint_mode": "percentile", "breakpoint_amount": 95, "buffer_size": 1, "max_chunk_size": 0}

    def ours(window: str = "contextual", quantize: bool = False, d: Document = doc):
        src = get_embedder(quantize=True) if quantize else base
        ctx = Context(embedder=src.sharing_model(EmbeddingCache.memory()))  # cold: nothing cached
        clear_sentence_cache()
        return sem.chunk(d, {**params, "window_embedding": window}, ctx)

    from langchain_experimental.text_splitter import SemanticChunker

    def langchain(sentences: list[str] | None, rec: RecordingEmbeddings | None = None):
        lc = SemanticChunker(
            rec or RecordingEmbeddings(model), buffer_size=1, breakpoint_threshold_type="percentile"
        )
        if sentences is not None:
            lc._get_single_sentences_list = lambda _t: list(sentences)  # same sentences as ours
        return lc

    # -- speed: cold runs, interleaved so that machine load hits every contender alike ------------
    contenders = {
        "explorer semantic (default: contextual)": (lambda: ours("contextual"), len(sents)),
        "explorer semantic, window_embedding=pooled": (lambda: ours("pooled"), len(sents)),
        "LangChain SemanticChunker (our sentences)": (
            lambda: langchain(sents).split_text(text),
            3 * len(sents) - 2,
        ),
        "LangChain SemanticChunker (its regex)": (lambda: langchain(None).split_text(text), "3 per sentence"),
    }
    if not args.no_chonkie:
        from chonkie import SemanticChunker as ChonkieSemantic
        from chonkie.embeddings import SentenceTransformerEmbeddings

        ck = ChonkieSemantic(
            embedding_model=SentenceTransformerEmbeddings(model), similarity_window=3, chunk_size=100_000
        )
        contenders["Chonkie SemanticChunker (window 3)"] = (lambda: ck.chunk(text), "~4 per sentence")
    if not args.no_int8:
        get_embedder(quantize=True)._load()
        contenders["explorer semantic, int8 model (option)"] = (lambda: ours("contextual", True), len(sents))
    if not args.no_joined:
        contenders["explorer semantic, window_embedding=joined"] = (
            lambda: ours("joined"),
            3 * len(sents) - 2,
        )
    walls: dict[str, list[float]] = {k: [] for k in contenders}
    cpus: dict[str, list[float]] = {k: [] for k in contenders}
    chunks: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, (fn, _n) in contenders.items():
            w, c, result = timed(fn, 1)
            walls[name].append(w)
            cpus[name].append(c)
            chunks[name] = len(result)
    med = {k: statistics.median(v) for k, v in walls.items()}
    cmed = {k: statistics.median(v) for k, v in cpus.items()}
    rows = [
        [name, med[name], min(walls[name]), max(walls[name]), cmed[name], chunks[name], n]
        for name, (_fn, n) in contenders.items()
    ]
    print(f"\ncold runs, {args.repeat} each, interleaved (median, min, max wall seconds):")
    print(
        table(
            [
                "contender (same model)",
                "median s",
                "min s",
                "max s",
                "CPU s",
                "chunks",
                "texts through the model",
            ],
            rows,
        )
    )
    ours_t, ours_c = (
        med["explorer semantic (default: contextual)"],
        cmed["explorer semantic (default: contextual)"],
    )
    for peer in [k for k in contenders if not k.startswith("explorer")]:
        print(f"default vs {peer}: {med[peer] / ours_t:.2f}x wall, {cmed[peer] / ours_c:.2f}x CPU")
    if not args.no_int8:
        q = "explorer semantic, int8 model (option)"
        lc = "LangChain SemanticChunker (its regex)"
        print(f"int8 option vs {lc}: {med[lc] / med[q]:.2f}x wall, {cmed[lc] / cmed[q]:.2f}x CPU")

    # warm: threshold change with cached vectors (what the Semantic page does)
    warm_ctx = Context(embedder=base.sharing_model(EmbeddingCache.memory()))
    sem.chunk(doc, params, warm_ctx)
    t_warm, _ = median_time(
        lambda: sem.chunk(doc, {**params, "breakpoint_amount": 90}, warm_ctx), repeat=5, warmup=1
    )
    print(f"threshold change with cached vectors (warm re-chunk): {t_warm * 1000:.0f} ms median")

    # -- agreement with LangChain on the same sentences, per corpus -------------------------------
    names = ["wikitexts.md"] if args.no_corpora else sorted(p.name for p in CORPORA.glob("*.md"))
    rows2 = []
    summary: dict[str, list[float]] = {}
    for corpus in names:
        ctext = prose(args.chars, corpus)
        cdoc = Document(f"{corpus}[:100k]", "text", ctext)
        csents = [ctext[s:e] for s, e in sentence_spans(ctext)]
        rec = RecordingEmbeddings(model)
        lc_chunks = langchain(csents, rec).split_text(ctext)
        lc_d = _distances(rec.last)
        assert lc_breaks(lc_chunks, csents) == _breaks(lc_d, 95), (
            "LangChain's chunks and its distances disagree"
        )
        ctx = Context(embedder=base.sharing_model(EmbeddingCache.memory()))
        variants = {
            "contextual (default)": semantic_curve(cdoc, params, ctx).distances,
            "pooled": semantic_curve(cdoc, {**params, "window_embedding": "pooled"}, ctx).distances,
        }
        if not args.no_int8:
            qctx = Context(embedder=get_embedder(quantize=True).sharing_model(EmbeddingCache.memory()))
            variants["contextual, int8 model"] = semantic_curve(cdoc, params, qctx).distances
        if args.noise_floor:
            rec_q = RecordingEmbeddings(get_embedder(quantize=True)._load())
            langchain(csents, rec_q).split_text(ctext)
            variants["LangChain itself, int8 model"] = _distances(rec_q.last)
        for name, d in variants.items():
            corr = float(np.corrcoef(lc_d, d)[0, 1])
            cells = [corpus.removesuffix(".md"), len(csents), name, corr]
            for pct in (90, 95):
                ref, got = _breaks(lc_d, pct), _breaks(d, pct)
                cells += [len(ref), _recall(ref, got, 0) * 100, _recall(ref, got, 1) * 100]
                summary.setdefault(f"{name} p{pct}", []).append(_recall(ref, got, 1) * 100)
            rows2.append(cells)
    print(
        "\nagreement with LangChain's breakpoints (buffer 1, percentile mode, LangChain run on the same "
        "sentences; % of LangChain's breakpoints that ours reproduces exactly / within ±1 sentence):"
    )
    print(
        table(
            [
                "corpus",
                "sentences",
                "our distances",
                "curve corr.",
                "LC p90",
                "exact %",
                "±1 %",
                "LC p95",
                "exact %",
                "±1 %",
            ],
            rows2,
        )
    )
    print("\nmean over corpora, within ±1 sentence:")
    for key, vals in summary.items():
        print(f"  {key}: {statistics.mean(vals):.1f} % (min {min(vals):.1f}, max {max(vals):.1f})")


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
