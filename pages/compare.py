"""Compare: 2 to 6 configurations on the same document, side by side, with sizes and metrics."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from explorer.errors import ExplorerError
from explorer.render.html import legend, render_chunks
from pages import _common as c

S = st.session_state
#: Chart colours per configuration (Okabe–Ito, as the text highlights).
CHART_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")

c.page_header(
    "Compare",
    "Two to six configurations on the same text: where each one cuts, how big its chunks are, "
    "and what the metrics say.",
)
doc = c.doc_picker()
if doc is None:
    st.stop()
c.config_editor(multi=True, title="Configurations")
c.model_settings()
if len(S.configs) < 2:
    st.info(
        "Compare needs at least two configurations. **Add** in the sidebar copies the selected "
        "one; then change its strategy or parameters.",
        icon=":material/compare_arrows:",
    )
    st.button("Add a configuration", icon=":material/add:", on_click=c._duplicate_active, key="w.cmp_add")
    st.stop()

rows = []
for i, cfg in enumerate(S.configs):
    color = CHART_COLORS[i % len(CHART_COLORS)]
    try:
        config = c.config_of(cfg)
    except ExplorerError as err:
        rows.append({"label": c.config_label(cfg, i + 1), "color": color, "error": str(err)})
        continue
    out = c.chunk(doc, config)
    if out.pending:
        rows.append(
            {"label": f"{i + 1}. {config.display}", "color": color, "error": "", "pending": out.pending}
        )
        continue
    if not out.ok:
        rows.append({"label": f"{i + 1}. {config.display}", "color": color, "error": out.error})
        continue
    an = c.analyse(doc, config, out) if out.chunks else None
    rows.append(
        {
            "label": f"{i + 1}. {config.display}",
            "color": color,
            "config": config,
            "out": out,
            "an": an,
            "error": "",
        }
    )
good = [r for r in rows if not r["error"] and not r.get("pending") and r["an"] is not None]

view, sizes, metrics = st.tabs(["Side by side", "Chunk sizes", "Metrics"])

# -- side by side ---------------------------------------------------------------------------
with view:
    n_text = len(doc.text)
    ctl = st.columns([1, 1, 3], vertical_alignment="bottom")
    width = ctl[0].selectbox(
        "Window",
        [2_000, 5_000, 10_000, 20_000],
        index=1,
        format_func=lambda w: f"{w:,} characters",
        key="w.cmp_width",
    )
    if doc.pages:
        page = ctl[1].number_input("Page", 1, doc.pages[-1].number, step=1, key="w.cmp_page")
        lo = next(p.start for p in doc.pages if p.number == page)
    else:
        max_lo = max(0, n_text - width)
        lo = ctl[1].number_input("Start at character", 0, max_lo, step=500, key="w.cmp_lo") if max_lo else 0
    hi = min(n_text, lo + width)
    ctl[2].caption(f"Characters {lo:,}–{hi:,} of {n_text:,}: the same window for every configuration.")
    c.html(legend(selection=False))
    per_row = 2 if len(rows) == 4 else min(3, len(rows))
    for start in range(0, len(rows), per_row):
        cols = st.columns(per_row, gap="small")
        for col, r in zip(cols, rows[start : start + per_row], strict=False):
            with col:
                st.markdown(f"**{c.md(r['label'])}**")
                if r.get("pending"):
                    st.info(r["pending"], icon=":material/hourglass_top:")
                    continue
                if r["error"]:
                    st.error(r["error"], icon=":material/error:")
                    continue
                chunks, an = r["out"].chunks, r["an"]
                if an is None:
                    st.info("No chunks.")
                    continue
                st.caption(f"{len(chunks):,} chunks · mean {an.stats.chars.mean:,.0f} chars")
                flags = {i: f for i, f in enumerate(an.flags) if f}
                c.html(
                    render_chunks(doc.text, chunks, lo=lo, hi=hi, flags=flags, tokens=an.tokens, height=520)
                )

# -- sizes ----------------------------------------------------------------------------------
with sizes:
    if not good:
        st.info("No configuration produced chunks.")
    else:
        unit = st.segmented_control(
            "Size in", ["characters", "tokens"], default="characters", key="w.cmp_unit", required=True
        )
        limit = good[0]["an"].stats.max_tokens
        hist = go.Figure()
        box = go.Figure()
        for r in good:
            values = [ch.chars for ch in r["out"].chunks] if unit == "characters" else list(r["an"].tokens)
            hist.add_trace(
                go.Histogram(x=values, name=r["label"], marker_color=r["color"], opacity=0.6, nbinsx=40)
            )
            box.add_trace(
                go.Violin(
                    y=values,
                    name=r["label"],
                    line_color=r["color"],
                    box_visible=True,
                    meanline_visible=True,
                    points="outliers" if len(values) > 200 else "all",
                    jitter=0.3,
                )
            )
        x_title = "chunk size (characters)" if unit == "characters" else "chunk size (model tokens)"
        hist.update_layout(
            barmode="overlay",
            xaxis_title=x_title,
            yaxis_title="chunks",
            legend={"orientation": "h", "y": -0.25},
            margin={"t": 30, "b": 10, "l": 10, "r": 10},
            height=420,
        )
        box.update_layout(
            yaxis_title=x_title, showlegend=False, margin={"t": 30, "b": 10, "l": 10, "r": 10}, height=420
        )
        if unit == "tokens":
            hist.add_vline(
                x=limit, line_dash="dash", line_color="#c1121f", annotation_text=f"model limit {limit}"
            )
            box.add_hline(
                y=limit, line_dash="dash", line_color="#c1121f", annotation_text=f"model limit {limit}"
            )
        left, right = st.columns(2)
        left.plotly_chart(hist, key="w.cmp_hist")
        right.plotly_chart(box, key="w.cmp_violin")
        if unit == "tokens":
            st.caption(
                f"Chunks right of the red line are over the model's {limit}-token input (special "
                "tokens included): the model cuts them when it embeds them."
            )

# -- metrics --------------------------------------------------------------------------------
with metrics:
    if not good:
        st.info("No configuration produced chunks.")
    else:
        sem_key = "sem_stats"
        S.setdefault(sem_key, {})
        _phase, _found = c.job_result("cohesion")
        if _found:  # done, or stopped: the configurations finished before the stop
            S[sem_key].update(_found)
        records = []
        for r in good:
            s = r["an"].stats
            sem = S[sem_key].get((doc.id, r["config"], c.model_id()))
            rec = {
                "configuration": r["label"],
                "chunks": s.count,
                "mean chars": round(s.chars.mean),
                "median chars": s.chars.median,
                "CV": round(s.chars.cv, 2),
                "mean tokens": round(s.tokens.mean),
                "over limit %": round(100 * s.share("over_limit"), 1),
                "mid-sentence %": round(100 * s.share("mid_sentence"), 1),
                "mid-word %": round(100 * s.share("mid_word"), 1),
                "tiny": s.tiny,
                "duplicates": s.duplicate,
                "coverage %": round(100 * s.coverage, 1),
                "redundancy %": round(100 * s.redundancy, 1),
                "cohesion": None if sem is None or sem.cohesion is None else round(sem.cohesion, 3),
                "separation": None if sem is None or sem.separation is None else round(sem.separation, 3),
            }
            records.append(rec)
        table = pd.DataFrame(records)
        st.dataframe(table, hide_index=True, key="w.cmp_table")
        st.caption(
            "CV: standard deviation / mean of the sizes. Coverage: share of the text's non-space "
            "characters inside a chunk. Redundancy: characters in two or more chunks (overlap). "
            "Cohesion: how similar each chunk's sentences are to each other (higher is better); "
            "separation: similarity of neighbouring chunks (lower is better)."
        )
        missing_sem = [r for r in good if (doc.id, r["config"], c.model_id()) not in S[sem_key]]
        if missing_sem and st.button(
            "Compute cohesion and separation",
            icon=":material/memory:",
            key="w.cmp_sem",
            help="Embeds every chunk and its sentences with the model (cached: each text once), in "
            "the background: the progress and a Stop button show at the top of the page.",
        ):
            try:
                emb = c.embedder()
            except ExplorerError as err:
                st.error(c.err_text(err), icon=":material/error:")
            else:
                _items = [(r["label"], r["config"], r["out"].chunks) for r in missing_sem]
                _mid = c.model_id()

                def _cohesion(job):
                    from explorer.evaluation.metrics import semantic_stats

                    found: dict = {}
                    job.partial = found
                    for label, config, chunks in _items:
                        job.step(label)
                        found[(doc.id, config, _mid)] = semantic_stats(
                            list(chunks), doc, emb, progress=job.progress
                        )
                    return found

                c.start_job(
                    "cohesion",
                    ("cohesion", doc.id, tuple(i[1] for i in _items), _mid),
                    f"Cohesion and separation of {len(_items)} configuration{'s' if len(_items) != 1 else ''}",
                    _cohesion,
                    emb=emb,
                )
                st.rerun()
        numeric = [k for k in table.columns if k != "configuration" and table[k].notna().any()]
        metric = st.columns([1, 3])[0].selectbox(
            "Chart", numeric, index=numeric.index("CV") if "CV" in numeric else 0, key="w.cmp_metric"
        )
        fig = go.Figure(
            go.Bar(
                x=table["configuration"],
                y=table[metric],
                marker_color=[r["color"] for r in good],
                text=[
                    ("" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:g}")
                    for v in table[metric]
                ],
                textposition="outside",
            )
        )
        fig.update_layout(yaxis_title=metric, margin={"t": 30, "b": 10, "l": 10, "r": 10}, height=360)
        st.plotly_chart(fig, key="w.cmp_bar")

errors = [r for r in rows if r["error"]]
if (_job := c.session_job()) is not None and _job.kind == "cohesion":
    c.job_bar()
if errors:
    st.caption(f"{len(errors)} configuration(s) could not run; see their messages above.")
