"""Evaluate's jobs: the evaluation and the sweep, run in the background, and the ones a link
or a reload names, run again when Evaluate opens."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.errors import ExplorerError
from explorer.evaluation import evaluate as evaluate_mod
from explorer.evaluation import sweep_plan
from explorer.evaluation.sweep_values import format_values, suggested_values
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.params import FLOAT, INT
from explorer.text.wording import plural
from pages.ui.background import session_job, start_job
from pages.ui.compute import index_key
from pages.ui.configs import labels_for
from pages.ui.model import context_maker
from pages.ui.safe import clip, err_text, md
from pages.ui.state import W, session
from pages.ui.url_evaluate import MAX_SWEEP_VALUES_CHARS


class Run:
    """What an evaluation or a sweep of this run is over: documents, questions, top k, retriever."""

    def __init__(
        self,
        docs: Sequence[Document],
        questions: list,
        k: int,
        options: Any,
        retriever: str,
        user_sets: Mapping[StrategyConfig, frozenset[str]] | None = None,
    ) -> None:
        self.docs, self.questions, self.k = list(docs), tuple(questions), k
        self.options, self.retriever = options, retriever
        #: Per configuration, the parameters its user set: in a sweep the others follow the swept
        #: one as the sidebar has them follow (chunk_overlap under a smaller chunk_size), where
        #: "chunk_overlap=200 must be smaller than chunk_size=100" failed the step.
        self.user_sets = dict(user_sets or {})

    def inputs(self, configs: Sequence[StrategyConfig], **extra: Any) -> dict[str, Any]:
        """What results are computed on, by the name a note gives it: results kept on the page
        are compared with the page's inputs, so results that no longer match say so."""
        from pages.ui.model import model_id

        out = {
            "questions": self.questions,
            "documents": tuple(d.id for d in self.docs),
            "configurations": tuple(dict.fromkeys(configs)),
            "top k": self.k,
            "retriever": self.retriever,
            "what is embedded": self.options,
            "model": model_id(),
            **extra,
        }
        if "parameter" in extra:  # a sweep: which parameters follow the swept one
            out["parameters you set"] = tuple(tuple(sorted(self.user_sets.get(c, ()))) for c in out["configurations"])
        return out

    def start_evaluation(self, configs: list[StrategyConfig], emb: Any) -> None:
        make = context_maker(emb)
        docs, qs, k, options, retriever = self.docs, self.questions, self.k, self.options, self.retriever
        inputs = self.inputs(configs)

        def work(job: Any) -> tuple:
            results = evaluate_mod.evaluate(
                docs,
                configs,
                list(qs),
                k,
                make(job.progress),
                options,
                job.progress,
                job.step,
                retriever=retriever,
            )
            meta = {"questions": len(qs), "k": k, "retriever": retriever, "embedded": options.label}
            return results, meta | {"inputs": inputs}

        n = len(configs)
        start_job(
            "eval",
            ("eval", *index_key(docs, configs, options), qs, k, retriever),
            f"Evaluating {plural(n, 'configuration')} on {plural(len(qs), 'question')}",
            work,
            emb=emb,
            link={"ev": "1"},
            inputs=inputs,
        )

    def start_sweep(self, plans: list[tuple], param: str, spec: str, emb: Any) -> None:
        """One value at a time, so that Stop keeps the values already scored (``job.partial``)."""
        make = context_maker(emb)
        docs, qs, k, options, retriever = self.docs, self.questions, self.k, self.options, self.retriever
        user_sets = self.user_sets
        total = sum(len(values) for _, _, values in plans)
        names = labels_for([config for config, _, _ in plans])

        inputs = self.inputs([config for config, _, _ in plans], parameter=param)

        def work(job: Any) -> dict:
            lines: dict = {}
            job.partial = {"param": param, "spec": spec, "lines": lines, "retriever": retriever, "k": k, "inputs": inputs}
            job.partial["embedded"] = options.label
            n = 0
            for config, name, values in plans:
                rows = lines.setdefault(names[config], [])
                for value in values:
                    n += 1
                    job.step(f"step {n} of {total}, {names[config]} with {name} = {value}")
                    rows.extend(
                        evaluate_mod.sweep(
                            docs,
                            config,
                            name,
                            [value],
                            list(qs),
                            k,
                            make(job.progress),
                            options,
                            job.progress,
                            retriever=retriever,
                            user_set=user_sets.get(config),
                        )
                    )
            return job.partial

        start_job(
            "sweep",
            (
                "sweep",
                *index_key(docs, [p[0] for p in plans], options),
                *(tuple(sorted(user_sets.get(p[0], ()))) for p in plans),
                param,
                spec,
                qs,
                k,
                retriever,
            ),
            f"Sweep of {param} ({total} runs)",
            work,
            emb=emb,
            link={"sw": param, "swv": spec[:MAX_SWEEP_VALUES_CHARS]},
            inputs=inputs,
        )


