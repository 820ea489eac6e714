"""Bytes to text: the encoding found (BOM, UTF-8, UTF-16/32 without BOM, charset-normalizer),
binary data refused, and the normalisation every offset counts on.

Why a module of its own: decoding is the part of loading that guesses, so its rules (and the
warnings that say when a guess was made) read in one place, apart from the file kinds.

Text normalisation (the text every offset indexes):

- line ends ``\\r\\n`` and lone ``\\r`` become ``\\n``; form feed, vertical tab and NEL
  (U+0085) become ``\\n`` too (they are line or page breaks);
- other C0 control characters (NUL, ESC...), DEL and the C1 controls U+0080–U+009F are
  dropped: they break HTML rendering and tokenizers and carry no text;
- everything else (CJK, right-to-left text, emoji, combining characters, U+2028...) is
  kept exactly as decoded: no Unicode normalisation, no whitespace folding.
"""

from __future__ import annotations

import codecs
import re

from explorer.documents.legacy_words import better_reading
from explorer.errors import LoadError
from explorer.text.measures import CJK_RANGES
from explorer.text.wording import plural

#: Share of control characters (after decoding) above which a "text" file is called binary.
BINARY_CONTROL_SHARE = 0.10
#: Share of NUL bytes above which undecodable data is binary (UTF-16/32 text is caught first).
BINARY_NUL_SHARE = 0.05
#: Bytes charset-normalizer looks at (it takes ~0.5 s per MB); the whole file is then decoded.
DETECT_BYTES = 512 * 1024
#: Lines with non-ASCII characters that must each read as UTF-8 whole (and be at least a sixth
#: of such lines) for a file's other bytes to be read as cp1252: a file mixing the two (two files
#: joined). Counted by line, not by character: Big5, GB2312, EUC and Shift-JIS text holds many
#: byte pairs that are valid UTF-8 by chance, but hardly a whole line of them.
MIXED_MIN_UTF8_LINES = 3
#: Control share allowed in a reading charset-normalizer itself found too chaotic (see
#: :func:`_decode_detected`): real text has almost none, bytes that are not text about 10 %.
WEAK_GUESS_CONTROL_SHARE = 0.01

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_LINE_BREAKS = re.compile("[\f\v\x85]")  # (str.translate is ~30x slower on non-ASCII text)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BINARY_CHARS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\ufffd]")  # ESC (\x1b) is common in logs
_NON_ASCII = re.compile("[^\x00-\x7f]")
_FIRST_HIGH = re.compile(b"[\x80-\xff]")

Decoded = tuple[str, str, list[str]]


def normalise(text: str) -> str:
    """Line ends to ``\\n``; drop control characters (see the module docstring)."""
    return normalise_counting(text)[0]


