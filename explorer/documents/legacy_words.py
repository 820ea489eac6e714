"""Which legacy Latin code page a text was saved in, told by the words and letters each reading spells.

Why: charset-normalizer scores readings by how chaotic they look, and the Latin code pages differ
in a few letters only, so its choice between them is often a hair's breadth. A Polish ISO-8859-2
file came out as ISO-8859-10 ("poniŋszych poleceņ"), Czech ISO-8859-2 as cp1250 ("ľe" for
"že"), Hungarian as cp1252 ("elsõ"). Two checks settle it, neither tied to one language:

- words: the right reading spells common words that hold the letters in question ("się",
  "že", "első", "și", "için"); a reading that spells :data:`MIN_LEAD` more of them (and at
  least :data:`MIN_WORDS`) wins;
- letters: the right reading keeps to one language's alphabet; a Hungarian text read as cp1252
  mixes its ö and ü with a Portuguese õ and a French û. Where the detector's reading does not
  and a candidate's does, the candidate wins.

Only a Latin code page is second-guessed, and only by another (a Cyrillic or CJK reading is
left alone). Measured by ``bench/bench_encodings.py``.
"""

from __future__ import annotations

import re


def _spaced(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: The code pages a text may be read in instead of charset-normalizer's choice (in this order of
#: preference when several read alike). cp850 is DOS's Western code page: a French text saved by
#: a DOS editor read as cp1252 spells "systŠme".
CANDIDATES = ("cp1252", "cp1250", "iso8859_2", "iso8859_16", "cp1254", "iso8859_9", "iso8859_3", "cp850")
#: The Latin-script single-byte code pages whose choice is checked.
LATIN_CODE_PAGES = _spaced(
    "cp1252 cp1250 cp1254 cp1257 cp1258 latin_1 iso8859_1 iso8859_2 iso8859_3 iso8859_4 iso8859_9 "
    "iso8859_10 iso8859_13 iso8859_14 iso8859_15 iso8859_16 mac_latin2 mac_roman mac_iceland "
    "mac_turkish cp437 cp850 cp852 cp775 cp858 hp_roman8"
)
#: Words a reading must spell, and how many more than the detector's reading, to be taken.
MIN_WORDS, MIN_LEAD = 3, 2
#: Letters outside ASCII a text needs before its alphabet is asked.
MIN_LETTERS = 3
#: Bytes read for the evidence (each candidate's reading is scanned in Python).
EVIDENCE_BYTES = 64 * 1024

#: Common words holding letters outside ASCII, lower-case, a line per language (Romanian in both
#: its comma and cedilla forms: ISO-8859-16 has ș and ț, cp1250 ş and ţ).
ACCENTED_WORDS = _spaced(
    # Polish, Czech, Slovak
    "się że być może już także również będzie są był była było jeśli która które który których można "
    "należy więcej wszystkie każdy każdego według został została dostępne używany plików pliku ścieżka "
    "wartość wartości domyślnie żadnych też "
    "může již také které který která jsou bude není při až když něco však přes před mezi ještě všechny "
    "souboru příkaz příkazu uživatel uživatele možnost výchozí několik použít použije řádek číslo další "
    "môže ktorý ktorá ktoré sú už súbor súboru používateľa možnosť predvolene "
    # Hungarian
    "és már még ő ők több között után előtt által első új fájl fájlt fájlok beállítás lehetőség érték "
    "alapértelmezett használja felhasználó könyvtár így nélkül következő megfelelő különböző egyszerű "
    "idő belső külső művelet "
    # Romanian
    "și şi în să că pentru această acest aceste fișier fişier fișierul fişierul fișiere fişiere opțiune "
    "opţiune opțiuni opţiuni dacă când după până către fără între comandă funcție funcţie listă "
    # Slovenian, Croatian
    "če še tudi lahko datoteka datoteke privzeto će što među kroz nešto također već datoteku "
    # Turkish
    "için değil çok gibi önce şu dosyası dosyayı seçenek seçenekler kullanıcı değer öntanımlı "
    "varsayılan göre üzerinde içinde eğer işlem gösterir "
    # Esperanto
    "ĉi ĉu ĝi ŝi ankaŭ ĉar ĉiu ĉiuj aŭ ĉe ŝanĝi "
    # French, German, Spanish, Portuguese, Italian, Swedish, Danish
    "été être où déjà très après première système répertoire paramètre défaut utilisé même là ça "
    "élément données für über können müssen während größe größer zurück möglich ähnlich ändern "
    "schließlich außerdem weiß groß heißt schlüssel también está más así qué según opción información "
    "configuración después además código número él sólo aquí não são até após opção informação "
    "configuração padrão usuário você então è più già perché così può verrà sarà är för på även både "
    "när då också därför många användare följande värde også være når følgende bruger værdi første"
)
#: The letters outside ASCII of each language's alphabet (French, German, Spanish, Portuguese,
#: Italian, Dutch, Swedish, Danish, Icelandic, Polish, Czech, Slovak, Hungarian, Romanian,
#: Slovenian and Croatian, Turkish, Estonian, Latvian, Lithuanian, Esperanto).
ALPHABETS = tuple(
    frozenset(letters)
    for letters in (
        "àâæçéèêëîïôœùûüÿ", "äöüß", "áéíñóúü", "áâãàçéêíóôõú", "àèéìíîòóùú", "éëïöüèáó", "åäöé", "æøåé",
        "áðéíóúýþæö", "ąćęłńóśźż", "áčďéěíňóřšťúůýž", "áäčďéíĺľňóôŕšťúýž", "áéíóöőúüű", "ăâîșțşţ",
        "čćđšž", "çğıöşüâîû", "äöõüšž", "āčēģīķļņšūž", "ąčęėįšųūž", "ĉĝĥĵŝŭ",
    )
)
_WORD = re.compile(r"[^\W\d_]+")
#: Signs Python calls letters that belong to no alphabet: micro, the ordinal indicators (1º, 2ª).
_NOT_LETTERS = frozenset("µºª")


def words_spelled(text: str) -> int:
    """How many of ``text``'s words are among :data:`ACCENTED_WORDS`."""
    return sum(1 for w in _WORD.findall(text.lower()) if w in ACCENTED_WORDS)


def alphabet_share(text: str) -> tuple[float, int]:
    """(the largest share of ``text``'s letters outside ASCII that one language's alphabet holds,
    how many such letters there are)."""
    high = [c for c in text.lower() if c > "\x7f" and c.isalpha() and c not in _NOT_LETTERS]
    if not high:
        return 1.0, 0
    return max(sum(1 for c in high if c in a) for a in ALPHABETS) / len(high), len(high)


def better_reading(data: bytes, chosen: str) -> str:
    """``chosen``, or the code page of :data:`CANDIDATES` whose reading of ``data`` spells the
    most words, by :data:`MIN_LEAD` (see the module docstring); failing that, the first whose
    reading keeps to one alphabet where ``chosen``'s does not."""
    if chosen.lower().replace("-", "_") not in LATIN_CODE_PAGES:
        return chosen
    data = data[:EVIDENCE_BYTES]
    reading = data.decode(chosen, "replace")
    best, most = chosen, words_spelled(reading)
    floor, spelled = max(MIN_WORDS, most + MIN_LEAD), most
    share, letters = alphabet_share(reading)
    coherent = None
    for codec in CANDIDATES:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        n = words_spelled(text)
        if n >= floor and n > most:
            best, most = codec, n
        if coherent is None and n >= spelled and letters >= MIN_LETTERS and share < 1.0:
            coherent = codec if alphabet_share(text)[0] == 1.0 else None  # not over more words spelled
    return best if best != chosen or coherent is None else coherent
