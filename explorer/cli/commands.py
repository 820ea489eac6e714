"""The commands that list, show and chunk: ``strategies``, ``models``, ``text``, ``chunk`` and
``compare``.

Why apart from :mod:`explorer.cli.scores`: these need no questions; each reads its input through
:mod:`explorer.cli.inputs` and writes through :mod:`explorer.cli.output`.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from explorer.cli import inputs
from explorer.cli.output import progress_line, write
from explorer.cli.terminal import say_line
from explorer.errors import ParamError


def cmd_strategies(args: argparse.Namespace) -> int:
    from explorer.strategies import all_strategies
    from explorer.strategies.registry import reference_markdown

    if getattr(args, "format", "json") == "markdown":
        write(reference_markdown())
        return 0
    out = [
        {
            "name": s.name,
            "description": s.description,
            "needs_embedder": s.needs_embedder,
            "params": [p.to_dict() for p in s.params],
        }
        for s in all_strategies()
    ]
    write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from explorer.embedding.embedder import get_embedder
    from explorer.models.registry import DEFAULT_MODEL, MODELS, get_spec

    if args.build is not None:
        for name in args.build or [m.name for m in MODELS]:
            spec = get_spec(name)
            say_line(f"preparing {spec.name} (a minute or two where its files are not built yet)…")
            t0 = time.perf_counter()
            emb = get_embedder(spec.name)
            how = f"{emb.backend}" + (f" (fell back: {emb.fallback})" if emb.fallback else "")
            check = getattr(emb, "check", {})
            cos = f", cosine to float32 min {check['min_cosine']:.5f}" if check.get("min_cosine") else ""
            say_line(f"{spec.name}: ready in {time.perf_counter() - t0:.1f} s, backend {how}{cos}")
        return 0
    rows = [
        {
            "name": m.name,
            "default": m.name == DEFAULT_MODEL,
            "languages": m.languages,
            "token_limit": m.token_limit,
            "dim": m.dim,
            "licence": m.licence,
            "package": m.package,
            "speed": m.speed,
            "prefixes": [m.query_prefix, m.passage_prefix] if m.query_prefix else [],
        }
        for m in MODELS
    ]
    write(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    return 0


def cmd_text(args: argparse.Namespace) -> int:
    if (args.path is None) == (args.sample is None):
        raise ParamError("give one document: a PATH or --sample NAME")
    paths, samples = ([args.path], []) if args.path is not None else ([], [args.sample])
    (doc,) = inputs.load_docs(paths, args.cleanup, samples)
    write(doc.text)
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from explorer.export.data import export_chunks
    from explorer.strategies.invariants import invariant_errors

    (config,) = inputs.configs_from_args(args, many=False)
    ctx = inputs.make_context(args.model, quantize=args.int8, backend=args.backend)
    docs = inputs.load_docs(args.paths, args.cleanup, args.samples)
    from explorer.strategies import get_strategy

    strategy = get_strategy(config.strategy)
    chunks = []
    bad = 0
    for doc in docs:
        doc_chunks = strategy.chunk(doc, config.param_dict, ctx)
        if args.check:
            p = config.param_dict
            size = (p.get("chunk_size") or None) if p.get("length") != "words" else None
            for err in invariant_errors(doc, doc_chunks, size):
                say_line(f"invariant: {doc.name}: {err}")
                bad += 1
        chunks.extend(doc_chunks)
    if args.stats:
        from explorer.evaluation.chunk_metrics import chunk_stats
        from explorer.models.paths import max_seq_length

        stats = chunk_stats(
            chunks, docs, token_length=ctx.length("tokens"), max_tokens=max_seq_length(args.model)
        )
        write(json.dumps({"strategy": config.display, **stats.to_dict()}, indent=2) + "\n")
    else:
        write(export_chunks(chunks, args.format))
    return inputs.EXIT_CHECK_FAILED if bad else 0


def _hits_json(hits: list, question: str, texts: dict[str, str], index: Any, qv: Any) -> list[dict]:
    """Each hit as JSON, with its document's id, ``matched``: the offsets of the question's words
    in it, as BM25 matches them (what the app underlines), and, where pieces score the chunks,
    ``best_piece``: its offsets, its cosine and the chunk's own (what the app's card says)."""
    from explorer.retrieval.lexical import matched_spans

    languages = index.stemmed_languages()
    pieces = index.pieces if qv is not None and index.options.piece_chars else None
    out = []
    for h in hits:
        c = h.chunk
        d = h.to_dict() | {"doc_id": c.doc_id, "matched": matched_spans(texts[c.doc_id], c.start, c.end, question, languages)}
        row = index.positions[(c.doc_id, c.start)]
        best = pieces.best_piece(qv[0], row) if pieces is not None else None
        if best is not None:
            own = float(index.vectors[row] @ qv[0])
            d["best_piece"] = {"start": best.start, "end": best.end, "cosine": round(best.cosine, 6), "chunk_cosine": round(own, 6)}
        out.append(d)
    return out


def _echoed(config: Any, set_names: set[str], docs: list, ctx: Any) -> dict[str, Any]:
    """``config`` as compare's output echoes it: every parameter in effect, but for semantic's
    ``window_embedding`` where the user did not set it and the model could not run it. Why: the
    onnx backend has no contextual pass, so windows were pooled from sentence vectors while the
    output said ``"window_embedding": "contextual"``; one the user set stays as they set it."""
    d = config.to_dict()
    if config.strategy != "semantic" or "window_embedding" in set_names or not docs:
        return d
    from explorer.strategies.semantic import semantic_curve

    used = semantic_curve(docs[0], config.param_dict, ctx).window_embedding  # cached by the chunking
    if used != d["params"].get("window_embedding"):
        d["params"].pop("window_embedding", None)
    return d


def cmd_compare(args: argparse.Namespace) -> int:
    from explorer.retrieval.ranking import retrieve
    from explorer.retrieval.search import build_index

    configs = inputs.configs_from_args(args, many=True)
    options = inputs.embed_options(args, say_unused=True)
    if args.k < 1:
        raise ParamError(f"--k {args.k} must be at least 1")
    if not args.question.strip():
        raise ParamError("--question is empty")
    progress = progress_line(args)
    ctx = inputs.make_context(args.model, progress, args.int8, args.backend)
    docs = inputs.load_docs(args.paths, args.cleanup, args.samples)
    qv = None if args.retriever == "bm25" else ctx.get_embedder().encode_queries([args.question])
    texts = {d.id: d.text for d in docs}
    out = []
    for config, set_names in zip(configs, inputs.user_sets(args), strict=True):
        progress.step(config.display)
        index = build_index(docs, config, ctx, options, progress, retriever=args.retriever)
        hits = retrieve(index, [args.question], args.k, args.retriever, qv)[0]
        out.append(
            {
                "strategy": config.display,
                "config": _echoed(config, set_names, docs, ctx),
                "retriever": args.retriever,
                "chunks": len(index.chunks),
                "hits": _hits_json(hits, args.question, texts, index, qv),
            }
        )
    write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0
