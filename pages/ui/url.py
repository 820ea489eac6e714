"""URL state: the shareable view (samples, uploads, active document, clean-up, model, strategies,
how chunks are ranked (``retriever=``, ``k=``, ``emb=``: :mod:`pages.ui.url_ranking`), the chunks Explore
and Semantic show (``chunk=``, ``schunk=``: :mod:`pages.ui.url_chunks`), the question asked, the kept questions,
Evaluate's question file and the results it showed (:mod:`pages.ui.url_evaluate`)) in the link.

:func:`restore` reads a link once per session (what it cannot use becomes a notice: the link is
untrusted, and every notice is made inert for Markdown); :func:`sync` writes the view back after
every run. Uploads travel as ``up=<hash>`` (the first :data:`~explorer.documents.uploads.REF_CHARS`
hex digits of their sha256): the server keeps the files (:mod:`explorer.documents.uploads`), so a
reload or a link opened on the same server reopens them; questions travel as ``q=``/``qa=``/``qr=``
(the last search) and ``kq=`` (one JSON object per kept question), within :data:`MAX_QUESTION_CHARS`
and :data:`MAX_ANSWER_CHARS`; Evaluate's question file as ``qf=sample`` (the bundled questions
about the loaded samples) or ``qf=<hash>`` (an uploaded file, kept in the same store).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer import untrusted
from explorer.documents import samples, uploads
from explorer.errors import ExplorerError, ParamError
from explorer.models import choice as model_choices
from explorer.strategies import get_strategy
from explorer.strategies.adapt import Adapted
from pages.ui.configs import DEFAULT_STRATEGIES, MAX_CONFIGS, add_config, config_of, user_set_of
from pages.ui.model import BACKEND_LABELS, backend_choice, model_choice, model_label
from pages.ui.safe import clip
from pages.ui.sources import (
    CLEANUP_FLAGS,
    add_kept_upload,
    add_sample,
    current_source,
    kept_uploads,
    sample_names,
)
from pages.ui.state import SAMPLE_FILE, SAMPLE_REF, ConfigDict, session
from pages.ui.url_chunks import chunks_url, restore_chunks
from pages.ui.url_evaluate import evaluate_url, restore_evaluate
from pages.ui.url_fit import fit_link, restore_too_long
from pages.ui.url_questions import questions_url, restore_questions
from pages.ui.url_ranking import ranking_url, restore_ranking

#: More ``samples`` values than this in a link are ignored (there are three samples).
MAX_SAMPLE_PARAMS = 16
#: More ``up`` values (uploads) than this in a link are ignored, and said.
MAX_UPLOAD_PARAMS = 256
#: Notes on a link's settings said at most (per configuration).
MAX_LINK_NOTES = 4


def restore() -> None:
    """Set the session from the link (called once, on a fresh session)."""
    qp = st.query_params
    restore_too_long(qp, session.notices)
    _restore_samples(qp)
    _restore_uploads(qp)
    _restore_doc(qp)
    restore_questions(qp)
    _restore_question_file(qp)
    restore_evaluate(qp)
    _restore_cleanup(qp)
    _restore_model(qp)
    restore_ranking(qp)
    given = qp.get_all("cfg")
    if len(given) > MAX_CONFIGS:
        session.notices.append(
            f"The link has {len(given):,} strategies; only the first {MAX_CONFIGS} are opened "
            f"(the sidebar holds {MAX_CONFIGS})."
        )
    for raw in given[:MAX_CONFIGS]:
        try:
            d = untrusted.loads(raw, "strategy", ParamError)
            name = str(d["s"])
            got = _adapted(name, d.get("p", {}))  # "p": [] or null is refused, not read as {}
        except (ValueError, KeyError, TypeError, AttributeError, ArithmeticError) as err:
            msg = str(err) if isinstance(err, ExplorerError) else "not a valid configuration"
            session.notices.append(f"Ignored a strategy from the link ({clip(raw, 80)}): {msg}")
            continue
        assert got.values is not None
        add_config(name, got.values, user_set=got.user_set)
        _say_adapted(name, got.notes, d.get("p") or {})
    if "sem" in qp:
        try:
            given = untrusted.loads(qp["sem"], "semantic settings", ParamError)
            got = _adapted("semantic", given)
        except (ValueError, TypeError, AttributeError, ArithmeticError) as err:
            session.notices.append(f"Ignored the semantic settings from the link: {err}")
        else:
            assert got.values is not None
            session.sem_cfg.update(params=dict(got.values), valid=dict(got.values), user_set=sorted(got.user_set))
            _say_adapted("semantic", got.notes, given)
    _restore_cfgsel(qp)
    restore_chunks(qp)


def _restore_cfgsel(qp: Any) -> None:
    """The configuration the sidebar shows (1-based), among the link's, or the default ones
    when it names none (``?cfgsel=2`` opened on the first: the defaults came after)."""
    raw = qp.get("cfgsel")
    if raw is None:
        return
    if not session.configs:
        for name in DEFAULT_STRATEGIES:
            add_config(name, {})
    n = len(session.configs)
    if re.fullmatch(r"[0-9]{1,3}", raw) and 0 < int(raw) <= n:  # not isdigit(): "²" is a digit int() refuses
        session.active_cfg = session.configs[int(raw) - 1]["id"]
    else:
        session.notices.append(f"Ignored the configuration the link picks ({clip(raw, 40)}): not one of 1 to {n}.")


def _adapted(strategy: str, params: Any) -> Adapted:
    """A link's parameters for ``strategy``: all the user's, a conflicting one dropped with a note."""
    if not isinstance(params, dict):
        raise TypeError("parameters are not an object")
    return get_strategy(strategy).adapt(params, params.keys(), lenient=True)


def _say_adapted(strategy: str, notes: Sequence[str], given: Any) -> None:
    """One notice for what became of the settings of ``strategy`` that the link gives (a note is
    clipped: it may quote the link). A default that follows them is not said: the app's own link
    ("chunk_size": 10) drew "chunk_overlap 200 → 2" on every reload."""
    notes = [n for n in notes if any(n.startswith(f"{name} ") for name in given)]  # a name may hold spaces
    if notes:
        more = f"; and {len(notes) - MAX_LINK_NOTES} more" if len(notes) > MAX_LINK_NOTES else ""
        said = "; ".join(clip(n, 160) for n in notes[:MAX_LINK_NOTES])
        session.notices.append(f"The link's {strategy} settings were adjusted: {said}{more}.")


def _listed(bad: Sequence[str]) -> str:
    """The first five of a link's bad values, quoted and clipped, and how many more."""
    return ", ".join(repr(clip(b, 40)) for b in bad[:5]) + (f" and {len(bad) - 5:,} more" if len(bad) > 5 else "")


