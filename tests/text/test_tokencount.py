"""Token counts from one tokenisation of the document equal tokenising each slice on its own,
for every bundled tokenizer (MiniLM's WordPiece, e5's SentencePiece Unigram)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import Document, get_strategy
from explorer.models.paths import shared_tokenizer, tokenizer_file
from explorer.text.chunk import Chunk
from explorer.text.length import encoded_lengths, get_length
from explorer.text.token_cache import count_chunk_tokens, token_index
from explorer.text.token_counts import TokenIndex
from tests.support.golden import documents

TRICKY = (
    "Unaffable naïve café: M. Dupont paid 3,5 € (e.g. «tarif réduit») on 12/03. "
    "東京タワーは高い。Ünïcödé e\u0301 combining, x\x00y, don't, URL https://ex.am/ple?q=1. "
    "Emoji 🙂🙃 and a veryveryveryverylongwordthatkeepsgoingwithoutanyspaceatallforsure.\n\n"
    "Code: def f(x): return x**2  # comment\n\tTabs\tand  double  spaces.\n"
)
#: Whitespace that Python and the tokenizers see differently (zero-width space, no-break
#: space, ideographic space, a control character, tabs, runs of spaces and newlines).
ODD_SPACE = "a  b\n\n c \u200b d\u00a0e \u3000 f\t\tg \x01h i\u200dj k\u0301 "

MINILM = "all-MiniLM-L6-v2"
MODELS = (None, MINILM)  # None: the default model (e5)
FRENCH = Path(__file__).parents[2] / "bench" / "data" / "french"


def exact(doc: Document, spans, model: str | None = None) -> list[int]:
    tok = get_length("tokens", model)
    return [tok(doc.text[s:e]) for s, e in spans]


def as_chunks(doc: Document, spans) -> list[Chunk]:
    return [
        Chunk(doc.id, doc.name, i, s, e, doc.text[s:e], e - s, "chars", "") for i, (s, e) in enumerate(spans)
    ]


def random_spans(text: str, rng: random.Random, n: int) -> list[tuple[int, int]]:
    """Half anywhere, half with edges on whitespace (where chunkers cut), up to 3,000 chars."""
    spans = []
    size = len(text)
    for _ in range(n):
        a = rng.randrange(size)
        if rng.random() < 0.5:
            while a < size and not text[a].isspace():
                a += 1
            a += rng.random() < 0.5
        b = min(size, a + rng.randrange(1, 3000))
        if rng.random() < 0.5:
            while b < size and not text[b].isspace():
                b += 1
            b += rng.random() < 0.3
        a, b = min(a, size), min(b, size)
        if b > a:
            spans.append((a, b))
    return spans


def texts() -> dict[str, str]:
    out = {"tricky": TRICKY * 20, "odd-space": ODD_SPACE * 200}
    out.update({doc.name: doc.text[:150_000] for doc in documents()})
    out.update({p.stem: p.read_text(encoding="utf-8")[:150_000] for p in sorted(FRENCH.glob("*.txt"))[:2]})
    return out


UNITS = [("tokens", None), ("tokens", MINILM), ("cl100k", None), ("o200k", None)]


@pytest.mark.parametrize(("unit", "model"), UNITS, ids=["e5", "minilm", "cl100k", "o200k"])
def test_index_counts_equal_tokenising_each_slice(unit, model):
    length = get_length(unit, model)
    rng = random.Random(7)
    for name, text in texts().items():
        index = length.index(text)
        assert index.exact, name  # the self-check passed: the fast path is in use
        spans = random_spans(text, rng, 1000)
        direct = [length(text[a:b]) for a, b in spans]
        assert index.count_many(spans) == direct, name  # in numpy, many at once
        assert [index.count(a, b) for a, b in spans[:300]] == direct[:300], name  # one by one


@pytest.mark.parametrize("model", MODELS, ids=["e5", "minilm"])
@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(0, len(TRICKY + ODD_SPACE)), min_size=2, max_size=12, unique=True))
def test_counts_equal_exact_counts_at_any_cut(model, cuts):
    doc = Document("t.txt", "text", TRICKY + ODD_SPACE)
    spans = [(a, b) for a, b in itertools.pairwise(sorted(cuts)) if b > a]
    assert count_chunk_tokens(doc, as_chunks(doc, spans), model) == exact(doc, spans, model)


@pytest.mark.parametrize("unit", ["cl100k", "o200k"])
@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 3 * len(TRICKY + ODD_SPACE)), min_size=2, max_size=12, unique=True))
def test_openai_slices_equal_exact_counts_at_any_cut(unit, cuts):
    text = (TRICKY + ODD_SPACE) * 3  # over the length where slices are counted from the index
    length = get_length(unit)
    spans = [(a, b) for a, b in itertools.pairwise(sorted(cuts)) if b > a]
    assert length.slices(text, spans) == [length(text[a:b]) for a, b in spans]


@pytest.mark.parametrize("model", MODELS, ids=["e5", "minilm"])
def test_chunks_of_every_token_strategy_are_counted_without_tokenising_them(model, monkeypatch):
    text = (TRICKY * 30).strip()
    doc = Document("t.md", "text", text)
    index = token_index(doc.text, model)
    for strategy, params in (
        ("recursive", {"chunk_size": 60, "chunk_overlap": 10, "length": "tokens"}),
        ("fixed", {"chunk_size": 50, "chunk_overlap": 10, "length": "tokens"}),
    ):
        chunks = get_strategy(strategy).chunk(doc, params)
        spans = [(c.start, c.end) for c in chunks]
        assert count_chunk_tokens(doc, chunks, model) == exact(doc, spans, model)
    # recursive cuts between words: almost no chunk needs a fragment tokenised
    chunks = get_strategy("recursive").chunk(doc, {"chunk_size": 300, "length": "tokens"})
    edges = [index._interior(c.start, c.end)[1] for c in chunks]
    assert sum(not e for e in edges) >= 0.8 * len(chunks)


def test_an_index_that_fails_its_self_check_counts_by_tokenising(monkeypatch):
    """A tokenizer whose slices do not add up is never counted from the index."""
    tok = shared_tokenizer(tokenizer_file(MINILM))
    text = TRICKY * 10
    monkeypatch.setattr(TokenIndex, "_interior", lambda self, a, b: (0, []))  # a broken rule
    index = TokenIndex(text, tok)
    assert not index.exact
    spans = random_spans(text, random.Random(1), 50)
    assert index.count_many(spans) == encoded_lengths(tok, [text[a:b] for a, b in spans], index.special)


def test_counts_after_the_fragment_cache_fills_are_the_tokenizers():
    """Past FRAGMENT_CACHE fragments the cache starts afresh; cleared after the look-up of what
    it held, a count of one fragment it held and one it did not raised KeyError (Explore on a
    URL list: fixed at chunk_size 1, then back at 500, showed Streamlit's error page)."""
    from explorer.text.token_counts import FRAGMENT_CACHE

    tok = shared_tokenizer(tokenizer_file(MINILM))
    words = [f"w{i:05d}x" for i in range(FRAGMENT_CACHE + 10)]
    text = " ".join(words)
    index = TokenIndex(text, tok)
    spans, at = [], 0
    for w in words:  # the digits of every word: cut inside a token, each tokenised (and cached) alone
        spans.append((at + 1, at + len(w) - 1))
        at += len(w) + 1
    index.count_many(spans)
    assert len(index._frags) > FRAGMENT_CACHE
    again = [spans[0], (spans[1][0], spans[1][0] + 3)]  # one fragment cached, one not
    assert index.count_many(again) == encoded_lengths(tok, [text[a:b] for a, b in again], index.special)


def test_a_text_that_cannot_be_cut_between_words_is_counted_slice_by_slice():
    """Pieces of a text without a letter followed by a space (a 100 KB single token run) would
    not add up: the index says it is inexact and counts by tokenising, and its size is known."""
    tok = shared_tokenizer(tokenizer_file(MINILM))
    text = "x" * 100_000
    index = TokenIndex(text, tok)
    assert not index.exact and index.nbytes > 0
    spans = [(0, 10), (5, 50_000), (99_990, 100_000)]
    assert index.count_many(spans) == encoded_lengths(tok, [text[a:b] for a, b in spans], index.special)


def test_gap_counts_are_kept_within_the_room_the_index_counts_for_them():
    """Word gaps of ordinary prose are kept (12 bytes a space, within the 3 bytes a character
    the index's size counts); a text of little but spaces is counted afresh instead, so the
    byte-bounded index cache stays bounded. Either way the counts are the tokenizer's."""
    tok = shared_tokenizer(tokenizer_file("all-MiniLM-L6-v2"))
    prose = TokenIndex("The operators log every backwash before the shift ends. " * 200, tok)
    pos, counts = prose.gap_counts(" ")
    assert " " in prose._gaps and len(pos) == len(counts) + 1
    spaces = TokenIndex("a " * 5_000, tok)
    pos, counts = spaces.gap_counts(" ")
    assert spaces._gaps == {}
    text = spaces.text
    gaps = [text[p:q] for p, q in itertools.pairwise(pos[:51].tolist())]
    assert counts[:50].tolist() == encoded_lengths(tok, gaps, 2)


def test_a_long_text_is_counted_in_pieces_that_add_up():
    """A text over LONG_TEXT_CHARS goes to the tokenizer in pieces (its whole result for a 20 MB
    line took 2 GB); cut between a letter and a space, the pieces add up to the whole count."""
    from explorer.text import tokenizing

    tok = get_length("tokens").tokenizer
    prose = (Path(__file__).parents[2] / "bench" / "data" / "french" / "man-grep.txt").read_text()
    text = (prose * (1 + 2 * tokenizing.LONG_TEXT_CHARS // len(prose)))[: 2 * tokenizing.LONG_TEXT_CHARS + 17]
    seen: list[int] = []

    class Spy:
        def encode_batch(self, texts, add_special_tokens=False):
            seen.extend(map(len, texts))
            return tok.encode_batch(texts, add_special_tokens=add_special_tokens)

    whole = len(tok.encode(text, add_special_tokens=False).ids)
    short = len(tok.encode("short one", add_special_tokens=False).ids)
    assert encoded_lengths(Spy(), [text, "short one"], 2) == [whole + 2, short + 2]
    assert max(seen) <= tokenizing.LONG_PIECE_CHARS


def test_words_count_each_chinese_or_japanese_character_and_cover_every_character():
    """A Chinese or Japanese paragraph has no spaces: it was one "word", so ``length=words`` let a
    207-character paragraph through a 20-word window. Each ideograph or kana is a word now (with
    the punctuation around it); other text is still counted by its spaces."""
    words = get_length("words")
    assert words("我们在测试脚本检测") == 9
    assert words("これは日本語です。") == 8
    assert words("使用Linux系统。") == 5  # 使 用 Linux 系 统。
    assert words("Hello world, this — is it.") == 6 and words("한국어 문장입니다") == 2
    text = "「中文」。他说：“我来了。” Linux 系统 abc。def"
    spans = words.spans(text)
    assert len(spans) == words(text) == sum(words.slices(text, spans))
    covered = "".join(text[s:e] for s, e in spans)
    assert covered == "".join(text.split())  # every non-space character is in one word
    doc = Document("zh.txt", "text", "人工智能是计算机科学的一个分支，它企图了解智能的实质。" * 8)
    chunks = get_strategy("fixed").chunk(doc, {"chunk_size": 20, "chunk_overlap": 0, "length": "words"})
    assert all(len(c.text) <= 30 for c in chunks) and len(chunks) >= 10
