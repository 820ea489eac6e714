"""Sentence segmentation: our segmenter vs the maintained libraries, on the same inputs.

Prints, per segmenter: the tricky cases of ``tests/support/sentence_cases.py`` it gets exactly right
(those the project requires, and all of them),
throughput (MB/s, median of 3) on ~1 MB of prose (the Chroma corpora plus French text), the
wall and CPU time for that 1 MB, and a scaling ratio (CPU time on 1 MB / 4 x CPU time on
its first 250 KB; 1.0 = linear).
Each peer is imported lazily and skipped with a note when it is not installed
(``pip install -r requirements-bench.txt``). Nothing here asserts a time.

Run: ``.venv/bin/python bench/bench_sentences.py [--quick]``
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable

from common import ROOT, chroma_text, megabytes, table

from explorer.text.sentences import _whole_text_sentences, paragraph_spans, sentence_spans

Spans = list[tuple[int, int]]

# A French passage (written for this benchmark) with the usual traps: titles, p. 12,
# decimals with a comma, guillemets with spaces, ellipses, e-mail and URL.
FRENCH = """\
M. Dupont, directeur financier de la société, a présenté le rapport annuel le 12 mars. \
Selon lui, le chiffre d'affaires a progressé de 4,2 % en un an, soit 3,5 millions d'euros \
de plus qu'en 2022. « Nous avons tenu nos engagements », a-t-il déclaré devant le conseil. \
Mme Martin, présidente du comité d'audit, a rappelé que les comptes détaillés figurent p. 12 \
et p. 48 du document. Les questions peuvent être adressées à contact@exemple.fr ou déposées \
sur https://www.exemple.fr/rapport.2023?lang=fr avant la fin du mois.

Les frais de personnel, c.-à-d. les salaires et les charges sociales, ont augmenté de 2,8 %. \
Le nombre de salariés est passé de 1 240 à 1 315… Une hausse modeste, mais continue. \
Faut-il s'en inquiéter ? Pas vraiment ! Les recrutements concernent surtout la recherche, \
l'informatique, etc. et répondent à la croissance des commandes. Le Dr Lefèvre, responsable \
de la R&D, a souligné que trois brevets avaient été déposés (cf. annexe B).

