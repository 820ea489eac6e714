"""Chunking throughput on ~1 MB of English prose: ours vs LangChain, semchunk and Chonkie.

Run: ``.venv/bin/python bench/bench_chunking.py [--chars N] [--repeat R]``. Everything runs in
this one process on the same text (the Chroma corpora concatenated), median of R runs. It also
checks that ``recursive`` returned exactly LangChain's chunks and counts how many of
LangChain's ``add_start_index`` offsets point at the wrong copy of repeated text.

Peers are compared where the task is comparable; their rules differ in places (noted in the
table): Chonkie's RecursiveChunker uses its own delimiter levels and no overlap, semchunk its
own separator hierarchy, and Chonkie's TokenChunker counts tokens without [CLS]/[SEP].
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")

from common import chroma_text, median_time, megabytes, table

from explorer import Context, Document, get_strategy
from explorer.strategies.splitting import RecursiveSplitter
from explorer.text import token_cache


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=1_000_000, help="text size in characters")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per row (median)")
    args = ap.parse_args()

    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = chroma_text(args.chars)
    mb = megabytes(text)
    doc = Document("chroma.md", "text", text)
    ctx = Context()
    ctx.length("tokens")("warm up")  # load the tokenizer outside the timings
    recursive, fixed = get_strategy("recursive"), get_strategy("fixed")
    print(
        f"text: {len(text):,} characters, {mb:.2f} MB UTF-8 (Chroma corpora); median of {args.repeat} runs\n"
    )

    groups: list[tuple[str, list[tuple[str, float, int, str]]]] = []

    def timed(rows, name, fn, note="", repeat=args.repeat, warmup=1):
        t, result = median_time(fn, repeat=repeat, warmup=warmup)
        rows.append((name, t, len(result), note))
        return result

    # -- characters, LangChain's algorithm with our defaults (1000 / 200) ----------------------
    rows: list = []
    lc = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)
    lc_idx = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200, add_start_index=True)
    lc_chunks = timed(rows, "LangChain RecursiveCharacterTextSplitter", lambda: lc.split_text(text))
    lc_docs = timed(
        rows, "LangChain, add_start_index=True", lambda: lc_idx.create_documents([text]), "str.find"
    )
    params = {"chunk_size": 1000, "chunk_overlap": 200}
    ours = timed(
        rows, "ours recursive: Chunk objects", lambda: recursive.chunk(doc, params, ctx), "exact offsets"
    )
    timed(
        rows,
        "ours recursive: spans only",
        lambda: RecursiveSplitter(text, chunk_size=1000, chunk_overlap=200).split(),
        "exact offsets",
    )
    timed(rows, "ours fixed (1000/200 chars)", lambda: fixed.chunk(doc, params, ctx), "no structure")
    try:
        import semchunk

        timed(
            rows,
            "semchunk (len, overlap 200)",
            lambda: semchunk.chunk(text, 1000, len, offsets=True, overlap=200)[0],
            "own separators",
        )
    except ImportError:
        pass
    groups.append(("characters, chunk_size=1000, chunk_overlap=200", rows))
    same = [c.text for c in ours] == lc_chunks
    wrong = sum(d.metadata["start_index"] != c.start for d, c in zip(lc_docs, ours, strict=False))

    # -- characters, no overlap (what Chonkie's RecursiveChunker does) -------------------------
    rows = []
    lc0 = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=0)
    timed(rows, "LangChain RecursiveCharacterTextSplitter", lambda: lc0.split_text(text))
    params0 = {"chunk_size": 1000, "chunk_overlap": 0}
    timed(rows, "ours recursive: Chunk objects", lambda: recursive.chunk(doc, params0, ctx), "exact offsets")
    timed(rows, "ours fixed", lambda: fixed.chunk(doc, params0, ctx), "no structure")
    try:
        import semchunk

        timed(
            rows, "semchunk (len)", lambda: semchunk.chunk(text, 1000, len, offsets=True)[0], "own separators"
        )
    except ImportError:
        pass
    try:
        from chonkie import RecursiveChunker

        ch = RecursiveChunker(tokenizer="character", chunk_size=1000)
        timed(rows, "Chonkie RecursiveChunker (character)", lambda: ch.chunk(text), "own delimiter levels")
    except ImportError:
        pass
    groups.append(("characters, chunk_size=1000, no overlap", rows))

    # -- model tokens: MiniLM word pieces and e5 SentencePiece, incl. special tokens ------------
    def token_group(model: str | None) -> bool:
        """Rows for sizes in ``model``'s tokens; True if recursive == LangChain."""
        rows = []
        mctx = Context(tokens_model=model) if model else ctx
        mtok = mctx.length("tokens")
        lct = RecursiveCharacterTextSplitter(chunk_size=256, chunk_overlap=0, length_function=mtok)
        slow = max(1, min(args.repeat, 3))  # LangChain tokenizes every piece separately: seconds per run
        lct_chunks = timed(
            rows,
            "LangChain RecursiveCharacterTextSplitter",
            lambda: lct.split_text(text),
            repeat=slow,
            warmup=0,
        )
        paramst = {"chunk_size": 256, "chunk_overlap": 0, "length": "tokens"}

        def cold(fn):  # every run tokenises the document again (no index kept)
            def run():
                token_cache._indexes.clear()
                return fn()

            return run

        ours_t = timed(
            rows,
            "ours recursive, cold (document tokenised in the run)",
            cold(lambda: recursive.chunk(doc, paramst, mctx)),
            "exact offsets",
        )
        timed(
            rows,
            "ours recursive, warm (token index kept, as in the app)",
            lambda: recursive.chunk(doc, paramst, mctx),
            "exact offsets",
        )
        timed(
            rows,
            "ours fixed (256 tokens), cold",
            cold(lambda: fixed.chunk(doc, paramst, mctx)),
            "no structure",
        )
        timed(rows, "ours fixed (256 tokens), warm", lambda: fixed.chunk(doc, paramst, mctx), "no structure")
        try:
            from chonkie import TokenChunker

            tc = TokenChunker(tokenizer=mtok.tokenizer, chunk_size=256 - mtok.special, chunk_overlap=0)
            timed(
                rows,
                "Chonkie TokenChunker (size minus special tokens)",
                lambda: tc.chunk(text),
                "no structure",
            )
        except Exception as err:  # a peer's API change must not stop the benchmark
            print(f"(Chonkie TokenChunker skipped: {err})")
        try:
            import semchunk

            timed(
                rows,
                "semchunk, cold (a fresh counter each run)",
                lambda: semchunk.chunk(text, 256, lambda t: mtok(t), offsets=True)[0],
                "own separators",
                repeat=slow,
                warmup=0,
            )
            timed(
                rows,
                "semchunk, warm (its memo of counts kept between runs)",
                lambda: semchunk.chunk(text, 256, mtok, offsets=True)[0],
                "own separators",
            )
        except ImportError:
            pass
        label = model or "multilingual-e5-small (default)"
        groups.append((f"{label} tokens incl. special tokens, chunk_size=256, no overlap", rows))
        return [c.text for c in ours_t] == lct_chunks

    same_t = {
        model or "multilingual-e5-small (default)": token_group(model) for model in ("all-MiniLM-L6-v2", None)
    }

    for title, rows in groups:
        base = rows[0][1]
        print(f"## {title}\n")
        print(
            table(
                ["chunker", "MB/s", "median ms", "chunks", "× LangChain", "note"],
                [(n, mb / t, t * 1000, k, base / t, note) for n, t, k, note in rows],
            )
        )
        print()
    print(f"recursive == LangChain chunk for chunk (chars 1000/200): {same}")
    for label, same_model in same_t.items():
        print(f"recursive == LangChain chunk for chunk ({label} tokens 256): {same_model}")
    print(
        f"LangChain add_start_index offsets that differ from ours (repeated text): {wrong} of {len(lc_docs)}"
    )


if __name__ == "__main__":
    main()