def normalise_counting(text: str) -> tuple[str, int, int]:
    """:func:`normalise`, how many control characters it dropped, and how many form feeds,
    vertical tabs and NELs it made line ends (a reader that opens the file keeps both)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    breaks = 0
    if _LINE_BREAKS.search(text):
        text, breaks = _LINE_BREAKS.subn("\n", text)
    text, dropped = _CONTROLS.subn("", text)
    return text, dropped, breaks


def split_bom(data: bytes) -> tuple[str, bytes] | None:
    """(codec, the bytes after the mark) when ``data`` opens with a UTF-8/16/32 byte-order mark."""
    return next(((codec, data[len(bom) :]) for bom, codec in _BOMS if data.startswith(bom)), None)


def decode_text(data: bytes, name: str) -> Decoded:
    """Decode text bytes: BOM → UTF-8 → UTF-16/32 without BOM → charset-normalizer.

    Returns ``(text, encoding label, warnings)``. Binary data raises :class:`LoadError`.
    """
    marked = split_bom(data)
    if marked is not None:
        return _decode_bom(marked[1], marked[0], name)

    nul_share = data.count(0) / len(data)
    if nul_share > BINARY_NUL_SHARE:
        # UTF-16/32 without BOM has NULs in most code units; anything else with so many is binary
        best = _charset_normalizer_best(data)
        if best is None or not best.replace("_", "-").startswith(("utf-16", "utf-32")):
            raise LoadError(
                f"{name!r} is a binary file, not text ({nul_share:.0%} of its bytes are NUL): "
                "upload a PDF, Markdown or text file"
            )
        codec = best.replace("_", "-")
        return _check_binary(data.decode(codec, "replace"), name), codec, []

    seven_bit = _iso_2022(data, name)
    if seven_bit is not None:
        return seven_bit
    try:
        return _check_binary(data.decode("utf-8"), name), "utf-8", []
    except UnicodeDecodeError:
        pass

    # Mostly valid UTF-8 with a few bad bytes (a damaged or concatenated file): keep UTF-8
    # and mark the bad bytes with U+FFFD, rather than reading every accent wrongly.
    head = data[:DETECT_BYTES].decode("utf-8", "replace")
    bad = head.count("\ufffd")
    good = len(_NON_ASCII.findall(head)) - bad
    if good >= 1 and bad * 10 <= good:
        replaced = data.decode("utf-8", "replace")
        return _check_binary(replaced, name), "utf-8", [_replaced_warning(replaced, "utf-8")]
    if _mixed(data[:DETECT_BYTES]):  # UTF-8 and another encoding in one file: neither reads it all
        return _decode_mixed(data, name)
    return _decode_detected(data, name)


#: Escape sequences that switch a 7-bit ISO-2022 text into a CJK set (JIS X 0208 "ESC $ B" and
#: "ESC $ @", JIS X 0212, GB 2312, KS C 5601), each with the codec that reads it.
_ISO_2022 = ((b"\x1b$)C", "iso2022_kr"), (b"\x1b$", "iso2022_jp_2"))


def _iso_2022(data: bytes, name: str) -> Decoded | None:
    """A 7-bit ISO-2022 text (Japanese mail and older Japanese files: ISO-2022-JP), or None.

    Why before UTF-8: its bytes are all ASCII, so UTF-8 reads it without an error, as escape
    codes and Latin letters ("\x1b$B%U%!%$%k")."""
    if b"\x1b$" not in data[:DETECT_BYTES] or _FIRST_HIGH.search(data):
        return None
    for mark, codec in _ISO_2022:
        if mark in data[:DETECT_BYTES]:
            try:
                text = data.decode(codec)
            except UnicodeDecodeError:
                return None
            label = "iso-2022-kr" if codec == "iso2022_kr" else "iso-2022-jp"
            warning = f"{name!r} is not UTF-8: decoded as {label} (its escape sequences say so)"
            return _check_binary(text, name), label, [warning]
    return None


def _mixed(head: bytes) -> bool:
    """Whether whole lines of ``head`` read as UTF-8 (with non-ASCII letters) and others do not."""
    utf8 = other = 0
    for line in head.split(b"\n"):
        if not _FIRST_HIGH.search(line):
            continue
        try:
            line.decode("utf-8")
            utf8 += 1
        except UnicodeDecodeError:
            other += 1
    return utf8 >= MIXED_MIN_UTF8_LINES and 5 * utf8 >= other


def _cp1252_runs(err: UnicodeError) -> tuple[str, int]:
    """A codec error handler: bytes that are not UTF-8, read as cp1252 (latin-1 for the five
    bytes cp1252 leaves undefined)."""
    assert isinstance(err, UnicodeDecodeError)
    bad = err.object[err.start : err.end]
    return "".join(bytes([b]).decode("cp1252", "strict") if b not in _CP1252_UNDEFINED else chr(b) for b in bad), err.end


_CP1252_UNDEFINED = frozenset(b"\x81\x8d\x8f\x90\x9d")
codecs.register_error("explorer.cp1252", _cp1252_runs)


def _decode_mixed(data: bytes, name: str) -> Decoded:
    """A file with many valid UTF-8 characters and many bytes that are not: the UTF-8 is read as
    UTF-8 and each other byte as cp1252, so neither part turns to mojibake (read as one codec,
    a file of ten UTF-8 lines and ten Latin-1 lines came out as cp1250 throughout)."""
    text = data.decode("utf-8", "explorer.cp1252")
    n = data.decode("utf-8", "replace").count("\ufffd")
    return _check_binary(text, name), "utf-8 + cp1252", [
        f"{name!r} mixes UTF-8 with another encoding: {plural(n, 'byte sequence')} that {'is' if n == 1 else 'are'} not "
        "UTF-8 were read as cp1252; if accented letters look wrong there, save the file as UTF-8 and load it again"
    ]


def _decode_bom(body: bytes, codec: str, name: str) -> Decoded:
    warnings: list[str] = []
    try:
        text = body.decode(codec)
    except UnicodeDecodeError:
        text = body.decode(codec, "replace")
        warnings.append(_replaced_warning(text, codec))
    return _check_binary(text, name), f"{codec} (BOM)", warnings


def _decode_detected(data: bytes, name: str) -> Decoded:
    """Decode with the codec charset-normalizer finds on a sample, saying so in a warning."""
    warnings: list[str] = []
    not_text = LoadError(
        f"{name!r} is not text in any encoding that fits its bytes (a binary file?): "
        "upload a PDF, Markdown or text file"
    )
    sample = _detection_sample(data)
    codec = _charset_normalizer_best(sample)
    weak = codec is None
    if weak:
        # every reading looked too chaotic to charset-normalizer: its mess detector also counts
        # runs of symbols ("~~~~", "====" rules in a Latin-1 French tutorial: chaos 0.33 against
        # its 0.2 threshold). Take its least chaotic reading, if that reads as text.
        codec = _charset_normalizer_best(sample, threshold=1.0)
        if codec is None:
            raise not_text
    found, codec = codec, better_reading(sample, codec)  # between Latin code pages, words decide
    how = "detected by charset-normalizer" if codec == found else "chosen by the words its reading spells"
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        if codec == "cp1252":  # cp1252 leaves 5 bytes undefined; latin-1 decodes anything
            codec = "latin-1"
            text = data.decode(codec)
        else:  # detected on the first DETECT_BYTES; a later byte does not fit
            text = data.decode(codec, "replace")
            warnings.append(_replaced_warning(text, codec))
    if weak and _binary_share(text) > WEAK_GUESS_CONTROL_SHARE:
        raise not_text
    label = codec.replace("_", "-")
    if not label.startswith(("utf-16", "utf-32")):
        warnings.append(
            f"{name!r} is not UTF-8: decoded as {label} ({how}); "
            "if accented letters look wrong, save it as UTF-8 and load it again"
        )
    return _check_binary(text, name), label, warnings


def _charset_normalizer_best(data: bytes, threshold: float = 0.2) -> str | None:
    """Codec name from charset-normalizer (readings up to ``threshold`` chaos, its default 0.2),
    minus readings that cannot be right, preferring cp1252 among clean readings.

    - A multi-byte CJK reading whose CJK characters sit mostly alone inside Latin words is Latin
      text with a few accents paired with the next letter (a Dutch Latin-1 file read as Big5).
    - charset-normalizer often ranks cp1250, cp1257, cp775 or mac-latin2 first for Western
      European text with few accents (it decodes them differently, and its chaos scores differ
      by a hair), which turns French "û", "ï" or "è" into "ű", "ď", "č". When a cp1252 reading is
      within :data:`CP1252_MARGIN` of the least chaotic and reads as Western European text
      (:func:`_reads_western`), it is the one we take: the most common legacy encoding by far.
    """
    from charset_normalizer import from_bytes

    results = [r for r in from_bytes(data, threshold=threshold) if not _cjk_inside_latin_words(str(r))]
    if not results:
        return None
    least = min(r.chaos for r in results)
    for r in results:
        clean = r.chaos <= least + CP1252_MARGIN and "cp1252" in (r.could_be_from_charset or [r.encoding])
        if clean and (r is results[0] or _reads_western(data, "cp1252")):
            return "cp1252"
    return results[0].encoding


#: How much more chaotic than the best reading a cp1252 reading may be and still be taken.
CP1252_MARGIN = 0.05
#: Non-ASCII letters of Western European languages (and the cp1252 punctuation their texts use).
_WESTERN = frozenset(
    "àáâãäåæçèéêëìíîïñòóôõöøùúûüýÿœßÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝŸŒ"
    "\u00a0’‘“”«»„‚‹›€£–—…°•·§©®™×¡¿²ªº"
)
_LETTERS = re.compile(r"[^\W\d_]")
_CJK = re.compile(f"[{CJK_RANGES}]")


def _reads_western(data: bytes, codec: str) -> bool:
    """``data`` read as ``codec`` is Western European text: every non-ASCII character is one of
    :data:`_WESTERN`, and at most 30 % of the letters are non-ASCII (Cyrillic or Greek bytes
    read as Latin-1 are almost all accented letters; French has about 3 %)."""
    text = data.decode(codec, "replace")
    high = _NON_ASCII.findall(text)
    if not high or any(ch not in _WESTERN for ch in set(high)):
        return False
    letters = len(_LETTERS.findall(text))
    return len([ch for ch in high if ch.isalpha()]) <= 0.3 * letters


def _cjk_inside_latin_words(text: str) -> bool:
    """Most CJK characters of ``text`` stand alone (no CJK neighbour) against an ASCII letter
    ("m鋈 v", "(澭n"): accented Latin letters paired into CJK characters, as in a Dutch Latin-1
    "één" read as Big5. Real CJK text has its characters in runs."""
    found = [m.start() for m in _CJK.finditer(text)]
    if not found:
        return False
    hits = set(found)

    def latin(i: int) -> bool:
        return 0 <= i < len(text) and text[i].isascii() and text[i].isalpha()

    alone = sum(
        i - 1 not in hits and i + 1 not in hits and (latin(i - 1) or latin(i + 1)) for i in found
    )
    return alone * 2 > len(found)


def _detection_sample(data: bytes) -> bytes:
    """Up to DETECT_BYTES from just before the first non-ASCII byte (an ASCII head would tell
    charset-normalizer nothing); the start stays even so UTF-16 code units stay aligned."""
    m = _FIRST_HIGH.search(data)
    start = 0 if m is None else max(0, m.start() - 1024) & ~1
    return data[start : start + DETECT_BYTES]


def _replaced_warning(text: str, codec: str) -> str:
    n = text.count("\ufffd")
    return f"{plural(n, f'invalid {codec} byte sequence')} replaced by \ufffd"


def _binary_share(text: str) -> float:
    """Share of control or undecodable characters in the first 200,000 (0 for no text)."""
    sample = text[:200_000]
    return len(_BINARY_CHARS.findall(sample)) / len(sample) if sample else 0.0


def _check_binary(text: str, name: str) -> str:
    share = _binary_share(text)
    if share > BINARY_CONTROL_SHARE:
        raise LoadError(
            f"{name!r} looks like binary data, not text ({share:.0%} control or undecodable "
            "characters): upload a PDF, Markdown or text file"
        )
    return text
