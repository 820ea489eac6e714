"""The commands that score against gold answers, ``evaluate`` and ``sweep``, and the tables they
print (mean ± standard deviation over questions, in %).

Why a module of its own: both read a corpus and a question file the same way
(:func:`_eval_setup`) and print the same columns.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from explorer.cli import corpus, inputs
from explorer.cli.output import SKIP_HINT, markdown_table, progress_line, say_left_out, write
from explorer.errors import LoadError, ParamError
from explorer.evaluation.sweep_values import adjustments_said
from explorer.text.wording import brief_number, plural


def _eval_setup(args: argparse.Namespace):
    from explorer.evaluation.questions import NotLoaded, read_questions

    if args.k < 1:
        raise ParamError(f"--k {args.k} must be at least 1")
    options = inputs.embed_options(args, say_unused=True)
    progress = progress_line(args)
    ctx = inputs.make_context(args.model, progress, args.int8, args.backend)
    if args.preview and args.retriever != "bm25":
        from explorer.retrieval.vectors import check_preview_mode

        gap = check_preview_mode(ctx, options, force=args.preview == "force")
        name = ctx.get_embedder().name
        how = f"hit@5 up to {gap:.1f} points below exact for {name}, measured" if gap is not None else f"no measured gap for {name}"
        if args.preview == "force":
            how = f"forced; {how}"
        inputs.say(
            f"note: --preview: approximate results (one-pass vectors pooled from each document's token "
            f"vectors; {how}, bench/bench_late.py); run without --preview for exact ones"
        )
    docs = inputs.load_docs(args.corpus, args.cleanup, args.samples, last=False)  # the questions come next
    try:
        got = read_questions(args.questions, docs, skip_unloaded=args.skip_unloaded)
    except NotLoaded as err:
        raise LoadError(f"{err}{SKIP_HINT}") from None
    say_left_out(got.unloaded)
    return options, progress, ctx, docs, list(got.questions)


def _mode_args(args: argparse.Namespace) -> dict[str, Any]:
    return {"mode": "preview" if args.preview else "exact", "force_preview": args.preview == "force"}


def cmd_evaluate(args: argparse.Namespace) -> int:
    from explorer.evaluation.evaluate import evaluate

    configs = inputs.configs_from_args(args, many=True)
    if corpus.use_runner(args):  # streamed, document by document (explorer.cli.corpus)
        results, questions = corpus.run(args, configs)
    else:
        options, progress, ctx, docs, questions = _eval_setup(args)
        results = evaluate(
            docs, configs, questions, args.k, ctx, options, progress, progress.step, args.retriever, **_mode_args(args)
        )
    if args.format == "json":
        out = [r.to_dict(per_question=args.per_question) for r in results]
        for d in out if args.per_question else ():  # each row says which question it scores
            d["per_question"] = [{"question": q.text, **row} for q, row in zip(questions, d["per_question"], strict=True)]
        write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        if args.per_question:
            inputs.say("note: --per-question is written with --format json")
        write(results_table(results, len(questions), args.k, inputs.embed_options(args).label))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from explorer.evaluation.evaluate import sweep
    from explorer.evaluation.sweep_plan import check_runnable, parse_values, sweep_steps

    (base,) = inputs.configs_from_args(args, many=False)
    if len(args.vary) > 1:  # a second one silently replaced the first
        raise ParamError(f"give one --vary: a sweep varies one parameter (got {', '.join(map(repr, args.vary))})")
    (vary,) = args.vary
    param, values = _vary(vary, base) if "=" not in vary else parse_values(vary, base.strategy)
    # before the model and the documents: values out of bounds or in conflict, all of them
    check_runnable(sweep_steps(base, param, values, inputs.user_set_names(args)), f"--vary {vary!r}")
    if corpus.use_runner(args):
        rows, questions = corpus.sweep_rows(args, base, param, values)
    else:
        options, progress, ctx, docs, questions = _eval_setup(args)
        rows = sweep(
            docs, base, param, values, questions, args.k, ctx, options, progress, progress.step, args.retriever,
            **_mode_args(args), user_set=inputs.user_set_names(args),
        )
    if args.format == "json":
        write(json.dumps([r.to_dict() for r in rows], ensure_ascii=False, indent=2) + "\n")
    else:
        write(sweep_table(rows, base, len(questions), args.k, inputs.embed_options(args).label))
    return 0


def _vary(name: str, base: Any) -> tuple[str, list[Any]]:
    """``--vary PARAM`` alone: five values around ``base``'s own (as the app's sweep offers)."""
    from explorer.evaluation.sweep_values import suggested_values
    from explorer.strategies import get_strategy

    param = get_strategy(base.strategy).param(name.strip()).name  # ParamError naming it
    values = suggested_values([base], param)
    if not values:
        raise ParamError(f"--vary {param}: not a number parameter; give its values: {param}=V1,V2,...")
    return param, values


_COLS = (
    ("recall", "Recall"),
    ("precision", "Precision"),
    ("iou", "IoU"),
    ("precision_omega", "Precision_Ω"),
    ("hit_rate", "Hit rate"),
    ("mrr", "MRR"),
)


def _metric_cells(result) -> list[str]:
    return [getattr(result.scores, key).pct() for key, _ in _COLS]


#: The cost columns (explorer.evaluation.cost), after the scores.
_COST_COLS = (("vectors", "Vectors"), ("index size", "Index"), ("embedding", "Embedding"))


def _cost_cells(result, k: int) -> list[str]:
    if result.cost is None:
        return ["-"] * (len(_COST_COLS) + 1)
    cells = result.cost.cells()
    return [*(cells[key] for key, _ in _COST_COLS), cells[f"LLM tokens @{k}"]]


def results_table(results: Sequence[Any], n_questions: int, k: int, embedded: str = "") -> str:
    header = ["Strategy", "Chunks", "Mean chars", "Mean tokens", *(f"{t} %" for _, t in _COLS)]
    header += [*(t for _, t in _COST_COLS), f"LLM tokens @{k}"]
    rows = [
        [r.name, f"{r.chunk_count:,}", f"{r.mean_chars:.0f}", f"{r.mean_tokens:.0f}", *_metric_cells(r), *cost]
        for r in results
        for cost in [_cost_cells(r, k)]
    ]
    how = _retriever_note(r.retriever for r in results) + _mode_note(r.mode for r in results)
    how += f", {embedded}" if embedded else ""
    note = (
        f"\n{plural(n_questions, 'question')}, top {k}{how}; mean ± standard deviation over questions, in %. "
        f"Index: bytes of the vector index; Embedding: time to embed the chunks (0 s when every vector "
        f"came from the cache); LLM tokens @{k}: cl100k tokens of the top {k} chunks, per question.\n"
    )
    return markdown_table(header, rows) + note


def _retriever_note(retrievers: Any) -> str:
    """The note's ", bm25 retrieval" (or hybrid) under a table; nothing for the default dense."""
    used = sorted({r for r in retrievers if r != "dense"})
    return f", {'/'.join(used)} retrieval" if used else ""