Pour l'exercice suivant, la direction prévoit : 1. une baisse des coûts logistiques ; \
2. l'ouverture de deux agences, à Lyon et à Lille ; 3. un investissement de 7,5 millions \
d'euros dans les systèmes d'information. MM. Durand et Petit, commissaires aux comptes, \
n'ont formulé aucune réserve. « Les procédures de contrôle interne sont satisfaisantes. » \
Le rapport sera publié sur le site de l'entreprise dans les prochains jours.
"""


def corpus(chars: int = 1_000_000) -> str:
    """~``chars`` characters: Chroma English prose plus repeated French paragraphs (20 %)."""
    fr_target = chars // 5
    french = "\n\n".join([FRENCH] * (fr_target // len(FRENCH) + 1))[:fr_target]
    return chroma_text(chars - len(french) - 2) + "\n\n" + french


# -- segmenters: text -> spans (or sentence strings) ---------------------------------------


def ours(text: str, lang: str = "en") -> Spans:
    # past the memo of whole-document calls (sentence_spans remembers its last texts): each
    # repeat must segment again, as the peers do
    _whole_text_sentences.cache_clear()
    return sentence_spans(text)


def make_pysbd() -> Callable[..., Spans]:
    import pysbd

    segs: dict[str, pysbd.Segmenter] = {}

    def run(text: str, lang: str = "en") -> Spans:
        # pysbd is superlinear on long inputs: feed it paragraphs, as one would in practice.
        seg = segs.setdefault(lang, pysbd.Segmenter(language=lang, clean=False, char_span=True))
        out: Spans = []
        for ps, pe in paragraph_spans(text):
            out.extend((ps + s.start, ps + s.end) for s in seg.segment(text[ps:pe]))
        return out

    return run


def make_blingfire() -> Callable[..., Spans]:
    import blingfire

    def run(text: str, lang: str = "en") -> Spans:
        _, offsets = blingfire.text_to_sentences_and_offsets(text)
        return [tuple(o) for o in offsets]

    return run


def make_sentencex() -> Callable[..., Spans]:
    from sentencex import get_sentence_boundaries

    def run(text: str, lang: str = "en") -> Spans:
        return [(b["start_index"], b["end_index"]) for b in get_sentence_boundaries(lang, text)]

    return run


def make_nupunkt() -> Callable[..., Spans]:
    import nupunkt

    def run(text: str, lang: str = "en") -> Spans:
        return list(nupunkt.sentence_spans(text))

    return run


def make_syntok() -> Callable[..., Spans]:
    from syntok import segmenter

    def run(text: str, lang: str = "en") -> Spans:
        out: Spans = []
        for paragraph in segmenter.analyze(text):
            for sentence in paragraph:
                toks = [t for t in sentence if t.value]
                if toks:
                    out.append((toks[0].offset, toks[-1].offset + len(toks[-1].value)))
        return out

    return run


PEERS: dict[str, tuple[str, Callable[[], Callable[..., Spans]], set[str]]] = {
    # name: (import name, factory, languages it takes; others fall back to English)
    "pysbd": ("pysbd", make_pysbd, {"en", "fr", "de", "zh", "ja"}),
    "blingfire": ("blingfire", make_blingfire, set()),
    "sentencex": ("sentencex", make_sentencex, {"en", "fr", "de", "zh", "ja"}),
    "nupunkt": ("nupunkt", make_nupunkt, set()),
    "syntok": ("syntok", make_syntok, set()),
}


def load_cases():
    spec = importlib.util.spec_from_file_location("sentence_cases", ROOT / "tests" / "support" / "sentence_cases.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod.CASES, mod.LANG, mod.REQUIRED


def as_sentences(text: str, spans: Spans) -> list[str]:
    return [t for t in (text[s:e].strip() for s, e in spans) if t]


def score(fn, langs: set[str], cases, lang_of) -> tuple[int, list[str]]:
    right, wrong = 0, []
    for cid, text, expected in cases:
        lang = lang_of.get(cid, "en")
        try:
            got = as_sentences(text, fn(text, lang if lang in langs else "en"))
        except Exception as err:  # a peer crashing on a case counts as wrong
            got = [f"<{type(err).__name__}>"]
        if got == expected:
            right += 1
        else:
            wrong.append(cid)
    return right, wrong


def timed(fn: Callable[[], Spans], repeat: int) -> tuple[float, float, Spans]:
    """Median wall and CPU seconds of ``fn()`` over ``repeat`` runs (GC off while timing).

    CPU time is printed beside wall time because this 2-core machine is shared: under load,
    wall time inflates while CPU time stays close to what the code costs."""
    walls, cpus, result = [], [], []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            w0, c0 = time.perf_counter(), time.process_time()
            result = fn()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
        finally:
            gc.enable()
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 KB instead of 1 MB, one run each")
    args = ap.parse_args()
    size = 200_000 if args.quick else 1_000_000
    repeat = 1 if args.quick else 3

    cases, lang_of, required = load_cases()
    text = corpus(size)
    quarter = text[: len(text) // 4]
    mb = megabytes(text)
    print(f"Corpus: {len(text):,} characters = {mb:.2f} MB UTF-8 (Chroma corpora + 20 % French)")
    print(f"Tricky cases: {len(cases)} (tests/support/sentence_cases.py); Python {sys.version.split()[0]}\n")

    segmenters: list[tuple[str, Callable[..., Spans], set[str]]] = [
        ("explorer (ours)", ours, {"en", "fr", "de", "zh", "ja"})
    ]
    notes = []
    for name, (module, factory, langs) in PEERS.items():
        if importlib.util.find_spec(module) is None:
            notes.append(f"{name}: not installed, skipped (pip install -r requirements-bench.txt)")
            continue
        segmenters.append((name, factory(), langs))

    rows = []
    failures = {}
    for name, fn, langs in segmenters:
        right, wrong = score(fn, langs, cases, lang_of)
        failures[name] = wrong
        req_right = sum(1 for cid, *_ in cases if cid in required and cid not in wrong)
        wall, cpu, spans = timed(lambda fn=fn: fn(text), repeat)
        _, cpu_q, _ = timed(lambda fn=fn: fn(quarter), repeat)
        rows.append(
            (
                name,
                f"{req_right}/{len(required)}",
                f"{right}/{len(cases)}",
                mb / wall,
                wall,
                mb / cpu,
                cpu,
                len(spans),
                cpu / (4 * cpu_q),
            )
        )
        print(f"  measured {name}", file=sys.stderr)
    headers = [
        "segmenter",
        "named cases",
        "all cases",
        "MB/s",
        "wall s",
        "MB/s CPU",
        "CPU s",
        "sentences",
        "scaling",
    ]
    print(table(headers, rows))
    print("\nnamed cases: those the project requires; all cases adds our documented decisions and extras.")
    print("MB/s and wall s: median wall time of the runs; CPU: process time (less sensitive to load);")
    print("scaling: CPU time on 1 MB / (4 x CPU time on its first 250 KB); 1.0 = linear.")
    print()
    for name, wrong in failures.items():
        print(f"{name} misses: {', '.join(wrong) if wrong else '-'}")
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