def _restore_cleanup(qp: Any) -> None:
    """The clean-up steps the link names (``clean=blank,hyphen``); unknown ones are said."""
    asked = [v for v in (qp.get("clean") or "").split(",") if v.strip()]
    for short in asked:
        if short in CLEANUP_FLAGS:
            session.cleanup[CLEANUP_FLAGS[short][0]] = True
    bad = [v for v in asked if v not in CLEANUP_FLAGS]
    if bad:
        known = ", ".join(CLEANUP_FLAGS)
        session.notices.append(f"Link names unknown clean-up steps {_listed(bad)} (known: {known}): ignored.")


def _restore_samples(qp: Any) -> None:
    available = list(samples.SAMPLES)
    if "samples" in qp:
        wanted = [n for v in qp.get_all("samples")[:MAX_SAMPLE_PARAMS] for n in samples_in(v, available)]
        bad = [s for s in wanted if s not in available]
        if bad:
            session.notices.append(f"Link names unknown samples {_listed(bad)}: ignored.")
        for name in wanted:
            if name in available:
                add_sample(name)
    else:
        for name in available:
            add_sample(name)


def _restore_doc(qp: Any) -> None:
    """The active document: a sample by its name or file name, or an upload by its hash. A
    link's document that is not loaded here is said in a notice, not silently replaced."""
    doc = qp.get("doc")
    keys = [s["key"] for s in session.sources]
    upload = next((s["key"] for s in session.sources if s["kind"] == "upload" and s["digest"] == doc), None)
    sample = sample_named(doc or "")
    if upload:
        session.doc_key = upload
    elif sample and f"sample:{sample}" in keys:
        session.doc_key = f"sample:{sample}"
    elif session.sources:
        default = f"sample:{samples.DEFAULT_SAMPLE}"
        session.doc_key = default if default in keys else keys[0]
        if doc and not uploads.valid_ref(doc):  # a missing upload is told by _restore_uploads
            shown = next(s["name"] for s in session.sources if s["key"] == session.doc_key)
            session.notices.append(
                f"The link opens document {clip(doc, 80)!r}, which is not loaded here: showing {shown!r}."
            )


