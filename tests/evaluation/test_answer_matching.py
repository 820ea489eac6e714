"""Typed expected answers match like a person reads: whitespace, line breaks and hyphens at line
ends do not matter, and a match maps back to the exact offsets of the document's text."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from explorer import Document, LoadError
from explorer.evaluation.answers import AmbiguousAnswer, find_answer, locate_answer
from explorer.evaluation.matching import find_tolerant, same_text, view
from explorer.evaluation.questions import load_questions
from tests.app.test_app_pages import fake_embedder  # noqa: F401  (used by the app test below)

PDF_TEXT = (
    "Harbor Valley Water Authority\n"
    "the procedure wins and the discrepancy must be reported to the plant superin-\n"
    "tendent the same day. A well-\nknown rule: log the “backwash” in the ﬁlter book.\n"
    "Harbor Valley Water Authority\n"
)


@pytest.fixture
def doc() -> Document:
    return Document("handbook.pdf", "pdf", PDF_TEXT)


def test_a_space_where_the_text_has_a_line_break(doc):
    answer = "must be reported to the plant superintendent the same day."
    d, s, e = locate_answer(answer, [doc])
    assert d == doc.id
    assert doc.text[s:e] == "must be reported to the plant superin-\ntendent the same day."


@pytest.mark.parametrize(
    ("typed", "exact"),
    [
        ("A well-known rule", "A well-\nknown rule"),
        ("A well-\nknown rule", "A well-\nknown rule"),
        ("A wellknown   rule", "A well-\nknown rule"),
        ('log the "backwash" in the filter book', "log the “backwash” in the ﬁlter book"),
        ("  the   procedure\twins  \n", "the procedure wins"),
    ],
)
def test_tolerant_matches_map_to_exact_offsets(doc, typed, exact):
    _, s, e = locate_answer(typed, [doc])
    assert doc.text[s:e] == exact


def test_exact_matches_come_first(doc):
    # verbatim, the answer is found where it is, even though tolerant reading would find more
    text = "a b\nc and a b c"
    d = Document("t.txt", "text", text)
    assert locate_answer("a b c", [d]) == (d.id, 10, 15)
    assert find_answer("a b\nc", [d]) == [(d.id, 0, 5)]


def test_an_answer_found_twice_is_ambiguous_with_both_places(doc):
    with pytest.raises(AmbiguousAnswer, match="occurs more than once") as err:
        locate_answer("Harbor  Valley\nWater Authority", [doc])
    places = [(s, e) for _, s, e in err.value.occurrences]
    assert [doc.text[s:e] for s, e in places] == ["Harbor Valley Water Authority"] * 2
    assert isinstance(err.value, LoadError)  # callers that catch LoadError still do


def test_not_found_says_so_and_names_the_hint(doc):
    with pytest.raises(LoadError, match=r"not an exact substring.*ignoring whitespace.*select it"):
        locate_answer("plant superintendant", [doc], hint="select it in the text")
    with pytest.raises(LoadError, match="empty"):
        locate_answer("  \n ", [doc])


def test_question_files_get_the_same_tolerant_matching(doc):
    lines = [
        {"question": "Who is told?", "answer": "the plant superintendent the same day"},
        {"question": "Exact", "answer": "the discrepancy"},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    q1, q2 = load_questions(data, [doc])
    (_, s, e) = q1.references[0]
    assert doc.text[s:e] == "the plant superin-\ntendent the same day"
    assert doc.text[q2.references[0][1] : q2.references[0][2]] == "the discrepancy"
    twice = json.dumps({"question": "Who?", "answer": "Harbor Valley\nWater Authority"}).encode()
    with pytest.raises(LoadError, match=r"Who.*occurs more than once"):
        load_questions(twice, [doc])


def test_same_text_and_the_view_map():
    assert same_text("superin-\ntendent the", "superintendent  the")
    assert not same_text("superintendent", "Superintendent")
    v = view("ab  c-\nd")
    assert v.text == "ab cd"
    assert [v.where[i] for i in range(len(v.text))] == [0, 1, 2, 4, 7]
    assert find_tolerant("", "abc") == []


# -- the property: any span, re-typed with other whitespace, line breaks and end-of-line hyphens,
# is found at its own offsets (or among several places, which callers report as ambiguous) --
LETTERS = "abcdeéàçxyzABC"
WORD = hs.text(alphabet=LETTERS, min_size=1, max_size=7)
SPACE = hs.sampled_from([" ", "  ", "\n", " \n", "\n\n", "\t", "\r\n", " \n "])
BREAK = hs.sampled_from(["-\n", "-\n ", "- \n", "-\r\n", "\u00ad\n"])


@hs.composite
def texts_and_spans(draw):
    """Tokens of a text (words, punctuation, whitespace, hyphens at line ends inside words), a
    span from a letter to a letter, and the span re-typed the way a person would."""
    tokens: list[tuple[str, str]] = []
    for _ in range(draw(hs.integers(2, 14))):
        word = draw(WORD)
        if len(word) > 1 and draw(hs.booleans()):  # hyphenated at a line end
            cut = draw(hs.integers(1, len(word) - 1))
            tokens += [("w", word[:cut]), ("b", draw(BREAK)), ("w", word[cut:])]
        else:
            tokens.append(("w", word))
        if draw(hs.booleans()):
            tokens.append(("p", draw(hs.sampled_from([".", ",", ";", "!"]))))
        tokens.append(("s", draw(SPACE)))
    words = [i for i, (kind, _) in enumerate(tokens) if kind == "w"]
    i = draw(hs.sampled_from(words))
    j = draw(hs.sampled_from([w for w in words if w >= i]))
    starts = [sum(len(t) for _, t in tokens[:k]) for k in range(len(tokens) + 1)]
    a = starts[i] + draw(hs.integers(0, len(tokens[i][1]) - 1))
    b_lo = a + 1 if i == j else starts[j] + 1
    b = draw(hs.integers(b_lo, starts[j + 1]))
    retyped = [draw(SPACE)]
    for k in range(i, j + 1):
        kind, t = tokens[k]
        lo, hi = max(a - starts[k], 0), min(b - starts[k], len(t))
        if kind == "s":
            retyped.append(draw(SPACE))
        elif kind == "b":
            retyped.append(draw(hs.sampled_from(["", "-", "-\n", t])))
        elif kind == "w" and hi - lo > 1 and draw(hs.booleans()):  # a hyphen the text does not have
            cut = draw(hs.integers(lo + 1, hi - 1))
            retyped.append(t[lo:cut] + draw(BREAK) + t[cut:hi])
        else:
            retyped.append(t[lo:hi])
    retyped.append(draw(SPACE))
    return "".join(t for _, t in tokens), a, b, "".join(retyped)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_and_spans())
def test_a_retyped_span_is_found_at_its_exact_offsets(case):
    text, a, b, retyped = case
    doc = Document("t.txt", "text", text)
    found = find_answer(retyped, [doc], limit=10_000)
    if text.find(retyped) == -1:  # no verbatim match: the tolerant reading decides
        assert (doc.id, a, b) in found, (text[a:b], retyped, found)
    if (doc.id, a, b) in found and len(found) == 1:
        assert locate_answer(retyped, [doc]) == (doc.id, a, b)
    elif len(found) > 1:
        with pytest.raises(AmbiguousAnswer):
            locate_answer(retyped, [doc])


# -- the app: Retrieve scores a typed answer that differs in line breaks, and asks which place
# an answer that occurs twice means ---------------------------------------------------------
def test_retrieve_scores_a_typed_answer_and_lets_the_user_pick_among_places(fake_embedder):  # noqa: F811
    from explorer.documents.samples import load_sample
    from tests.app.test_app_pages import ask, ok, start

    handbook = load_sample("handbook.pdf")
    at = start("retrieve")
    ask(at, "Who is told?", "reported to the plant superintendent the same day")
    ok(at)
    assert not at.warning
    assert len([c.value for c in at.caption if c.value.startswith("Recall")]) == 2

    header = "Harbor Valley Water Authority - Plant\nOperations Handbook (rev. 7)"
    ask(at, "Who publishes the handbook?", header)
    assert any("occurs more than once" in w.value for w in at.warning)
    assert not any("Retrieve lists" in w.value for w in at.warning)  # it does, right below
    pick = at.radio(key="w.answer_pick")
    second = handbook.text.index("Harbor Valley Water Authority - Plant Operations", 10)
    assert len(pick.options) >= 3 and f"characters {second:,}–{second + 66:,}" in pick.options[1]
    pick.set_value(1).run()
    ok(at)
    assert not any("occurs more than once" in w.value for w in at.warning)
    assert at.session_state["ret_query"]["ref"] == [handbook.id, second, second + 66]
    assert len([c.value for c in at.caption if c.value.startswith("Recall")]) == 2
    next(b for b in at.button if b.label == "Keep the question").click().run()
    assert at.session_state["questions"][-1]["ref"] == [handbook.id, second, second + 66]
    # typed without its case, the answer still scores (it was "not an exact substring")
    ask(at, "Who is told?", "Reported To The Plant Superintendent the same day")
    ok(at)
    assert not at.warning
    assert len([c.value for c in at.caption if c.value.startswith("Recall")]) == 2


def test_case_aside_only_when_asked_and_at_exact_offsets():
    """A typed answer without its case ("utiliser" for "Utiliser") is found only when the caller
    sets case aside (the app, as a last resort); question files keep case. Offsets stay exact,
    whatever lower case does to a character's length ("İ" lowers to two)."""
    text = "Options:\n  Utiliser un tampon\nde ligne. İstanbul ÉTÉ.\n"
    d = Document("a.txt", "text", text)
    assert find_answer("utiliser un tampon de ligne", [d]) == []
    ((_, s, e),) = find_answer("utiliser un tampon de ligne", [d], fold_case=True)
    assert text[s:e] == "Utiliser un tampon\nde ligne"
    ((_, s, e),) = find_answer("été", [d], fold_case=True)
    assert text[s:e] == "ÉTÉ"
    assert find_tolerant("stanbul", text, fold_case=True) == [(text.index("stanbul"), text.index("stanbul") + 7)]
    with pytest.raises(LoadError, match="not an exact substring"):
        locate_answer("utiliser un tampon de ligne", [d])


