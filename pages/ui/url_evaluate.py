"""Evaluate's results, in the link: ``eq=file`` or ``eq=kept`` (the questions they were scored on:
the question file or the kept questions), ``ev=1`` (an evaluation was shown) and ``sw=<parameter>``
with ``swv=<values>`` (a sweep was shown). Results are not carried (they can be large): a link
or a reload runs them again when Evaluate opens, which the embedding cache makes quick where
the vectors were made before, so a reload no longer leaves Evaluate with its buttons only. What
a link names that cannot be run becomes a notice (the link is untrusted)."""

from __future__ import annotations

import re
from typing import Any

from pages.ui.safe import clip
from pages.ui.state import session

#: The question sources ``eq=`` names.
EVAL_SOURCES = ("file", "kept")
#: Longest sweep values (``swv=``) a link carries; the box is typed by hand, so this is generous.
MAX_SWEEP_VALUES_CHARS = 300
_PARAM = re.compile(r"[a-z_]{1,40}")


def restore_evaluate(qp: Any) -> None:
    """What the link's Evaluate showed, to be run again when Evaluate is opened."""
    source = (qp.get("eq") or "").strip()
    if source in EVAL_SOURCES:
        session.eval_source = source
    elif source:
        session.notices.append(f"Ignored the questions named in the link ({clip(source, 40)}): not file or kept.")
    session.eval_pending = qp.get("ev") == "1"
    param, values = (qp.get("sw") or "").strip(), (qp.get("swv") or "").strip()
    if not param:
        return
    if _PARAM.fullmatch(param) and values and len(values) <= MAX_SWEEP_VALUES_CHARS:
        session.sweep_pending = (param, values)
    else:
        session.notices.append(f"Ignored the sweep named in the link ({clip(param, 40)}: {clip(values, 40)}).")


def evaluate_url() -> dict[str, str]:
    """The link's values for the results Evaluate shows now, or is making (a link's run waiting
    for its turn, or the session's job): a reload while they run runs them again."""
    want = {}
    if session.eval_results or session.eval_pending:
        want["ev"] = "1"
    sweep = session.sweep_results
    if sweep and sweep.get("lines") and sweep.get("spec"):
        want["sw"], want["swv"] = str(sweep["param"]), str(sweep["spec"])[:MAX_SWEEP_VALUES_CHARS]
    elif session.sweep_pending:
        want["sw"], want["swv"] = session.sweep_pending
    job = session.job
    if job is not None and not job.finished:
        want.update(job.link)
    if want and session.eval_source in EVAL_SOURCES:
        want["eq"] = session.eval_source
    return want