def sample_named(value: str) -> str | None:
    """The sample a link's ``doc=`` names: its display name, or its file name or stem in any
    case (``handbook.pdf``, ``guide``), as people write links by hand."""
    if value in samples.SAMPLES:
        return value
    folded = value.strip().casefold()
    for name, filename in samples.SAMPLES.items():
        if folded in (filename.casefold(), filename.rpartition(".")[0].casefold()):
            return name
    return None


def _restore_uploads(qp: Any) -> None:
    """The uploads the link names (``up=``), read back from the server's store; what cannot be
    read back is said in one notice (a value is never echoed unless it is plain hex)."""
    refs = list(dict.fromkeys(qp.get_all("up")))  # a reference named twice is one file
    if not refs:
        return
    if len(refs) > MAX_UPLOAD_PARAMS:
        session.notices.append(
            f"The link names {len(refs):,} uploaded files; only the first {MAX_UPLOAD_PARAMS} are opened."
        )
        refs = refs[:MAX_UPLOAD_PARAMS]
    store = uploads.default_store()
    if store is None:
        session.notices.append(
            f"The link names {len(refs)} uploaded file(s), but this server does not keep uploads: "
            "upload them again on the Documents page."
        )
        return
    bad = sum(not uploads.valid_ref(r) for r in refs)
    gone = []
    for ref in (r for r in refs if uploads.valid_ref(r)):
        kept = store.get(ref)
        if kept is None:
            gone.append(ref[:12])
        else:
            add_kept_upload(kept)
    named = ", ".join(gone[:5]) + (", …" if len(gone) > 5 else "")
    problems = [f"{len(gone)} this server no longer has ({named})"] if gone else []
    problems += [f"{bad} that {'is' if bad == 1 else 'are'} not a file reference"] if bad else []
    if problems:
        session.notices.append(
            f"The link names uploaded files that cannot be reopened: {'; '.join(problems)}. "
            "Upload them again on the Documents page."
        )


def _restore_question_file(qp: Any) -> None:
    """Evaluate's question file (``qf=``): the sample questions, or a file read back from the
    server's store; one notice when it cannot be (the value is never echoed)."""
    ref = qp.get("qf") or ""
    if not ref:
        return
    if ref == SAMPLE_REF:
        session.qfile, session.qfile_ref = (SAMPLE_FILE, b""), SAMPLE_REF  # read on Evaluate
        return
    store = uploads.default_store()
    kept = store.get(ref) if store is not None and uploads.valid_ref(ref) else None
    if kept is None:
        session.notices.append(
            "The link names a question file that this server does not keep: upload it again on Evaluate."
        )
        return
    session.qfile, session.qfile_ref = (kept.name, kept.data), ref