def test_invisible_spaces_copied_with_an_answer_do_not_stop_its_match():
    """Text copied from a page carries word joiners (the app's escaped messages put them between
    "-" and "-"), zero-width spaces and byte-order marks: they are nothing, as a soft hyphen."""
    text = "Run dpkg --no-act to see what would happen."
    assert find_answer("\ufeffdpkg -\u2060-no-act\u200b", [Document("a.txt", "text", text)]) == [
        (Document("a.txt", "text", text).id, 4, 17)
    ]


@pytest.mark.parametrize("doc_form", ["NFC", "NFD"])
def test_an_answer_in_the_other_unicode_form_is_found_at_the_documents_offsets(doc_form):
    """A Vietnamese or French text saved with decomposed accents (macOS file names, some PDFs)
    and an answer typed with composed ones, or the reverse: the same letters are found, at the
    document's own offsets."""
    import unicodedata

    text = unicodedata.normalize(doc_form, "Mở đầu. Người Việt nói tiếng Việt. Une idée très forte.")
    d = Document("vi.txt", "text", text)
    for answer in ("Người Việt nói tiếng Việt.", "idée très"):
        other = unicodedata.normalize("NFD" if doc_form == "NFC" else "NFC", answer)
        doc_id, s, e = locate_answer(other, [d])
        assert doc_id == d.id and text[s:e] == unicodedata.normalize(doc_form, answer)
    # an accented answer found in neither form is "not found", once (it recursed NFC -> NFD -> NFC ...)
    with pytest.raises(LoadError, match="not an exact substring"):
        locate_answer("café noir", [d])
