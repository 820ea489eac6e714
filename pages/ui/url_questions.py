"""Retrieve's question and the kept questions, in the link: ``q``, ``qa`` (its expected answer),
``qr`` (the answer's place, ``document id:start:end``) and ``kq`` (one JSON object per kept
question). All of it is untrusted: cut to its bounds, and what cannot be read is a notice."""

from __future__ import annotations

import json
import re
from typing import Any

from explorer import untrusted
from explorer.errors import ParamError
from explorer.text.wording import plural
from pages.ui.state import session

#: Longest question (characters) the link carries; a longer one is left out of it.
MAX_QUESTION_CHARS = 500
#: Longest expected answer (characters) the link carries; a question with a longer one is left out.
MAX_ANSWER_CHARS = 2000
#: Kept questions the link carries at most (the first ones).
MAX_KEPT_IN_LINK = 30
_REF = re.compile(r"([0-9a-f]{1,64}):([0-9]{1,10}):([0-9]{1,10})")  # document id:start:end


def restore_questions(qp: Any) -> None:
    """The last search (``q``, ``qa``, ``qr``) and the kept questions (``kq``)."""
    question = (qp.get("q") or "").strip()
    if len(question) > MAX_QUESTION_CHARS:
        session.notices.append(f"The link's question was cut to its first {MAX_QUESTION_CHARS} characters.")
        question = question[:MAX_QUESTION_CHARS]
    if question:
        answer = (qp.get("qa") or "")[:MAX_ANSWER_CHARS]
        m = _REF.fullmatch(qp.get("qr") or "")
        ref = [m.group(1), int(m.group(2)), int(m.group(3))] if m else None
        session.ret_query = {"question": question, "answer": answer.strip(), "ref": ref}
        session.ret_mark = ref
    bad = 0
    for raw in qp.get_all("kq")[:MAX_KEPT_IN_LINK]:
        item = _kept_item(raw)
        if item is None:
            bad += 1
        elif all(x["question"] != item["question"] for x in session.questions):
            session.questions.append(item)
    if bad:
        session.notices.append(f"Ignored {plural(bad, 'kept question')} in the link that could not be read.")


def _kept_item(raw: str) -> dict[str, Any] | None:
    """A kept question from its link form ``{"q": question, "a": answer, "r": "id:start:end"}``."""
    try:
        d = untrusted.loads(raw, "kept question", ParamError, max_depth=2)
    except ParamError:
        return None
    if not isinstance(d, dict):
        return None
    q, a, r = d.get("q"), d.get("a", ""), d.get("r", "")
    if not isinstance(q, str) or not q.strip() or not isinstance(a, str) or not isinstance(r, str):
        return None
    m = _REF.fullmatch(r)
    ref = [m.group(1), int(m.group(2)), int(m.group(3))] if m else None
    return {"question": q.strip()[:MAX_QUESTION_CHARS], "answer": a[:MAX_ANSWER_CHARS].strip(), "ref": ref}


def _ref_url(ref: Any) -> str:
    ok = isinstance(ref, list | tuple) and len(ref) == 3
    return f"{ref[0]}:{int(ref[1])}:{int(ref[2])}" if ok and _REF.fullmatch(f"{ref[0]}:0:0") else ""


def questions_url() -> dict[str, Any]:
    """The last search and the kept questions, as far as they fit the link's bounds."""
    out: dict[str, Any] = {}
    query = session.ret_query or {}
    question, answer = query.get("question", ""), query.get("answer", "")
    if question and len(question) <= MAX_QUESTION_CHARS and len(answer) <= MAX_ANSWER_CHARS:
        out["q"] = question
        if answer:
            out["qa"] = answer
        if _ref_url(query.get("ref")):
            out["qr"] = _ref_url(query.get("ref"))
    kept = []
    for item in session.questions:
        q, a = item.get("question", ""), item.get("answer", "")
        if len(q) <= MAX_QUESTION_CHARS and len(a) <= MAX_ANSWER_CHARS and len(kept) < MAX_KEPT_IN_LINK:
            d = {
                "q": q,
                **({"a": a} if a else {}),
                **({"r": _ref_url(item.get("ref"))} if item.get("ref") else {}),
            }
            kept.append(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    if kept:
        out["kq"] = kept
    return out