def _restore_model(qp: Any) -> None:
    model = (qp.get("model") or "").strip()
    if (
        model
    ):  # a name on offer only: a path, a folder outside the models directory or an unknown name is dropped
        choice = model_choices.find_choice(model)
        if choice is None:
            session.notices.append(
                "Ignored the model named in the link: it is not one of the models this app offers."
            )
        else:
            session.model = "" if choice.is_default else choice.name
    backend = (qp.get("backend") or "").strip()
    if backend:
        if backend in model_choice().backends:
            session.backend = backend
        else:
            named = (b if BACKEND_LABELS.get(b, b).startswith(b) else f"{b} ({BACKEND_LABELS[b]})" for b in model_choice().backends)
            session.notices.append(  # notices() makes it inert: escaped here too, its backslashes showed
                f"Ignored the backend named in the link ({clip(backend, 40)}): {model_label()} runs on {', '.join(named)}."
            )


def samples_in(value: str, available: list[str]) -> list[str]:
    """The samples one ``samples=`` value names. A link has one value per sample (names hold
    commas); links made before that joined the names with commas, which is read back by matching
    known names from the left; what matches nothing is kept whole, to be reported."""
    if value in available or value == "none" or not value:
        return [value] if value in available else []
    out, rest = [], value
    while rest:
        name = next(
            (n for n in sorted(available, key=len, reverse=True) if rest == n or rest.startswith(n + ",")),
            None,
        )
        if name is None:
            return [*out, rest]
        out.append(name)
        rest = rest[len(name) + 1 :]
    return out


def sync() -> None:
    """Write the shareable view (samples, active sample, clean-up, strategies) into the URL.

    Written again when it differs from what was last sent, even where the run's query string
    already matches it: a rerun the browser asked for before it applied the previous write
    carries the older string, and the browser then applies that write after it (a link's sweep
    dropped from the address while it ran again, and never put back)."""
    if not session.ready:
        return
    want: dict[str, Any] = {"samples": sample_names() or ["none"]}  # one value per sample: names hold commas
    if kept_uploads():
        want["up"] = kept_uploads()
    active = current_source()
    if active is not None and active["kind"] == "sample":
        want["doc"] = active["sample"]
    elif active is not None and active["kept"]:
        want["doc"] = active["digest"]
    clean = [short for short, (field, _, _) in CLEANUP_FLAGS.items() if session.cleanup.get(field)]
    if clean:
        want["clean"] = ",".join(clean)
    if not model_choice().is_default:
        want["model"] = model_label()
    if backend_choice() != "auto":
        want["backend"] = backend_choice()
    want.update(ranking_url())
    want["cfg"] = [_cfg_url(c) for c in session.configs]
    idx = next((i for i, c in enumerate(session.configs) if c["id"] == session.active_cfg), 0)
    if idx:
        want["cfgsel"] = str(idx + 1)
    want.update(chunks_url())
    sem = _sem_url()
    if sem:
        want["sem"] = sem
    want.update(questions_url())
    if session.qfile_ref:
        want["qf"] = session.qfile_ref
    want.update(evaluate_url())
    current = {
        k: (st.query_params.get_all(k) if k in _LISTS else st.query_params.get(k)) for k in st.query_params
    }
    want, left_out = fit_link(want)
    if left_out and left_out != session.link_left_out:
        session.notices.append(
            f"The link to this view leaves out {left_out}: with them it would be longer than a server "
            "reads back. This session keeps them."
        )
    session.link_left_out = left_out
    if current != want or session.url_sent != want:
        st.query_params.from_dict(want)
        session.url_sent = want


_LISTS = ("cfg", "samples", "up", "kq")


def _user_values(cfg: ConfigDict) -> dict[str, Any]:
    """The values of the parameters the user set (the configuration shown: the last valid one
    while a value conflicts); a link restores the rest by the same rules."""
    try:
        values = config_of(cfg).param_dict
    except ExplorerError:
        values = cfg["params"]
    user = user_set_of(cfg)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items() if k in user}


def _cfg_url(cfg: ConfigDict) -> str:
    p = _user_values(cfg)
    return json.dumps({"s": cfg["strategy"], "p": p}, ensure_ascii=False, separators=(",", ":"))


def _sem_url() -> str:
    p = _user_values(session.sem_cfg)
    return json.dumps(p, ensure_ascii=False, separators=(",", ":")) if p else ""
