"""Legacy encodings: how often a text file that is not UTF-8 is read with the right codec.

Two sets:
- French with few accents among many ASCII words (generated: 200 seeds x 4 shapes, Latin-1 and
  cp1252), where charset-normalizer most often ranks a wrong codec first;
- Vim's tutorials in their legacy encodings, checked against their UTF-8 copies (Debian's
  ``vim-runtime``, ``/usr/share/vim/vim*/tutor``; skipped where it is not installed);
- slices of 800, 3,000 and 10,000 characters of the manual pages Debian ships in 15 languages
  (``/usr/share/man/<lang>``, rendered with ``man``; skipped where there are none), each saved in
  one of its language's two legacy code pages, checked against that code page's own reading.

    .venv/bin/python bench/bench_encodings.py
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

from common import table

from explorer.documents.decoding import decode_text, normalise
from explorer.errors import LoadError

_NON_ASCII = re.compile("[^\x00-\x7f]")
ASCII_WORDS = (
    "le la les un une des de du pour avec sans dans sur sous option fichier commande ligne texte "
    "motif recherche sortie entree valeur nombre mode liste affiche lance utilise grep -i -v -c "
    "--color --count --regexp PATTERN FILE expression reguliere si alors sinon chaque fois"
)
ACCENTED = "été créé déjà très où à fenêtre coûte naïf élève garçon leçon première côté deuxième système"
#: Each legacy tutorial's real encoding (its first lines or its name say it).
TUTORS = {
    **{k: "latin-1" for k in ["bar", "ca", "da", "de", "es", "fr", "it", "nb", "nl", "no", "pt", "sv"]},
    "eo": "iso8859-3",
    **{k: "iso8859-2" for k in ["cs", "hr", "hu", "pl", "sk"]},
    **{f"{k}.cp1250": "cp1250" for k in ["cs", "hr", "hu", "pl", "sk", "sr"]},
    "el": "iso8859-7",
    "el.cp737": "cp737",
    "ru": "koi8-r",
    "ru.cp1251": "cp1251",
    "tr.iso9": "iso8859-9",
    "ja.euc": "euc-jp",
    "ja.sjis": "shift_jis",
    "ko.euc": "euc-kr",
    "zh.big5": "big5",
    "zh.euc": "gb2312",
}


def read(data: bytes) -> tuple[str | None, str]:
    try:
        text, codec, _ = decode_text(data, "f.txt")
        return text, codec
    except LoadError:
        return None, "refused"


def french() -> list[list]:
    rows = []
    for codec in ("latin-1", "cp1252"):
        wrong: dict[str, int] = {}
        n = 0
        for seed in range(200):
            rnd = random.Random(seed)
            for words, accents in ((100, 1), (300, 3), (1000, 10), (300, 20)):
                out = [rnd.choice(ASCII_WORDS.split()) for _ in range(words)]
                for _ in range(accents):
                    out.insert(rnd.randrange(len(out)), rnd.choice(ACCENTED.split()))
                text = " ".join(out) + "\n"
                got, label = read(text.encode(codec))
                n += 1
                if got != text:
                    wrong[label] = wrong.get(label, 0) + 1
        rows.append([f"French, few accents ({codec})", n, n - sum(wrong.values()), ", ".join(f"{k} {v}" for k, v in wrong.items()) or "—"])
    return rows


def tutors() -> list[list]:
    found = sorted(glob.glob("/usr/share/vim/vim*/tutor"))
    if not found:
        print("Vim's tutorials not found (install vim-runtime): skipped", file=sys.stderr)
        return []
    folder = Path(found[-1])
    right, wrong = 0, []
    for name, codec in TUTORS.items():
        data = (folder / f"tutor.{name}").read_bytes()
        want = data.decode(codec, "replace")
        got, label = read(data)
        if got == want:
            right += 1
        else:
            wrong.append(f"{name} as {label}")
    return [["Vim's legacy tutorials", len(TUTORS), right, ", ".join(wrong)]]


#: Each language's two legacy code pages (the manual pages are UTF-8; a slice is saved in one).
MAN_CODECS = {
    **{k: ("iso8859_2", "cp1250") for k in ("pl", "cs", "hu", "sl", "hr")},
    "ro": ("iso8859_16", "cp1250"),
    "tr": ("iso8859_9", "cp1254"),
    **{k: ("latin-1", "cp1252") for k in ("fr", "de", "es", "it", "pt", "nl", "sv", "da")},
}
_MOJIBAKE = re.compile("Ã[\x80-\xbf¡-¿]")  # a page already holding UTF-8 read as Latin-1


def man_pages(per_language: int = 20) -> list[list]:
    if not shutil.which("man"):
        print("man not found: the manual pages' row is skipped", file=sys.stderr)
        return []
    rnd, rows = random.Random(7), []
    for lang, codecs in MAN_CODECS.items():
        files = sorted(glob.glob(f"/usr/share/man/{lang}/man*/*.gz"))
        rnd.shuffle(files)
        n, wrong = 0, {}
        for path in files[:per_language]:
            shown = subprocess.run(["man", "-l", path], capture_output=True, text=True, env={**os.environ, "MANWIDTH": "80"})
            text = re.sub(".\b", "", shown.stdout)  # no overstrike (what col -b does)
            if len(_NON_ASCII.findall(text)) < 20 or _MOJIBAKE.search(text):
                continue
            for size in (800, 3000, 10000):
                if len(text) < size:
                    continue
                a = rnd.randrange(len(text) - size + 1)
                data = text[a : a + size].encode(codecs[n % 2], errors="replace")
                got, label = read(data)
                if got != normalise(data.decode(codecs[n % 2])):
                    wrong[label] = wrong.get(label, 0) + 1
                n += 1
        if n:
            rows.append([f"manual pages, {lang}", n, n - sum(wrong.values()), ", ".join(f"{k} {v}" for k, v in wrong.items()) or "—"])
    return rows


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    rows = french() + tutors() + man_pages()
    print(table(["texts", "files", "read right", "read wrongly (as)"], rows))


if __name__ == "__main__":
    main()
