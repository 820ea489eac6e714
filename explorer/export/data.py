"""Exports as data: chunks as JSONL / CSV / JSON, and a configuration as JSON (read back too)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from explorer import untrusted
from explorer.errors import ParamError
from explorer.export.code import model_ref
from explorer.strategies.config import StrategyConfig
from explorer.text.chunk import Chunk
from explorer.untrusted import dumps

#: Cells starting with these are formulas to Excel / LibreOffice / Sheets (CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
CSV_COLUMNS = (
    "document",
    "doc_id",
    "index",
    "start",
    "end",
    "chars",
    "length",
    "unit",
    "pages",
    "headings",
    "reason",
    "text",
)


def chunks_to_jsonl(chunks: Sequence[Chunk]) -> str:
    """One JSON object per line (``Chunk.to_dict()``), UTF-8 text kept as is."""
    return "".join(dumps(c.to_dict()) + "\n" for c in chunks)


def chunks_to_json(chunks: Sequence[Chunk], indent: int | None = 2) -> str:
    return dumps([c.to_dict() for c in chunks], indent=indent) + "\n"


def safe_cell(value: Any) -> Any:
    """Neutralise a spreadsheet formula: a text cell starting with = + - @ (or tab / CR) gets a
    leading apostrophe, so opening the CSV in a spreadsheet never evaluates chunk text.
    The exact text stays recoverable from ``start``/``end`` (or the JSON export)."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def chunks_to_csv(chunks: Sequence[Chunk]) -> str:
    """CSV with a header row; pages joined with ``;``, headings with `` > ``; formula-safe."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(CSV_COLUMNS)
    for c in chunks:
        d = c.to_dict()
        d["pages"] = ";".join(str(p) for p in c.pages)
        d["headings"] = " > ".join(c.headings)
        w.writerow([safe_cell(d[k]) for k in CSV_COLUMNS])
    return buf.getvalue()


def export_chunks(chunks: Sequence[Chunk], fmt: str) -> str:
    """``fmt`` is ``jsonl``, ``json`` or ``csv``."""
    if fmt == "jsonl":
        return chunks_to_jsonl(chunks)
    if fmt == "json":
        return chunks_to_json(chunks)
    if fmt == "csv":
        return chunks_to_csv(chunks)
    raise ParamError(f"unknown export format {fmt!r}; choose jsonl, json or csv")


def config_to_json(
    configs: Sequence[StrategyConfig],
    doc_names: Sequence[str] = (),
    *,
    model: str | None = None,
    cleanup: Sequence[str] = (),
    options: Any = None,
    quantize: bool = False,
    backend: str = "auto",
) -> str:
    """The whole setup as JSON: strategies with every parameter, model (its registered name, or
    its folder's name under ``$CHUNK_EXPLORER_MODELS``), backend, clean-up, documents."""
    from explorer import __version__

    name = model_ref(model)[1]
    d: dict[str, Any] = {
        "explorer_version": __version__,
        "model": name,
        "backend": backend or "auto",
        "int8": bool(quantize),
        "cleanup": list(cleanup),
        "documents": list(doc_names),
        "strategies": [c.to_dict() for c in configs],
    }
    if options is not None:
        d["embed_options"] = {
            "prepend_headings": bool(getattr(options, "prepend_headings", False)),
            "context_chars": int(getattr(options, "context_chars", 0)),
            "piece_chars": int(getattr(options, "piece_chars", 0)),
        }
    return json.dumps(d, ensure_ascii=False, indent=2) + "\n"


def configs_from_json(text: str | bytes) -> list[StrategyConfig]:
    """Read back :func:`config_to_json` (or a bare list of strategy objects); validates them."""
    d = untrusted.loads(text, "configuration", ParamError)
    items = d.get("strategies") if isinstance(d, Mapping) else d
    if not isinstance(items, list) or not all(isinstance(i, Mapping) and "strategy" in i for i in items):
        raise ParamError('configuration JSON needs "strategies": [{"strategy": NAME, "params": {...}}]')
    return [StrategyConfig.from_dict(i) for i in items]
