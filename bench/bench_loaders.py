"""Loading: text in several encodings, Markdown, a 300-page PDF, clean-up, and the profile.

Medians of a few runs, printed; nothing asserted. The PDF is generated with fpdf2 (a dev
dependency) like the hostile-input corpus of the tests.

Run: .venv/bin/python bench/bench_loaders.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys

from common import ROOT, median_time

sys.path.insert(0, str(ROOT / "tests" / "support"))

from hostile_inputs import make_pdf, numbered_pages

from explorer.documents.cleanup import Cleanup
from explorer.documents.loaders import load_bytes
from explorer.documents.markdown_blocks import _structure
from explorer.documents.samples import sample_bytes
from explorer.strategies.profile import profile

ALL = Cleanup(True, True, True)


def _uncached(fn, *args):
    """Markdown structure is cached per text (the profile reuses the loader's parse): time a
    cold parse."""
    _structure.cache_clear()
    return fn(*args)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    n = ap.parse_args().repeat

    report = sample_bytes("rapport_annuel.txt")[1].decode()
    text = (report * (1_048_576 // len(report) + 1))[:1_048_576]
    guide = sample_bytes("guide.md")[1].decode()
    md = (guide * (1_048_576 // len(guide) + 1))[:1_048_576]
    pdf = make_pdf(numbered_pages(300, 40), header="Long report", footer="Page {n} of {total}")

    cases = [
        ("1 MB text, UTF-8", lambda: load_bytes(text.encode(), "r.txt")),
        (
            "1 MB text, cp1252 (charset-normalizer)",
            lambda: load_bytes(text.encode("cp1252", "replace"), "r.txt"),
        ),
        ("1 MB text, UTF-16 with BOM", lambda: load_bytes(text.encode("utf-16"), "r.txt")),
        ("1 MB text, all clean-up steps", lambda: load_bytes(text.encode(), "r.txt", ALL)),
        ("1 MB Markdown (markdown-it-py blocks)", lambda: _uncached(load_bytes, md.encode(), "g.md")),
        (f"300-page PDF ({len(pdf) // 1024} KB, pypdf)", lambda: load_bytes(pdf, "long.pdf")),
        ("300-page PDF, all clean-up steps", lambda: load_bytes(pdf, "long.pdf", ALL)),
    ]
    print(f"{'case':48s} {'median':>10s} {'MB/s':>7s}")
    docs = {}
    for label, fn in cases:
        t, doc = median_time(fn, repeat=n, warmup=0)
        docs[label] = doc
        mb = len(doc.text.encode()) / 1e6
        print(f"{label:48s} {t * 1000:8.0f} ms {mb / t:7.2f}")
    for label in ("1 MB text, UTF-8", "1 MB Markdown (markdown-it-py blocks)"):
        doc = docs[label]
        t, _ = median_time(lambda doc=doc: profile(doc), repeat=n, warmup=1)
        print(f"{'profile of ' + label:48s} {t * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