def _mode_note(modes: Any) -> str:
    """", preview vectors (approximate)" under a table of preview results; nothing for exact."""
    return ", preview vectors (approximate)" if "preview" in set(modes) else ""


def sweep_table(rows: Sequence[Any], base: Any, n_questions: int, k: int, embedded: str = "") -> str:
    header = [
        rows[0].param if rows else "value",
        "Chunks",
        "Mean chars",
        "Mean tokens",
        *(f"{t} %" for _, t in _COLS),
    ]
    body = []
    for row in rows:
        value = json.dumps(list(row.value)) if isinstance(row.value, tuple) else str(row.value)
        if isinstance(row.value, int | float) and not isinstance(row.value, bool):
            value = brief_number(row.value)  # a 300-digit value out of range widened the whole table
        if row.result is None:
            body.append([value, "-", "-", "-", f"skipped: {row.error}", *([""] * (len(_COLS) - 1))])
        else:
            r = row.result
            body.append(
                [
                    value,
                    f"{r.chunk_count:,}",
                    f"{r.mean_chars:.0f}",
                    f"{r.mean_tokens:.0f}",
                    *_metric_cells(r),
                ]
            )
    how = _retriever_note(row.result.retriever for row in rows if row.result is not None)
    how += _mode_note(row.result.mode for row in rows if row.result is not None)
    how += f", {embedded}" if embedded else ""
    note = f"\n{base.display}, {plural(n_questions, 'question')}, top {k}{how}; mean ± standard deviation over questions, in %.\n"
    moved = "".join(f"{said}\n" for said in adjustments_said(rows))
    return markdown_table(header, body) + note + (f"Adjusted with the value:\n{moved}" if moved else "")
