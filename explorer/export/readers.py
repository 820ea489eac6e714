"""How each peer library's snippet loads the documents: its own loader for each kind of file.

LangChain reads a PDF with ``PyPDFLoader`` and Markdown or text as it is (what its
``TextLoader`` does, without the ``langchain-community`` package: the splitters take the text and
its Markdown syntax); LlamaIndex reads a PDF with ``SimpleDirectoryReader`` (its
``PDFReader``) and Markdown or text as it is (its Markdown reader would cut it at headings and
drop the syntax; for text it kept ``\\r\\n`` and added the file's path as metadata, which its
splitters take off ``chunk_size``: 80-character windows held 40 at a 24-character path));
Chonkie chunks text, so its snippet reads the text itself (``pypdf`` for a PDF). The lines leave ``text`` (LangChain, Chonkie) or
``documents`` (LlamaIndex) for the splitter.

Why a module of its own: it is the only part of the peer code that depends on the documents
rather than on a strategy; file names are written as Python literals (``repr``), never spliced.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping, Sequence
from pathlib import PurePath

#: Per peer and kind of document: the lines that load the file ``{name}`` (a Python literal).
READERS: dict[str, dict[str, list[str]]] = {
    "langchain": {
        "pdf": [
            "from langchain_community.document_loaders import PyPDFLoader",
            "",
            "pages = PyPDFLoader({name}).load()  # one Document per page (pip install pypdf)",
            'text = "\\n\\n".join(page.page_content.strip() for page in pages)  # pages as explorer joins them',
        ],
        "markdown": [
            "# read as it is (as TextLoader does): the splitters read the Markdown syntax",
            'text = open({name}, encoding="utf-8-sig").read()',
        ],
        "text": ['text = open({name}, encoding="utf-8-sig").read()'],
    },
    "llamaindex": {
        "pdf": [
            "from llama_index.core import SimpleDirectoryReader",
            "",
            "# PDFReader (llama-index-readers-file): one Document per page, joined so chunks may cross pages",
            "pages = SimpleDirectoryReader(input_files=[{name}]).load_data()",
            'documents = [Document(text="\\n\\n".join(page.text.strip() for page in pages))]',
        ],
        "markdown": [
            "from pathlib import Path",
            "",
            "# read as it is: SimpleDirectoryReader's Markdown reader would cut it at headings",
            'documents = [Document(text=Path({name}).read_text(encoding="utf-8-sig"))]',
        ],
        "text": [
            "from pathlib import Path",
            "",
            "# read as it is: SimpleDirectoryReader would keep \\r\\n line ends (explorer reads \\n) and add",
            "# the file's path as metadata, which LlamaIndex's splitters take off each chunk_size",
            'documents = [Document(text=Path({name}).read_text(encoding="utf-8-sig"))]',
        ],
    },
    "chonkie": {
        "pdf": [
            "from pypdf import PdfReader",
            "",
            "# Chonkie chunks text: read the PDF's text first",
            'text = "\\n\\n".join((page.extract_text() or "").strip() for page in PdfReader({name}).pages)',
        ],
        "markdown": ['text = open({name}, encoding="utf-8-sig").read()'],
        "text": ['text = open({name}, encoding="utf-8-sig").read()'],
    },
}


def kind_of(name: str) -> str:
    """``pdf``, ``markdown`` or ``text``, from the file name's extension (as the loaders decide)."""
    ext = PurePath(name).suffix.lower()
    return "pdf" if ext == ".pdf" else "markdown" if ext in (".md", ".markdown") else "text"


def sample_note(name: str) -> list[str]:
    """Comment lines saying how to get a bundled sample's file next to the code."""
    write = f"open({name!r}, 'wb').write(sample_bytes({name!r})[1])"
    return [
        f"# {name} is a sample bundled with Chunk Explorer; write it here with its venv's python:",
        f'#   python -c "from explorer.documents.samples import sample_bytes; {write}"',
    ]


#: Said above a peer's reading of a PDF: its text is the PDF library's, not explorer's, and it
#: reads no headings from the fonts (explorer's markdown and hybrid cut at them).
PDF_NOTE = (
    "# this PDF library's text can differ from explorer's (which expands ligatures and drops "
    "control characters), and so can the chunks; explorer also reads the PDF's headings from its "
    "fonts (markdown and hybrid cut at them, chunks carry their path), which this does not"
)