def numeric_params(configs: Sequence[StrategyConfig]) -> list[str]:
    """The numeric parameters of the configurations' strategies, each once."""
    numeric: list[str] = []
    for config in configs:
        for p in get_strategy(config.strategy).params:
            if p.kind in (INT, FLOAT) and p.name not in numeric:
                numeric.append(p.name)
    return numeric


def suggest_sweep_values(configs: Sequence[StrategyConfig], param: str, *, force: bool = False) -> None:
    """Fill the sweep's Values box with values of ``param`` around the configurations' own
    (:func:`explorer.evaluation.sweep_values.suggested_values`): when it is drawn the first
    time, or with ``force`` (the parameter changed). What the user typed stays otherwise."""
    if force or not session.has_widget(W.SWEEP_VALUES):
        session.seed(W.SWEEP_VALUES, format_values(suggested_values(configs, param)))


def sweep_plans(
    configs: Sequence[StrategyConfig],
    param: str,
    spec: str,
    complain: Callable[[str], None] | None = None,
    user_sets: Mapping[StrategyConfig, frozenset[str]] | None = None,
) -> list[tuple]:
    """``(config, parameter, values)`` for each configuration whose strategy has ``param``; none
    (after ``complain``, by default an error where the page is) when ``spec`` is not a range or
    list of values of its kind, or when no value can run for any configuration (``user_sets``: as
    :class:`Run` has them). A value out of bounds for some runs: the sweep skips it, with why."""
    said = f"Values {clip(spec, 60)!r}"
    plans = []
    try:
        for config in dict.fromkeys(configs):
            if param in get_strategy(config.strategy).param_names():
                plans.append((config, *sweep_plan.parse_values(f"{param}={spec}", config.strategy, said)))
        user_sets = user_sets or {}
        steps = [s for c, name, values in plans for s in sweep_plan.sweep_steps(c, name, values, user_sets.get(c))]
        sweep_plan.check_runnable(steps, said)
    except ExplorerError as err:
        if complain is None:
            st.error(md(err_text(err)), icon=":material/error:")
        else:
            complain(err_text(err))
        return []
    return plans


def _link_problem(msg: str) -> None:
    """What a link's Evaluate values could not run: a notice at the top of the page until
    dismissed (drawn where it was found, it flashed by unseen as the page ran again)."""
    session.notices.append(msg)
    st.rerun()


def run_linked(run: Run, pairs: list[StrategyConfig], questions: list, get_emb: Any) -> None:
    """The evaluation, then the sweep, that a link or a reload showed, run again one at a time
    (a session runs one job): each starts once nothing else of the session runs. Called before
    the results are read, so that a quick one shows in the run that started it."""
    if not (session.eval_pending or session.sweep_pending):
        return
    if not questions or not pairs:
        session.eval_pending, session.sweep_pending = False, None
        _link_problem("The link's results are not run again: there are no questions or configurations to score.")
    job = session_job()
    if job is not None and not job.finished and job.kind != "warm":
        return  # the next run after it ends starts what is left
    emb = get_emb()
    if emb is None:
        session.eval_pending, session.sweep_pending = False, None
        return
    if session.eval_pending:
        session.eval_pending = False
        run.start_evaluation(list(dict.fromkeys(pairs)), emb)
        return
    param, spec = session.sweep_pending or ("", "")
    session.sweep_pending = None
    if not any(param in get_strategy(c.strategy).param_names() for c in pairs):
        _link_problem(f"The link's sweep of {clip(param, 40)} is not run: no configuration here has it.")
    plans = sweep_plans(
        pairs,
        param,
        spec,
        lambda why: _link_problem(f"The link's sweep of {clip(param, 40)} is not run: {why}"),
        run.user_sets,
    )
    if plans:
        session.seed(W.SWEEP_PARAM, param)  # drawn below: the boxes say what the curves are of
        session.seed(W.SWEEP_VALUES, spec)
        run.start_sweep(plans, param, spec, emb)


def rerun_for_linked() -> None:
    """At the page's end: a link's sweep waits for its evaluation; when that ended within this
    run (a warm cache), run again so that the sweep starts (it is then no longer pending)."""
    job = session_job()
    if session.sweep_pending and (job is None or job.finished):
        st.rerun()
