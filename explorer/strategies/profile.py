"""A document's profile: size, structure, script and language, and what ``hybrid`` would do.

It sits beside the strategies because it reports hybrid's routing: the summary the user reads
and the routing decision come from the same measurements (:mod:`explorer.text.measures`), so
they cannot disagree. Counts of characters, words, tokens and blocks are exact; script and
language are measured on a sample of a large document.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.documents.document import Document
from explorer.documents.markdown_blocks import count_list_items
from explorer.strategies.hybrid import Route, describe_routes, route
from explorer.text.markdown_parse import structure_readable
from explorer.text.measures import dominant_script, guess_language, line_stats, word_pieces
from explorer.text.sentences import paragraph_spans


@dataclass(frozen=True)
class DocProfile:
    """What the document summary shows. ``routes`` is hybrid's plan, per section."""

    name: str
    kind: str
    chars: int
    words: int
    tokens: int  # word pieces of the embedding model, without [CLS]/[SEP]
    pages: int
    n_headings: int
    max_heading_depth: int
    n_code_blocks: int
    n_tables: int
    n_list_items: int
    #: Whether code blocks, tables and list items were read: only Markdown's are (up to
    #: ``limits.MAX_MARKDOWN_CHARS``). Otherwise their counts are 0 because none was looked for, and
    #: the strategies see none either: no protected blocks.
    structure_read: bool
    #: Whether headings were read: a Markdown file's (as above), or a PDF's, from its fonts
    #: (:mod:`explorer.documents.pdf_headings`). Otherwise none was looked for: no heading paths.
    headings_read: bool
    n_paragraphs: int
    mean_line_length: float  # non-empty lines, in characters
    short_line_share: float  # non-empty lines shorter than SHORT_LINE characters
    script: str
    script_share: float  # share of the letters in the dominant script
    language: str
    encoding: str
    hybrid_choice: str
    hybrid_reason: str
    routes: tuple[Route, ...] = ()


def profile(doc: Document, model: str | None = None) -> DocProfile:
    """Measure ``doc`` (see :mod:`explorer.text.measures`); ``model`` counts the tokens."""
    text = doc.text
    script, share = dominant_script(text)
    headings = doc.headings
    structure = doc.kind == "markdown" and structure_readable(text)  # as the loader reads it
    n_items = count_list_items(text) if structure else 0
    mean_line, short_share = line_stats(text)
    routes = tuple(route(doc))
    choice, reason = describe_routes(routes)
    return DocProfile(
        name=doc.name,
        kind=doc.kind,
        chars=len(text),
        words=len(text.split()),
        tokens=word_pieces(text, model),
        pages=doc.n_pages,
        n_headings=len(headings),
        max_heading_depth=max((h.level for h in headings), default=0),
        n_code_blocks=len(doc.blocks_of("code")),
        n_tables=len(doc.blocks_of("table")),
        n_list_items=n_items,
        structure_read=structure,
        headings_read=structure or doc.kind == "pdf",
        n_paragraphs=len(paragraph_spans(text)),
        mean_line_length=round(mean_line, 1),
        short_line_share=round(short_share, 3),
        script=script,
        script_share=round(share, 3),
        language=guess_language(text, script),
        encoding=doc.encoding,
        hybrid_choice=choice,
        hybrid_reason=reason,
        routes=routes,
    )
