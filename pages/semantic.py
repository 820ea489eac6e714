"""Semantic: the distance curve between neighbouring sentences, its threshold, and the chunks."""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go
import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.render.html import legend, render_chunks, window_around
from pages import _common as c

S = st.session_state

c.page_header(
    "Semantic",
    "Where the semantic strategy cuts: the distance between neighbouring sentences, the "
    "threshold that turns a jump into a boundary, and the chunks that result.",
)
doc = c.doc_picker()
if doc is None:
    st.stop()
st.sidebar.subheader("Semantic strategy")
config = c.strategy_widgets(S.sem_cfg, st.sidebar, fixed_strategy=True)
c.model_settings()
if config is None:
    st.warning("Fix the parameters in the sidebar.", icon=":material/tune:")
    st.stop()

from explorer.strategies.semantic import semantic_curve  # noqa: E402  (after the guard above)
from explorer.text.chunk import END_OF_TEXT, SEMANTIC  # noqa: E402

try:
    emb = c.embedder()
except ExplorerError as err:
    st.error(c.err_text(err), icon=":material/error:")
    st.stop()
make = c.context_maker(emb)
chunk_key = (doc.id, config, c.model_id())


def _curve(job):
    """The distance curve and the chunks (both from the same cached sentence vectors)."""
    ctx = make(job.progress)
    curve = semantic_curve(doc, config.param_dict, ctx)
    c.chunk_now(doc, config, ctx, chunk_key)
    return curve


try:
    phase, curve = c.background(
        "curve",
        ("curve", doc.id, config, c.model_id()),
        f"Embedding the sentences of {c.clip(doc.name, 40)}",
        _curve,
        emb=emb,
    )
except ExplorerError as err:
    st.error(c.err_text(err), icon=":material/error:")
    st.stop()
if phase != jobs.DONE:
    c.waiting(phase, "The distance curve and the chunks")
    st.stop()

out = c.chunk(doc, config)
if out.pending:
    c.waiting(jobs.QUEUED, "The chunks")
    st.stop()
if not out.ok:
    st.error(out.error, icon=":material/error:")
    st.stop()
chunks = out.chunks
points = curve.points
gradient = curve.mode == "gradient"
y_name = "distance gradient" if gradient else "cosine distance"

cols = st.columns(5)
cols[0].metric("Sentences", f"{len(curve.sentences):,}")
cols[1].metric("Breakpoints", f"{len(curve.breaks):,}")
_capped = sum(1 for ch in chunks if not ch.reason.startswith((SEMANTIC, END_OF_TEXT)))
_p = config.param_dict
cols[2].metric(
    "Chunks",
    f"{len(chunks):,}",
    help=(
        f"{len(chunks) - _capped:,} end at a breakpoint or the end of the text; {_capped:,} more "
        f"where a group was over max_chunk_size ({_p['max_chunk_size']} {_p['length']}), cut with "
        "the recursive strategy."
        if _capped
        else "Each chunk ends at a breakpoint or at the end of the text."
    )
    + (
        " Breakpoints that made chunks under min_chunk_size were merged away."
        if _p.get("min_chunk_size")
        else ""
    ),
)
thr = curve.threshold
cols[3].metric(
    "Threshold",
    "—" if math.isnan(thr) else f"{thr:.3f}",
    help=f"Mode {curve.mode}, amount {curve.amount:g}: a gap whose {y_name} is above it becomes a boundary.",
)
mean_chars = sum(ch.chars for ch in chunks) / len(chunks) if chunks else 0
cols[4].metric("Mean chunk", f"{mean_chars:,.0f} chars")

if len(points) < 2:
    st.info("This document has fewer than three sentences: there is no curve to draw.")
else:

    def _sent(span: tuple[int, int]) -> str:
        return html.escape(c.clip(" ".join(doc.text[span[0] : span[1]].split()), 110))

    xs = [p.position for p in points]
    ys = [p.score for p in points]
    hover = [
        [i, _sent(p.left), _sent(p.right), p.similarity, "boundary" if p.is_break else "no boundary"]
        for i, p in enumerate(points)
    ]
    scatter = go.Scattergl if len(points) > 3000 else go.Scatter
    fig = go.Figure()
    fig.add_trace(
        scatter(
            x=xs,
            y=ys,
            mode="lines",
            line={"color": "#0072B2", "width": 1.4},
            name=y_name,
            customdata=hover,
            hovertemplate="gap %{customdata[0]} · "
            + y_name
            + " %{y:.3f} · similarity %{customdata[3]:.3f}<br><b>%{customdata[4]}</b><br>"
            "… %{customdata[1]}<br>▸ %{customdata[2]}<extra></extra>",
        )
    )
    bx = [p.position for p in points if p.is_break]
    by = [p.score for p in points if p.is_break]
    fig.add_trace(
        go.Scatter(
            x=bx,
            y=by,
            mode="markers",
            marker={"color": "#D55E00", "size": 8, "symbol": "diamond"},
            name="breakpoint",
            hoverinfo="skip",
        )
    )
    if not math.isnan(thr):
        fig.add_hline(y=thr, line_dash="dash", line_color="#c1121f", annotation_text=f"threshold {thr:.3f}")
    fig.update_layout(
        xaxis_title="position in the document (characters)",
        yaxis_title=y_name,
        height=380,
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
        legend={"orientation": "h", "y": 1.08, "x": 1, "xanchor": "right"},
        hoverlabel={"align": "left"},
    )
    hist = go.Figure(go.Histogram(x=ys, nbinsx=40, marker_color="#56B4E9"))
    if not math.isnan(thr):
        hist.add_vline(x=thr, line_dash="dash", line_color="#c1121f")
    hist.update_layout(
        xaxis_title=y_name, yaxis_title="gaps", height=380, margin={"t": 30, "b": 10, "l": 10, "r": 10}
    )
    left, right = st.columns([0.72, 0.28])
    left.plotly_chart(fig, key="w.sem_curve")
    right.plotly_chart(hist, key="w.sem_hist")
    how = {
        "contextual": "each sentence's tokens embedded once, seeing their neighbours",
        "pooled": "each sentence embedded alone, windows pooled",
        "joined": "each window's joined text embedded, as LangChain does",
    }[curve.window_embedding]
    st.caption(
        "Each point is the gap between two neighbouring windows of "
        f"{curve.buffer_size} sentence(s) on each side ({how}). Hover a point to read both sentences. "
        "Changing the mode or amount re-chunks from the cached vectors: nothing is embedded again "
        "(a new buffer size embeds once more, then is cached too)."
    )

add_col, _ = st.columns([1, 3])
if add_col.button(
    "Add to the comparison",
    icon=":material/add:",
    key="w.sem_add",
    disabled=len(S.configs) >= c.MAX_CONFIGS,
    help="Adds these semantic settings as a configuration on Compare, Retrieve and Evaluate.",
):
    new = c.add_config("semantic", dict(config.param_dict))
    S.active_cfg = new["id"]
    st.toast(f"Added {config.display} to the configurations.", icon=":material/check:")

st.subheader("Resulting chunks", anchor=False)
if chunks:
    an = c.analyse(doc, config, out)
    bounds = [(ch.start, ch.end) for ch in chunks]
    lo, hi = window_around(bounds, 0, len(doc.text))
    c.html(legend(selection=False))
    c.html(
        render_chunks(
            doc.text,
            chunks,
            lo=lo,
            hi=hi,
            flags={i: f for i, f in enumerate(an.flags) if f},
            tokens=an.tokens,
            height=520,
        )
    )

c.job_bar()
