"""Optional, visible clean-up of extracted text (every step off by default).

Clean-up runs on each page's text *before* the pages are joined, so the page map built
afterwards indexes the cleaned text exactly: offsets always point into the text the user
sees. Each step that is switched on reports what it changed in ``Document.cleanup``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: A run of 3+ line breaks, blank lines allowed to hold spaces or tabs.
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")
#: A word broken by a hyphen (ASCII, soft hyphen U+00AD or U+2010) at a line end.
_HYPHEN_BREAK = re.compile(r"(\w)[-\u00ad\u2010][ \t]*\n[ \t]*(?=(\w))")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
#: What follows a title's number, not a page counter's: "Chapter 3: Operating", "1. Scope", "2.3 Terms".
_TITLE_TAIL = re.compile(r"(?:[.:]|(?:\.\d+)+\.?)[ \t]+[^\W\d_]")

#: A header/footer must repeat on at least this share of the pages, and on 3 pages or more.
HEADER_MIN_SHARE = 0.6
HEADER_MIN_PAGES = 3
#: Longest line the second pass may remove (page numbers, "Page 3 of 9", a date).
SECOND_LINE_MAX = 40


@dataclass(frozen=True, slots=True)
class Cleanup:
    """Which clean-up steps to apply. All off: the text is shown as extracted."""

    collapse_blank_lines: bool = False
    join_hyphenated: bool = False
    drop_headers_footers: bool = False

    @property
    def any(self) -> bool:
        return self.collapse_blank_lines or self.join_hyphenated or self.drop_headers_footers


def clean_pages(
    pages: Sequence[str], cleanup: Cleanup, *, is_pdf: bool, keep_title: bool = True
) -> tuple[list[str], list[str]]:
    """Apply the switched-on steps to each page's text (``keep_title``: see
    :func:`drop_headers_footers`).

    Returns the cleaned page texts and one line per step that was switched on, saying what it
    did (``"join_hyphenated: joined 4 words"``), in the order applied: headers/footers first
    (they need the page's own first and last lines), then hyphenation, then blank lines.
    """
    out = list(pages)
    report: list[str] = []
    if cleanup.drop_headers_footers:
        if is_pdf:
            out, n = drop_headers_footers(out, keep_title=keep_title)
            report.append(f"drop_headers_footers: removed {n} repeated header/footer line{_s(n)}")
        else:
            report.append("drop_headers_footers: skipped (only PDFs have pages)")
    if cleanup.join_hyphenated:
        total = _each_page(out, join_hyphenated)
        report.append(f"join_hyphenated: joined {total} word{_s(total)} broken at a line end")
    if cleanup.collapse_blank_lines:
        total = _each_page(out, collapse_blank_lines)
        report.append(f"collapse_blank_lines: collapsed {total} run{_s(total)} of blank lines")
    return out, report


def _each_page(pages: list[str], step: Callable[[str], tuple[str, int]]) -> int:
    """Apply ``step`` to every page in place; how many changes it made in all."""
    total = 0
    for i, page in enumerate(pages):
        pages[i], n = step(page)
        total += n
    return total


def collapse_blank_lines(text: str) -> tuple[str, int]:
    """Runs of 3+ line breaks (blank lines may hold spaces) become one blank line."""
    return _BLANK_RUN.subn("\n\n", text)


def join_hyphenated(text: str) -> tuple[str, int]:
    """``exam-\\nple`` → ``example``, only when both sides are lowercase letters.

    ``Jean-\\nPierre`` or ``2023-\\n24`` are left alone: the hyphen is probably real there.
    A real compound broken at its hyphen (``well-\\nknown``) is joined too: the toggle is off
    by default for that reason.
    """
    count = 0

    def fix(m: re.Match[str]) -> str:
        nonlocal count
        a, b = m.group(1), m.group(2)
        if a.isalpha() and b.isalpha() and a.islower() and b.islower():
            count += 1
            return a
        return m.group(0)

    return _HYPHEN_BREAK.sub(fix, text), count


def _line_key(line: str) -> str:
    """Compare header lines with page numbers and dates normalised: "Page 3 of 9" == "Page 4 of 9"."""
    return _SPACES.sub(" ", _DIGITS.sub("#", line)).strip().lower()


def _running_lines(group: list[tuple[int, str]], need: int) -> set[int]:
    """Pages (of ``group``: page index and edge line, alike but for their numbers) whose line is
    a running header/footer: its text repeats on another page once page counters are set aside.

    "Page 3 of 36", "- 12 -" repeat that way, and "Chapitre 3" on every page of chapter 3 repeats
    as it is; "Chapter 2" opening its chapter, or "Chapter 3: Operating the service" where one
    chapter fills each page, only share the pattern and stay: they are titles. When ``need``
    lines repeat, the pattern is a running header and all of it goes (a one-page chapter's too).
    """
    counters = _page_counters(group)
    refined = []
    for k, (_, line) in enumerate(group):
        parts = []
        last = 0
        for j, m in enumerate(_DIGITS.finditer(line)):
            counts_pages = (k, j) in counters and not _TITLE_TAIL.match(line, m.end())
            parts += [line[last : m.start()], "#" if counts_pages else m.group()]
            last = m.end()
        refined.append(_SPACES.sub(" ", "".join(parts) + line[last:]).strip().lower())
    seen = Counter(refined)
    running = {i for (i, _), key in zip(group, refined, strict=True) if seen[key] >= 2}
    return running if len(running) < need else {i for i, _ in group}


def _page_counters(group: list[tuple[int, str]]) -> set[tuple[int, int]]:
    """(line, number) positions in ``group`` of the numbers that go up with the page number:
    as many apart as their pages are, over ``HEADER_MIN_PAGES`` lines in a row or more."""
    numbers = [[int(d) if len(d) <= 18 else None for d in _DIGITS.findall(line)] for _, line in group]
    out: set[tuple[int, int]] = set()
    for j in range(min(map(len, numbers), default=0)):
        start = 0
        for k in range(1, len(group) + 1):
            a, b = numbers[k - 1][j], numbers[k][j] if k < len(group) else None
            if a is not None and b is not None and b - a == group[k][0] - group[k - 1][0]:
                continue  # in step with the page: the run goes on
            if k - start >= HEADER_MIN_PAGES:
                out.update((r, j) for r in range(start, k))
            start = k
    return out


def drop_headers_footers(pages: Sequence[str], *, keep_title: bool = True) -> tuple[list[str], int]:
    """Remove the first/last non-empty line of each page when that line (digits normalised)
    is the first/last line of at least 60% of the pages with text, and of 3 pages or more,
    and it repeats as it is or with a page counter in it (:func:`_running_lines`): lines alike
    but for their numbers that each appear once ("Chapter 2", "Chapter 3: Operating") are titles.

    At an edge where lines were removed, a second pass removes a short next line (up to
    ``SECOND_LINE_MAX`` characters) that repeats the same way: a title line followed by a
    page-number line. Body lines are longer and differ from page to page, so they stay.
    The first page with text keeps its top line when ``keep_title`` (the caller could not tell
    that line from a title: a title that later pages repeat as their running header was dropped
    with them); else it goes with the others (a PDF whose fonts show it is no heading), unless
    nothing else is left.
    """
    out = list(pages)
    removed = 0
    title = None
    for where in ("first", "last"):
        before = out
        out, n = _drop_edge(out, where, max_len=None)
        removed += n
        if n and where == "first" and keep_title:
            title = _first_top_line(before, out)
        if n:
            out, n = _drop_edge(out, where, max_len=SECOND_LINE_MAX)
            removed += n
    if title is None and not any(p.strip() for p in out):  # nothing but the header: keep it once
        title = _first_top_line(pages, out)
    if title is not None:  # put back: the first page's top line is most often the title itself
        i, line = title
        out[i] = line + "\n" + out[i]
        removed -= 1
    return out, removed


def _first_top_line(before: list[str], after: list[str]) -> tuple[int, str] | None:
    """The first page with text and its top line, when a pass removed that line."""
    i = next((i for i, page in enumerate(before) if page.strip()), None)
    if i is None or before[i] == after[i]:
        return None
    s, e = _edge_line(before[i], "first") or (0, 0)
    return i, before[i][s:e]


def _drop_edge(pages: list[str], where: str, max_len: int | None) -> tuple[list[str], int]:
    edges: list[tuple[int, int] | None] = [_edge_line(p, where) for p in pages]
    keys = [_line_key(pages[i][e[0] : e[1]]) if e else "" for i, e in enumerate(edges)]
    with_text = sum(1 for e in edges if e)
    need = max(HEADER_MIN_PAGES, math.ceil(HEADER_MIN_SHARE * with_text))
    counts = Counter(k for k in keys if k and (max_len is None or len(k) <= max_len))
    repeated = {k for k, c in counts.items() if c >= need}
    if not repeated:
        return pages, 0
    groups: dict[str, list[tuple[int, str]]] = {k: [] for k in repeated}
    for i, (edge, key) in enumerate(zip(edges, keys, strict=True)):
        if edge and key in groups:
            groups[key].append((i, pages[i][edge[0] : edge[1]]))
    drop = set().union(*(_running_lines(g, need) for g in groups.values()))
    out = []
    n = 0
    for i, (page, edge) in enumerate(zip(pages, edges, strict=True)):
        if edge and i in drop:
            s, e = edge
            # remove the line and the line break that separates it from the rest of the page
            if where == "first":
                e = page.find("\n", e)
                e = len(page) if e < 0 else e + 1
            else:
                s = page.rfind("\n", 0, s)
                s = 0 if s < 0 else s
            page = page[:s] + page[e:]
            n += 1
        out.append(page)
    return out, n


def _edge_line(page: str, where: str) -> tuple[int, int] | None:
    """(start, end) of the first or last line with non-space text, or None."""
    if not page.strip():
        return None
    if where == "first":
        pos = 0
        while True:
            nl = page.find("\n", pos)
            end = len(page) if nl < 0 else nl
            if page[pos:end].strip():
                return pos, end
            pos = end + 1
    end = len(page)
    while True:
        nl = page.rfind("\n", 0, end)
        start = nl + 1
        if page[start:end].strip():
            return start, end
        end = nl


def _s(n: int) -> str:
    return "" if n == 1 else "s"
