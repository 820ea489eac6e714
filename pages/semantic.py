"""Semantic: the distance curve between neighbouring sentences, its threshold, and the chunks."""

from __future__ import annotations

import html
import math

import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.render.inert import named_controls
from explorer.render.layout import chunk_at
from pages.ui.background import background, job_bar, waiting
from pages.ui.charts import curve_figures
from pages.ui.chunknav import SEMANTIC_NAV, chunk_text, nav_inputs
from pages.ui.compute import analyse, chunk, chunk_now
from pages.ui.configs import MAX_CONFIGS, add_config
from pages.ui.flow import end_page
from pages.ui.frame import WRAP_KEY, page_header
from pages.ui.inspector import metric_row
from pages.ui.model import context_maker, embedder, model_id
from pages.ui.safe import clip, err_text, md
from pages.ui.settings import model_settings
from pages.ui.state import W, session
from pages.ui.widgets import doc_picker, strategy_widgets

page_header(
    "Semantic",
    "Where the semantic strategy cuts: the distance between neighbouring sentences, the "
    "threshold that turns a jump into a boundary, and the chunks that result.",
)
doc = doc_picker()
if doc is None:
    end_page()
st.sidebar.subheader("Semantic strategy")
config = strategy_widgets(session.sem_cfg, st.sidebar, fixed_strategy=True)
model_settings()
if config is None:
    st.warning("Fix the parameters in the sidebar.", icon=":material/tune:")
    end_page()

from explorer.strategies.semantic import semantic_curve, size_cap_cuts  # noqa: E402  (after the guard above)

try:
    emb = embedder()
except ExplorerError as err:
    st.error(md(err_text(err)), icon=":material/error:")
    end_page()
make = context_maker(emb)
chunk_key = (doc.id, config, model_id())


def _curve(job):
    """The distance curve and the chunks (both from the same cached sentence vectors)."""
    ctx = make(job.progress)
    curve = semantic_curve(doc, config.param_dict, ctx)
    chunk_now(doc, config, ctx, chunk_key)
    return curve


try:
    phase, curve = background(
        "curve",
        ("curve", doc.id, config, model_id()),
        f"Embedding the sentences of {clip(doc.name, 40)}",
        _curve,
        emb=emb,
    )
except ExplorerError as err:
    st.error(md(err_text(err)), icon=":material/error:")
    end_page()
if phase != jobs.DONE:
    waiting(phase, "The distance curve and the chunks")
    end_page()

out = chunk(doc, config)
if out.pending:
    waiting(jobs.QUEUED, "The chunks")
    end_page()
if not out.ok:
    st.error(md(out.error), icon=":material/error:")  # it may quote the document's name
    end_page()
chunks = out.chunks
y_name = "distance gradient" if curve.mode == "gradient" else "cosine distance"


def _chunks_help() -> str:
    capped = len(size_cap_cuts(chunks))
    p = config.param_dict
    why = (
        f"{len(chunks) - capped:,} end at a breakpoint or the end of the text; {capped:,} more "
        f"where a group was over max_chunk_size ({p['max_chunk_size']} {p['length']}), cut with "
        "the recursive strategy."
        if capped
        else "Each chunk ends at a breakpoint or at the end of the text."
    )
    merged = " Breakpoints that made chunks under min_chunk_size were merged away."
    return why + (merged if p.get("min_chunk_size") else "")


row = metric_row()
row.metric("Sentences", f"{len(curve.sentences):,}")
row.metric("Breakpoints", f"{len(curve.breaks):,}")
row.metric("Chunks", f"{len(chunks):,}", help=_chunks_help())
thr = curve.threshold
row.metric(
    "Threshold",
    "—" if math.isnan(thr) else f"{thr:.3f}",
    help=f"Mode {curve.mode}, amount {curve.amount:g}: a gap whose {y_name} is above it becomes a boundary.",
)
mean_chars = sum(ch.chars for ch in chunks) / len(chunks) if chunks else 0
row.metric("Mean chunk", f"{mean_chars:,.0f} chars")

sel = SEMANTIC_NAV.get(len(chunks))


def _on_curve() -> None:
    """A click on the curve selects the chunk at that place of the text."""
    points = ((session.widget(W.SEM_CURVE) or {}).get("selection") or {}).get("points") or []
    if points and isinstance(points[0].get("x"), int | float):
        at = chunk_at([(ch.start, ch.end) for ch in chunks], int(points[0]["x"]))
        if at is not None:
            SEMANTIC_NAV.set(at)


if len(curve.points) < 2:
    st.info("This document has fewer than three sentences: there is no curve to draw.")
else:
    fig, hist = curve_figures(
        curve,
        y_name,
        lambda span: html.escape(named_controls(clip(" ".join(doc.text[span[0] : span[1]].split()), 110)), quote=False),
        selected=(chunks[sel].start, chunks[sel].end, f"chunk {chunks[sel].index}") if chunks else None,
        cap_cuts=size_cap_cuts(chunks),
    )
    left, right = st.container(key=WRAP_KEY).columns([0.72, 0.28])  # the histogram wraps under it
    left.plotly_chart(fig, key=W.SEM_CURVE, on_select=_on_curve, selection_mode="points")
    right.plotly_chart(hist, key=W.SEM_HIST)
    how = {
        "contextual": "each sentence's tokens embedded once, seeing their neighbours",
        "pooled": "each sentence embedded alone, windows pooled",
        "joined": "each window's joined text embedded, as LangChain does",
    }[curve.window_embedding]
    st.caption(
        "Each point is the gap between two neighbouring windows of "
        f"{curve.buffer_size} sentence(s) on each side ({how}). Hover a point to read both sentences; "
        "click one to show its chunk below (shaded on the curve). Changing the mode or amount "
        "re-chunks from the cached vectors: nothing is embedded again (a new buffer size embeds "
        "once more, then is cached too)."
    )

if st.button(
    "Add to the comparison",
    icon=":material/add:",
    key=W.SEM_ADD,
    disabled=len(session.configs) >= MAX_CONFIGS,
    help="Adds these semantic settings as a configuration on Compare, Retrieve and Evaluate.",
):
    session.active_cfg = add_config("semantic", dict(config.param_dict))["id"]
    st.toast(f"Added {md(config.display)} to the configurations.", icon=":material/check:")

st.subheader("Resulting chunks", anchor=False)
if chunks:
    an = analyse(doc, config, out)
    nav_inputs(SEMANTIC_NAV, doc, chunks, sel, st.columns([1.2, 1.2, 4.6], vertical_alignment="bottom"))
    flags = {i: f for i, f in enumerate(an.flags) if f}
    chunk_text(SEMANTIC_NAV, doc, chunks, sel, flags=flags, tokens=an.tokens, height=520)

job_bar()
