"""Export: the chunks with offsets and metadata, the configuration, and the same setup as code."""

from __future__ import annotations

import re

import streamlit as st

from explorer.export.code import config_to_code
from explorer.export.data import config_to_json, export_chunks
from explorer.text.wording import plural
from pages.ui.compute import chunk, embed_options
from pages.ui.configs import config_label, config_labels, valid_configs
from pages.ui.flow import end_page
from pages.ui.frame import page_header
from pages.ui.model import backend_choice, model_label
from pages.ui.safe import md
from pages.ui.sources import loaded
from pages.ui.state import W, session
from pages.ui.widgets import documents_or_stop

page_header(
    "Export",
    "Download the chunks with their offsets and metadata, the configuration as JSON, or the same "
    "setup as code for the CLI, Python, LangChain, LlamaIndex or Chonkie.",
)
docs = documents_or_stop()
valid = valid_configs(
    session.configs,
    lambda cfg, i, err: st.warning(
        md(f"{config_label(cfg, i + 1)} is left out: {err}"), icon=":material/tune:"
    ),
)
if not valid:
    end_page()

cleanup_steps = [field for field, on in session.cleanup.items() if on]
model = model_label()  # its registered name or its folder's name: never a server path
backend = backend_choice()

# -- chunks ------------------------------------------------------------------------------------
st.subheader("Chunks", anchor=False)
top = st.columns([1.2, 2], vertical_alignment="bottom")
labels = config_labels()
cid = top[0].selectbox(
    "Configuration",
    [cfg["id"] for cfg, _ in valid],
    format_func=labels.get,
    index=next((i for i, (cfg, _) in enumerate(valid) if cfg["id"] == session.active_cfg), 0),
    key=W.EXP_CFG,
)
config = next(conf for cfg, conf in valid if cfg["id"] == cid)
names = [d.name for d in docs]
chosen = top[1].multiselect("Documents", names, default=names, key=W.EXP_DOCS)

chunks = []
problems = []
for d in docs:
    if d.name not in chosen:
        continue
    out = chunk(d, config)
    if out.ok:
        chunks.extend(out.chunks)
    elif out.pending:
        problems.append(f"{md(d.name)}: the chunks are not ready yet (embedding at the top of the page)")
    else:
        problems.append(md(f"{d.name}: {out.error}"))
for p in problems:
    st.error(p, icon=":material/error:")
stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.display).strip("-")[:60] or "chunks"
st.caption(
    f"{plural(len(chunks), 'chunk')} from {plural(len(chosen), 'document')}. Every record has `start`/`end` "
    "offsets into the document's text, its pages, heading path and boundary reason."
)
row = st.container(horizontal=True)  # wraps when narrow: three columns cut "Download JS…" at 800 px
for fmt, mime in (("jsonl", "application/jsonl"), ("csv", "text/csv"), ("json", "application/json")):
    row.download_button(
        f"Download {fmt.upper()}",
        data=lambda fmt=fmt: export_chunks(chunks, fmt),
        file_name=f"{stem}.{fmt}",
        mime=mime,
        icon=":material/download:",
        disabled=not chunks,
        key=W.DOWNLOAD(fmt),
        on_click="ignore",
    )

# -- configuration -----------------------------------------------------------------------------
st.subheader("Configuration", anchor=False)
configs = [conf for _, conf in valid]
options = embed_options()
cfg_json = config_to_json(
    configs, names, model=model, cleanup=cleanup_steps, options=options, backend=backend
)
cfg_row = st.container(horizontal=True, vertical_alignment="center")  # a [1, 3] column cut it to "Downlo…"
cfg_row.download_button(
    "Download configuration (JSON)",
    data=cfg_json,
    file_name="chunk-explorer-config.json",
    mime="application/json",
    icon=":material/settings:",
    key=W.EXP_CFGJSON,
    on_click="ignore",
)
cfg_row.caption(
    "All configurations, the model, clean-up steps and document names. The address of this page "
    "holds the same strategies, samples and uploads (kept on this server): share it to reproduce the view."
)
with st.expander("Configuration JSON", icon=":material/data_object:"):
    st.code(cfg_json, language="json")

# -- code ------------------------------------------------------------------------------------
st.subheader("As code", anchor=False)
samples = {d.id for src, d in loaded() if src["kind"] == "sample"}  # named with --sample
shown = [d for d in docs if d.name in chosen]
code = config_to_code(
    configs,
    [d.name for d in shown if d.id not in samples],
    samples=[d.name for d in shown if d.id in samples],
    model=model,
    cleanup=cleanup_steps,
    backend=backend,
    encodings={d.name: d.encoding for d in shown},
    changed={d.name: d.changed_controls for d in shown},
    question=(session.ret_query or {}).get("question", ""),
)
tabs = st.tabs(["CLI", "Python", "LangChain", "LlamaIndex", "Chonkie"])
for tab, (key, lang) in zip(
    tabs,
    (
        ("cli", "bash"),
        ("python", "python"),
        ("langchain", "python"),
        ("llamaindex", "python"),
        ("chonkie", "python"),
    ),
    strict=True,
):
    with tab:
        st.code(code.get(key, "# not available"), language=lang)
        if key == "cli":
            st.caption(
                "Run it with Chunk Explorer's Python, from any folder: `.venv/bin/python -m explorer …` "
                "(`make run` installs the project there), or with that venv activated. Uploaded files "
                "are named as you uploaded them (run it where they are); samples come with `--sample`."
            )
