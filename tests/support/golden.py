"""Golden chunks: a digest of every strategy's offsets on the samples and the Chroma corpora.

Saved once before the redesign (issue 11) and compared by ``test_golden_chunks``: a move of
code must not move a single cut. Embedding strategies run on the deterministic fake embedder,
because int8 arithmetic differs between CPUs and would make a real model's cuts machine-bound;
their real-model paths are covered by their own tests.

Regenerate (only when a change of cuts is intended): ``python -m tests.support.golden``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from explorer import Context, chunk_document
from explorer.documents.loaders import load_path
from explorer.documents.samples import SAMPLES, load_sample
from explorer.embedding.fake import FakeEmbedder

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "golden_chunks.json"
CORPORA = ROOT.parent / "shared" / "benchmarks" / "chroma" / "corpora"
MINILM = "all-MiniLM-L6-v2"

#: (strategy, params) pairs: every strategy's defaults plus variants that take other paths.
CONFIGS: tuple[tuple[str, dict], ...] = (
    ("fixed", {}),
    ("fixed", {"chunk_size": 200, "chunk_overlap": 50, "length": "words"}),
    ("fixed", {"chunk_size": 128, "chunk_overlap": 16, "length": "tokens"}),
    ("sentence", {}),
    ("sentence", {"sentences_per_chunk": 3, "overlap_sentences": 0, "chunk_size": 400}),
    ("paragraph", {}),
    ("paragraph", {"chunk_size": 200, "length": "tokens"}),
    ("recursive", {}),
    ("recursive", {"chunk_size": 400, "chunk_overlap": 0, "keep_separator": "end"}),
    ("recursive", {"chunk_size": 256, "chunk_overlap": 32, "length": "tokens"}),
    ("markdown", {}),
    ("markdown", {"max_heading_level": 2, "chunk_size": 600, "merge_small_sections": True}),
    ("semantic", {}),
    ("semantic", {"breakpoint_mode": "standard_deviation", "window_embedding": "joined"}),
    ("cluster", {}),
    ("hybrid", {}),
)


def documents(with_corpora: bool = True) -> list:
    docs = [load_sample(name) for name in SAMPLES]
    if with_corpora and CORPORA.exists():
        docs += [load_path(p) for p in sorted(CORPORA.glob("*.md"))]
    return docs


def key(strategy: str, params: dict, doc_name: str) -> str:
    return f"{strategy} {json.dumps(params, sort_keys=True)} {doc_name}"


def digest(doc, strategy: str, params: dict) -> str:
    """sha256 of the (start, end) list, with the count in front for readable diffs."""
    ctx = Context(model=MINILM, embedder=FakeEmbedder(), tokens_model=MINILM)
    chunks = chunk_document(doc, strategy, dict(params), ctx)
    offsets = ",".join(f"{c.start}:{c.end}" for c in chunks)
    return f"{len(chunks)} {hashlib.sha256(offsets.encode()).hexdigest()[:20]}"


def compute(with_corpora: bool = True) -> dict[str, str]:
    out = {}
    for doc in documents(with_corpora):
        for strategy, params in CONFIGS:
            out[key(strategy, params, doc.name)] = digest(doc, strategy, params)
    return out


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
