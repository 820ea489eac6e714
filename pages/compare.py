"""Compare: 2 to 6 configurations on the same document, side by side, with sizes and metrics."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.errors import ExplorerError
from explorer.text.wording import percent_value
from pages.ui.audit import audit, summary_columns
from pages.ui.background import job_bar, job_result, session_job
from pages.ui.charts import color, metric_bars, size_figures
from pages.ui.compareview import Panel, side_by_side
from pages.ui.compute import analyse, chunk, start_cohesion
from pages.ui.configs import config_labels, config_of, duplicate_active
from pages.ui.flow import end_page
from pages.ui.frame import WRAP_KEY, page_header
from pages.ui.model import limit_words, model_id, passage_room
from pages.ui.safe import err_text, md, sheet_safe
from pages.ui.settings import model_settings
from pages.ui.state import ConfigDict, W, session
from pages.ui.widgets import config_editor, doc_picker

page_header(
    "Compare",
    "Two to six configurations on the same text: where each one cuts, how big its chunks are, "
    "and what the metrics say.",
)
doc = doc_picker()
if doc is None:
    end_page()
config_editor(multi=True, title="Configurations")
model_settings()
if len(session.configs) < 2:
    st.info(
        "Compare needs at least two configurations. **Add** in the sidebar copies the selected "
        "one; then change its strategy or parameters.",
        icon=":material/compare_arrows:",
    )
    st.button("Add a configuration", icon=":material/add:", on_click=duplicate_active, key=W.CMP_ADD)
    end_page()


def _row(i: int, cfg: ConfigDict, label: str) -> dict:
    """One configuration's chunks and analysis, or why there are none."""
    row = {"id": cfg["id"], "label": label, "color": color(i), "error": ""}
    try:
        config = config_of(cfg)
    except ExplorerError as err:
        return {**row, "error": str(err)}
    out = chunk(doc, config)
    if out.pending:
        return {**row, "pending": out.pending}
    if not out.ok:
        return {**row, "error": out.error}
    an = analyse(doc, config, out) if out.chunks else None
    trunc = audit(doc, config, out.chunks, an) if an is not None else None
    return {**row, "config": config, "out": out, "an": an, "audit": trunc}


def _panel(i: int, r: dict) -> Panel:
    """What the side-by-side view shows of a row: its chunks, or why there are none."""
    p = Panel(r["label"], r["color"], number=str(i + 1))
    if r.get("pending"):
        p.message, p.kind = r["pending"], "pending"
    elif r["error"]:
        p.message, p.kind = r["error"], "error"
    elif r["an"] is None:
        p.message, p.kind = "No chunks.", "empty"
    else:
        p.chunks, p.analysis = r["out"].chunks, r["an"]
        p.unread = r["audit"].unread if r["audit"] is not None else {}
    return p


def _record(r: dict, sem) -> dict:
    s = r["an"].stats
    return {
        "configuration": r["label"],
        "chunks": s.count,
        "mean chars": round(s.chars.mean),
        "median chars": s.chars.median,
        "CV": round(s.chars.cv, 2),
        "mean tokens": round(s.tokens.mean),
        "over limit %": percent_value(s.share("over_limit")),
        **summary_columns(r["audit"]),
        "mid-sentence %": percent_value(s.share("mid_sentence")),
        "mid-word %": percent_value(s.share("mid_word")),
        "tiny": s.tiny,
        "duplicates": s.duplicate,
        "coverage %": percent_value(s.coverage),
        "redundancy %": percent_value(s.redundancy),
        "cohesion": None if sem is None or sem.cohesion is None else round(sem.cohesion, 3),
        "separation": None if sem is None or sem.separation is None else round(sem.separation, 3),
    }


def _sizes(good: list[dict]) -> None:
    unit = st.segmented_control(
        "Size in", ["characters", "tokens"], default="characters", key=W.CMP_UNIT, required=True
    )
    limit = good[0]["an"].stats.max_tokens
    series = [
        (
            r["label"],
            r["color"],
            [ch.chars for ch in r["out"].chunks] if unit == "characters" else list(r["an"].tokens),
        )
        for r in good
    ]
    hist, box = size_figures(series, unit, limit)
    left, right = st.container(key=WRAP_KEY).columns(2)  # the violins wrap under it when narrow
    left.plotly_chart(hist, key=W.CMP_HIST)
    right.plotly_chart(box, key=W.CMP_VIOLIN)
    if unit == "tokens":
        st.caption(
            f"Chunks right of the red line are over {limit_words(*passage_room())} (special "
            "tokens included): the model cuts them when it embeds them."
        )


def _metrics(good: list[dict]) -> None:
    _phase, found = job_result("cohesion")
    if found:  # done, or stopped: the configurations finished before the stop
        session.sem_stats.update(found)
    table = pd.DataFrame([_record(r, session.sem_stats.get((doc.id, r["config"], model_id()))) for r in good])
    st.dataframe(sheet_safe(table), hide_index=True, key=W.CMP_TABLE)
    st.caption(
        "CV: standard deviation / mean of the sizes. Coverage: share of the text's non-space "
        "characters inside a chunk. Redundancy: characters in two or more chunks (overlap). "
        "Truncated: chunks the model cuts at its token limit (passage prefix counted); unread chars: "
        "their characters it never embeds; never read: share of the document no chunk's vector reads. "
        "Cohesion: how similar each chunk's sentences are to each other (higher is better); "
        "separation: similarity of neighbouring chunks (lower is better)."
    )
    missing = [r for r in good if (doc.id, r["config"], model_id()) not in session.sem_stats]
    if missing and st.button(
        "Compute cohesion and separation",
        icon=":material/memory:",
        key=W.CMP_SEM,
        help="Embeds every chunk and its sentences with the model (cached: each text once), in "
        "the background: the progress and a Stop button show at the top of the page.",
    ):
        try:
            start_cohesion(doc, [(r["label"], r["config"], r["out"].chunks) for r in missing])
        except ExplorerError as err:
            st.error(md(err_text(err)), icon=":material/error:")
        else:
            st.rerun()
    numeric = [k for k in table.columns if k != "configuration" and table[k].notna().any()]
    metric = st.columns([1, 3])[0].selectbox(
        "Chart", numeric, index=numeric.index("CV") if "CV" in numeric else 0, key=W.CMP_METRIC
    )
    fig = metric_bars(table["configuration"], table[metric], [r["color"] for r in good], metric)
    st.plotly_chart(fig, key=W.CMP_BAR)


labels = config_labels()
rows = [_row(i, cfg, labels[cfg["id"]]) for i, cfg in enumerate(session.configs)]
good = [r for r in rows if not r["error"] and not r.get("pending") and r["an"] is not None]
view, sizes, metrics = st.tabs(["Side by side", "Chunk sizes", "Metrics"])
with view:
    side_by_side(doc, [_panel(i, r) for i, r in enumerate(rows)], [r["id"] for r in rows])
for tab, draw in ((sizes, _sizes), (metrics, _metrics)):
    with tab:
        if good:
            draw(good)
        else:
            st.info("No configuration produced chunks.")
if (job := session_job()) is not None and job.kind == "cohesion":
    job_bar()
errors = [r for r in rows if r["error"]]
if errors:
    st.caption(f"{len(errors)} configuration(s) could not run; see their messages above.")
