"""A generated corpus for the corpus runner: N plain-text documents and a question file with
gold spans, deterministic (the same arguments give byte-identical files).

    python bench/make_corpus.py OUT --docs 10000 [--every 10] [--seed 0]

writes ``OUT/corpus/dNN/doc_NNNNN.txt`` (1,000 documents a folder) and ``OUT/questions.jsonl``:
one question for every ``every``-th document, whose gold span is a sentence stating a fact
about that document's subject (``{"question", "references": [{"document", "start", "end",
"content"}]}``). Documents are ~2,500 characters of made-up words in 4-7 paragraphs; each has a
subject name of its own, so retrieval is neither trivial nor hopeless.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

_SYLLABLES = (
    "ka", "lo", "mi", "ra", "ten", "vo", "sa", "lu", "pe", "dri", "gan", "bel", "or", "fi",
    "mun", "tas", "el", "qui", "zor", "han", "pla", "ver", "ro", "si", "nok", "tur", "ba", "del",
    "cho", "ma", "ris", "ul", "fen", "gor", "li", "sto", "var", "ne", "pri", "sel",
)  # fmt: skip
_VERBS = ("shipped", "repaired", "inspected", "sold", "painted", "counted", "stored", "moved")
_NOUNS = ("barrels", "lanterns", "engines", "crates", "bridges", "ledgers", "turbines", "valves")
DOCS_PER_FOLDER = 1000


def _word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts))


def _vocabulary(seed: int, size: int = 3000) -> list[str]:
    rng = random.Random(seed)
    return sorted({_word(rng, rng.randint(1, 3)) for _ in range(size)})


def _sentence(rng: random.Random, words: list[str], subject: str) -> str:
    n = rng.randint(8, 16)
    body = [rng.choice(words) for _ in range(n)]
    if rng.random() < 0.3:
        body.insert(rng.randint(0, n - 1), subject)
    text = " ".join(body)
    return text[0].upper() + text[1:] + rng.choice((".", ".", ".", ";", "!"))


def make_document(i: int, seed: int, words: list[str]) -> tuple[str, str, str]:
    """(text, question, the fact sentence it asks about) of document ``i``."""
    rng = random.Random(seed * 1_000_003 + i)
    subject = (_word(rng, 3) + str(i)).capitalize()
    verb, noun = rng.choice(_VERBS), rng.choice(_NOUNS)
    count, year = rng.randint(2, 999), rng.randint(1900, 2030)
    fact = f"In {year} the {subject} company {verb} {count} {noun} across the northern district."
    question = f"How many {noun} were {verb} by the {subject} company in {year}?"
    paragraphs = []
    for _ in range(rng.randint(4, 7)):
        paragraphs.append(" ".join(_sentence(rng, words, subject) for _ in range(rng.randint(2, 4))))
    at = rng.randrange(len(paragraphs))
    paragraphs[at] = paragraphs[at] + " " + fact
    title = f"Report {i}: the {subject} company"
    return title + "\n\n" + "\n\n".join(paragraphs) + "\n", question, fact


def make_corpus(out: str | Path, docs: int, every: int = 10, seed: int = 0) -> tuple[Path, Path]:
    """Write the corpus and its questions under ``out``; (corpus folder, question file)."""
    out = Path(out)
    corpus = out / "corpus"
    words = _vocabulary(seed)
    lines = []
    for i in range(docs):
        text, question, fact = make_document(i, seed, words)
        folder = corpus / f"d{i // DOCS_PER_FOLDER:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"doc_{i:05d}.txt"
        (folder / name).write_text(text, encoding="utf-8")
        if i % every == 0:
            start = text.index(fact)
            ref = {"document": name, "start": start, "end": start + len(fact), "content": fact}
            lines.append(json.dumps({"question": question, "references": [ref]}))
    questions = out / "questions.jsonl"
    questions.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return corpus, questions


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--docs", type=int, default=10_000)
    p.add_argument("--every", type=int, default=10, help="one question every N documents")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    corpus, questions = make_corpus(a.out, a.docs, a.every, a.seed)
    print(f"{a.docs} documents in {corpus}, questions in {questions}")


if __name__ == "__main__":
    main()