def read_lines(
    peer: str,
    files: Sequence[str],
    samples: Sequence[str] = (),
    cleanup: Sequence[str] = (),
    encodings: Mapping[str, str] | None = None,
    changed: Mapping[str, int] | None = None,
) -> str:
    """The lines that load the first document for ``peer`` (files the user has, then samples);
    the others are named in a comment, to load the same way. What may make the peer's text
    differ from explorer's (a PDF's extraction, ``cleanup`` steps it does not do, control
    characters explorer removed or ``changed``) is said first.
    ``encodings``: each text file's encoding as explorer read it (``Document.encoding``), so a
    Latin-1 or UTF-16 file is read as it was, not refused by a UTF-8 decoder."""
    names = [*files, *samples] or ["FILE"]
    first = names[0]
    lines = sample_note(first) if first in samples and first not in files else []
    if cleanup:
        lines.append(f"# explorer cleaned the text up first ({', '.join(cleanup)}): not done here, so the chunks can differ")
    removed = {n: int(c) for n, c in (changed or {}).items() if n in names and c > 0}
    if removed:
        listed = ", ".join(f"{c:,} from {n!r}" for n, c in removed.items())
        lines.append(
            f"# explorer removed control characters (NUL, ESC...) or made them line ends (form feed, NEL) "
            f"before chunking ({listed}): read here, they stay, so the chunks can differ"
        )
    if kind_of(first) == "pdf":
        lines.append(PDF_NOTE)
    codec = python_codec((encodings or {}).get(first, ""))
    if codec != DEFAULT_CODEC and kind_of(first) != "pdf":
        lines.append(f"# explorer read this file as {codec} (not UTF-8), and so does this")
    lines += [
        line.format(name=repr(first)).replace(f'encoding="{DEFAULT_CODEC}"', f'encoding="{codec}"')
        for line in READERS[peer][kind_of(first)]
    ]
    return "\n".join(lines + _others(peer, names[1:], first, samples, encodings or {}))


#: The codec the readers name: UTF-8, a byte-order mark skipped.
DEFAULT_CODEC = "utf-8-sig"


def python_codec(encoding: str) -> str:
    """The codec Python reads a file with, from explorer's name of its encoding ("utf-8",
    "utf-16-le (BOM)", "cp1252"): a file with a byte-order mark is read with the codec that
    skips it."""
    name, bom = encoding.removesuffix(" (BOM)"), encoding.endswith(" (BOM)")
    if not name or name.replace("_", "-").lower() in ("utf-8", "ascii", "utf-8-sig"):
        return DEFAULT_CODEC
    if bom and name.lower().startswith(("utf-16", "utf-32")):
        return name[:6].lower()  # "utf-16": reads the mark and its byte order
    try:
        codecs.lookup(name)
    except LookupError:  # "utf-8 + cp1252", a file mixing two: no one codec reads it
        return DEFAULT_CODEC
    return name


#: How a comment names the documents of a kind.
KIND_WORDS = {"pdf": "PDFs", "markdown": "Markdown files", "text": "text files"}


def _others(
    peer: str, others: Sequence[str], first: str, samples: Sequence[str], encodings: Mapping[str, str]
) -> list[str]:
    """Comment lines for the documents after the first: those of its kind load the same way;
    those of another kind get that kind's reading (commented out: ``open()`` reads no PDF);
    a text file read in another encoding than the reading shown is named with its own;
    bundled samples among them say how to get their files."""
    lines: list[str] = []
    by_kind: dict[str, list[str]] = {}
    for name in others:
        by_kind.setdefault(kind_of(name), []).append(name)
    for kind, names in by_kind.items():
        listed = ", ".join(map(repr, names))
        if _code(READERS[peer][kind]) == _code(READERS[peer][kind_of(first)]):
            lines.append(f"# the {KIND_WORDS[kind]}, to load the same way: {listed}")
            lines += _own_encodings(names, python_codec(encodings.get(first, "")), encodings)
            continue
        codec = python_codec(encodings.get(names[0], ""))
        lines.append(f"# the {KIND_WORDS[kind]}, read this way (shown for the first): {listed}")
        lines += [
            f"#   {line.format(name=repr(names[0]))}".replace(f'encoding="{DEFAULT_CODEC}"', f'encoding="{codec}"')
            for line in READERS[peer][kind]
            if line
        ]
        lines += _own_encodings(names[1:], codec, encodings)
    bundled = [n for n in others if n in samples]
    if bundled and first not in samples:
        lines += sample_note(bundled[0])
        bundled = bundled[1:]
    if bundled:
        lines.append(f"# bundled samples too, written the same way: {', '.join(map(repr, bundled))}")
    return lines


def _own_encodings(names: Sequence[str], shown: str, encodings: Mapping[str, str]) -> list[str]:
    """A comment naming the text files among ``names`` that explorer read in another encoding
    than ``shown`` (the codec of the reading they are told to copy): each with its own."""
    own = {n: python_codec(encodings.get(n, "")) for n in names if kind_of(n) != "pdf"}
    odd = [f"{n!r} as {codec}" for n, codec in own.items() if codec != shown]
    return [f"#   but each in the encoding explorer read it in: {', '.join(odd)}"] if odd else []


def _code(lines: Sequence[str]) -> list[str]:
    """A reading's lines without its comments: two kinds read alike when these are equal."""
    return [line for line in lines if line and not line.startswith("#")]
