"""Exports: chunks as JSONL / CSV / JSON, the configuration as JSON, and the same configuration
as code (the explorer CLI and Python call, and LangChain / LlamaIndex / Chonkie equivalents).

Generated code is built from the validated parameters only, with every user value written as a
Python or shell literal (``repr`` / ``shlex.quote``), so a separator or a file name can never
inject code into a snippet.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from explorer import untrusted
from explorer.models.choice import MODELS_DIR_ENV
from explorer.models.registry import DEFAULT_MODEL, find_spec
from explorer.strategies.config import StrategyConfig
from explorer.text.chunk import Chunk

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
#: The registered models' names on the Hugging Face hub, for code meant to run elsewhere.
HUB_NAMES = {
    "multilingual-e5-small": "intfloat/multilingual-e5-small",
    "all-MiniLM-L6-v2": "sentence-transformers/all-MiniLM-L6-v2",
}
#: Name of the default model on the Hugging Face hub.
HUB_DEFAULT_MODEL = HUB_NAMES[DEFAULT_MODEL]


# ---------------------------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------------------------
def chunks_to_jsonl(chunks: Sequence[Chunk]) -> str:
    """One JSON object per line (``Chunk.to_dict()``), UTF-8 text kept as is."""
    return "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in chunks)


def chunks_to_json(chunks: Sequence[Chunk], indent: int | None = 2) -> str:
    return json.dumps([c.to_dict() for c in chunks], ensure_ascii=False, indent=indent) + "\n"


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
    from explorer.errors import ParamError

    raise ParamError(f"unknown export format {fmt!r}; choose jsonl, json or csv")


# ---------------------------------------------------------------------------------------------
# The model, as code: a registered name, or a folder under the models directory (never a path)
# ---------------------------------------------------------------------------------------------
def _model(model: str | None) -> tuple[str, str]:
    """``("default" | "registered" | "folder", name)``. ``model`` is a registered name or alias,
    or the name of a folder under ``$CHUNK_EXPLORER_MODELS``; only the last part of anything
    else is kept, so a server path never reaches the code."""
    spec = find_spec(model)
    if spec is not None:
        return ("default" if spec.name == DEFAULT_MODEL else "registered"), spec.name
    name = PurePath(str(model).replace("\\", "/")).name
    return "folder", name if name not in ("", ".", "..") else "MODEL"


def _model_py(model: str | None) -> str:
    """A Python expression for the model as explorer takes it."""
    kind, name = _model(model)
    if kind == "folder":
        return f"os.path.join(os.environ[{MODELS_DIR_ENV!r}], {name!r})"
    return repr(name)


def _hub(model: str | None) -> str:
    """A Python expression naming the model for another library (hub name or local folder)."""
    kind, name = _model(model)
    if kind == "folder":
        return _model_py(model)
    spec = find_spec(name)
    aliases = spec.aliases if spec is not None else ()
    return repr(HUB_NAMES.get(name) or next((a for a in aliases if "/" in a), name))


def _with_os(code: str) -> str:
    """``import os`` before code that reads the models directory from the environment."""
    return f"import os\n{code}" if "os.environ[" in code and "import os\n" not in code else code


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------
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

    name = _model(model)[1]
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
        }
    return json.dumps(d, ensure_ascii=False, indent=2) + "\n"


def configs_from_json(text: str | bytes) -> list[StrategyConfig]:
    """Read back :func:`config_to_json` (or a bare list of strategy objects); validates them."""
    from explorer.errors import ParamError

    d = untrusted.loads(text, "configuration", ParamError)
    items = d.get("strategies") if isinstance(d, Mapping) else d
    if not isinstance(items, list) or not all(isinstance(i, Mapping) and "strategy" in i for i in items):
        raise ParamError('configuration JSON needs "strategies": [{"strategy": NAME, "params": {...}}]')
    return [StrategyConfig.from_dict(i) for i in items]


# ---------------------------------------------------------------------------------------------
# Code
# ---------------------------------------------------------------------------------------------
def _py(v: Any) -> str:
    """A Python literal for a parameter value (tuples as lists)."""
    if isinstance(v, tuple):
        return "[" + ", ".join(_py(x) for x in v) + "]"
    return repr(v)


def _cli_value(v: Any) -> str:
    if isinstance(v, tuple):
        return json.dumps(list(v), ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _cli(
    configs: Sequence[StrategyConfig],
    docs: Sequence[str],
    model: str | None,
    cleanup: Sequence[str],
    quantize: bool = False,
    backend: str = "auto",
) -> str:
    lines = []
    extra = []
    kind, name = _model(model)
    if kind == "registered":
        extra.append(f"--model {shlex.quote(name)}")
    elif kind == "folder":
        extra.append(f'--model "${MODELS_DIR_ENV}"/{shlex.quote(name)}')
    if backend and backend != "auto":
        extra.append(f"--backend {shlex.quote(backend)}")
    if quantize:
        extra.append("--int8")
    if cleanup:
        extra.append(f"--cleanup {shlex.quote(','.join(cleanup))}")
    paths = " ".join(shlex.quote(d) for d in docs) or "FILE"
    for c in configs:
        sets = " ".join(f"--set {shlex.quote(f'{k}={_cli_value(v)}')}" for k, v in c.changed_params().items())
        cmd = f"python -m explorer chunk {paths} --strategy {shlex.quote(c.strategy)}"
        lines.append(" ".join(x for x in (cmd, sets, *extra) if x))
    if len(configs) > 1:
        strategies = " ".join(
            " ".join(
                [f"--strategy {shlex.quote(c.strategy)}"]
                + [f"--set {shlex.quote(f'{k}={_cli_value(v)}')}" for k, v in c.changed_params().items()]
            )
            for c in configs
        )
        lines.append("")
        lines.append("# the same strategies side by side for one question:")
        lines.append(
            " ".join(
                x
                for x in (
                    f"python -m explorer compare {paths} --question 'YOUR QUESTION'",
                    strategies,
                    *extra,
                )
                if x
            )
        )
    return "\n".join(lines) + "\n"


def _python(
    configs: Sequence[StrategyConfig],
    docs: Sequence[str],
    model: str | None,
    cleanup: Sequence[str],
    quantize: bool = False,
    backend: str = "auto",
) -> str:
    out = ["from explorer import Context, chunk_document", "from explorer.documents.loaders import load_path"]
    if cleanup:
        out.append("from explorer.documents.cleanup import Cleanup")
    out.append("")
    args = [f"model={_model_py(model)}"] if _model(model)[0] != "default" else []
    args += [f"backend={backend!r}"] if backend and backend != "auto" else []
    args += ["quantize=True"] if quantize else []
    ctx = f"Context({', '.join(args)})"
    out.append(f"ctx = {ctx}")
    clean = f", Cleanup({', '.join(f'{c}=True' for c in cleanup)})" if cleanup else ""
    out.append(f"docs = [load_path(p{clean}) for p in {list(docs) or ['FILE']!r}]")
    for i, c in enumerate(configs):
        params = "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in c.changed_params().items()) + "}"
        out.append(
            f"chunks_{i} = [c for d in docs for c in chunk_document(d, {c.strategy!r}, {params}, ctx)]"
        )
    out.append("# each chunk: c.text == doc.text[c.start:c.end], c.pages, c.headings, c.reason")
    return "\n".join(out) + "\n"


def _read(docs: Sequence[str]) -> str:
    name = docs[0] if docs else "FILE"
    return f'text = open({name!r}, encoding="utf-8").read()'


def _lc_length(unit: str, model: str | None) -> tuple[list[str], str]:
    """(setup lines, keyword arguments) giving LangChain our length unit."""
    if unit == "chars":
        return [], ""
    if unit == "words":
        return [], ", length_function=lambda t: len(t.split())"
    if unit == "tokens":
        return [
            "from transformers import AutoTokenizer",
            f"tokenizer = AutoTokenizer.from_pretrained({_hub(model)})",
            "# word pieces including the model's special tokens, as explorer's length='tokens' counts them",
        ], ", length_function=lambda t: len(tokenizer.encode(t))"
    return [], ""  # cl100k / o200k use from_tiktoken_encoder (see caller)


def _langchain(c: StrategyConfig, docs: Sequence[str], model: str | None) -> str:
    p = c.param_dict
    s = c.strategy
    unit = p.get("length", "chars")
    tik = unit in ("cl100k", "o200k")
    setup, length_kw = _lc_length(unit, model)
    if s in ("recursive", "paragraph", "fixed") and (
        s != "fixed" or unit in ("chars", "cl100k", "o200k", "tokens")
    ):
        if s == "recursive":
            cls = "RecursiveCharacterTextSplitter"
            keep = {"start": "'start'", "end": "'end'", "false": "False"}[p.get("keep_separator", "start")]
            args = (
                f"chunk_size={p['chunk_size']}, chunk_overlap={p['chunk_overlap']}, "
                f"separators={_py(p['separators'])}, keep_separator={keep}"
            )
            if p.get("is_separator_regex"):
                args += ", is_separator_regex=True"
            note = "# same chunks as explorer's `recursive` (explorer also reports exact offsets)"
        elif s == "paragraph":
            cls = "CharacterTextSplitter"
            args = f"separator='\\n\\n', chunk_size={p.get('chunk_size', 1000)}, chunk_overlap=0"
            note = "# closest: paragraphs merged up to chunk_size (explorer also splits an over-long paragraph by sentences)"
        else:
            if unit == "chars":
                cls = "CharacterTextSplitter"
                args = f"separator='', chunk_size={p['chunk_size']}, chunk_overlap={p['chunk_overlap']}"
                note = "# closest: windows of characters (LangChain strips whitespace at the edges)"
            elif tik:
                cls = "TokenTextSplitter"
                args = f"encoding_name={unit + '_base'!r}, chunk_size={p['chunk_size']}, chunk_overlap={p['chunk_overlap']}"
                note = "# windows of OpenAI tokens, like explorer's `fixed` with this length unit"
                tik = False
            else:
                cls = "SentenceTransformersTokenTextSplitter"
                args = (
                    f"model_name={_hub(model)}, tokens_per_chunk={p['chunk_size'] - 2}, "
                    f"chunk_overlap={p['chunk_overlap']}"
                )
                note = "# windows of model word pieces (explorer's size counts the 2 special tokens, hence - 2)"
                setup, length_kw = [], ""
        lines = [note, f"from langchain_text_splitters import {cls}", *setup, ""]
        if tik:
            lines.append(f"splitter = {cls}.from_tiktoken_encoder(encoding_name={unit + '_base'!r}, {args})")
        else:
            lines.append(f"splitter = {cls}({args}{length_kw})")
        lines += [_read(docs), "chunks = splitter.split_text(text)"]
        return "\n".join(lines) + "\n"
    if s == "markdown":
        levels = int(p.get("max_heading_level", 6) or 6)
        headers = [("#" * i, f"h{i}") for i in range(1, levels + 1)]
        lines = [
            "# closest: split before headings, then by size inside each section",
            "from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter",
            *setup,
            "",
            f"by_heading = MarkdownHeaderTextSplitter(headers_to_split_on={headers!r}, strip_headers=False)",
        ]
        size = p.get("chunk_size")
        lines.append(_read(docs))
        lines.append("sections = by_heading.split_text(text)")
        if size:
            make = ".from_tiktoken_encoder(encoding_name=" + repr(unit + "_base") + ", " if tik else "("
            lines.append(
                f"by_size = RecursiveCharacterTextSplitter{make}chunk_size={size}, "
                f"chunk_overlap={p.get('chunk_overlap', 0)}{length_kw})"
            )
            lines.append("chunks = [d.page_content for d in by_size.split_documents(sections)]")
        else:
            lines.append("chunks = [d.page_content for d in sections]")
        return "\n".join(lines) + "\n"
    if s == "semantic":
        mode = p.get("breakpoint_mode", "percentile")
        amount = p.get("breakpoint_amount")
        if mode == "threshold":
            return _none(
                "LangChain", s, "SemanticChunker has no absolute similarity threshold; use percentile"
            )
        lc_mode = {"percentile": "percentile", "standard_deviation": "standard_deviation"}.get(mode, mode)
        lines = [
            "# LangChain's SemanticChunker: explorer's `semantic` uses its breakpoint rules; with",
            "# window_embedding='joined' it finds the same breakpoints, its faster default windows",
            "# agree on most of them (min/max chunk size have no LangChain equivalent)",
            "from langchain_experimental.text_splitter import SemanticChunker",
            "from langchain_huggingface import HuggingFaceEmbeddings",
            "",
            f"embeddings = HuggingFaceEmbeddings(model_name={_hub(model)})",
            f"splitter = SemanticChunker(embeddings, buffer_size={p.get('buffer_size', 1)}, "
            f"breakpoint_threshold_type={lc_mode!r}"
            + (f", breakpoint_threshold_amount={amount!r}" if amount is not None else "")
            + ")",
            _read(docs),
            "chunks = splitter.split_text(text)",
        ]
        return "\n".join(lines) + "\n"
    return _none("LangChain", s)


def _none(lib: str, strategy: str, why: str = "") -> str:
    extra = f" ({why})" if why else ""
    return f"# {lib} has no equivalent of explorer's `{strategy}` strategy{extra}.\n"


def _li_tokenizer(unit: str, model: str | None) -> tuple[list[str], str]:
    """(setup lines, keyword argument): LlamaIndex counts ``len(tokenizer(text))``, so a
    tokenizer callable gives it our unit."""
    if unit == "chars":
        return [
            "# tokenizer=list: one 'token' per character, as explorer's length='chars'"
        ], ", tokenizer=list"
    if unit == "words":
        return [], ", tokenizer=str.split"
    if unit == "tokens":
        return [
            "from transformers import AutoTokenizer",
            "",
            "# word pieces without the 2 special tokens: chunk_size is explorer's size - 2",
            f"hf = AutoTokenizer.from_pretrained({_hub(model)})",
        ], ", tokenizer=hf.tokenize"
    return ["import tiktoken"], f", tokenizer=tiktoken.get_encoding({unit + '_base'!r}).encode"


def _llamaindex(c: StrategyConfig, docs: Sequence[str], model: str | None) -> str:
    p = c.param_dict
    s = c.strategy
    unit = p.get("length", "chars")
    head = ["from llama_index.core import Document"]
    tail = [
        _read(docs),
        "nodes = parser.get_nodes_from_documents([Document(text=text)])",
        "chunks = [n.get_content() for n in nodes]",
    ]
    size = p.get("chunk_size")
    if size and unit == "tokens":
        size = size - 2
    if s in ("recursive", "sentence", "paragraph"):
        setup, tok = _li_tokenizer(unit, model)
        note = {
            "recursive": "# closest: LlamaIndex has no recursive character splitter; SentenceSplitter splits by\n"
            "# paragraphs, then sentences, then words, and merges up to chunk_size",
            "sentence": "# closest: SentenceSplitter packs whole sentences up to chunk_size (not a sentence count)",
            "paragraph": "# closest: SentenceSplitter prefers paragraph breaks, then sentences",
        }[s]
        lines = [
            note,
            *head,
            "from llama_index.core.node_parser import SentenceSplitter",
            *setup,
            "",
            f"parser = SentenceSplitter(chunk_size={size or 1024}, chunk_overlap={p.get('chunk_overlap', 0)}{tok})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "fixed":
        setup, tok = _li_tokenizer(unit, model)
        lines = [
            "# windows of tokens; TokenTextSplitter prefers to cut at spaces",
            *head,
            "from llama_index.core.node_parser import TokenTextSplitter",
            *setup,
            "",
            f"parser = TokenTextSplitter(chunk_size={size}, chunk_overlap={p['chunk_overlap']}, separator=' '{tok})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "markdown":
        lines = [
            "# split before every heading (no size limit, no heading-level choice)",
            *head,
            "from llama_index.core.node_parser import MarkdownNodeParser",
            "",
            "parser = MarkdownNodeParser()",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "semantic":
        mode = p.get("breakpoint_mode", "percentile")
        if mode != "percentile":
            return _none(
                "LlamaIndex", s, f"SemanticSplitterNodeParser only has percentile breakpoints, not {mode}"
            )
        lines = [
            *head,
            "from llama_index.core.node_parser import SemanticSplitterNodeParser",
            "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
            "",
            f"embed_model = HuggingFaceEmbedding(model_name={_hub(model)})",
            f"parser = SemanticSplitterNodeParser(embed_model=embed_model, buffer_size={p.get('buffer_size', 1)}, "
            f"breakpoint_percentile_threshold={p.get('breakpoint_amount') or 95!r})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    return _none("LlamaIndex", s)


def _chonkie_tokenizer(unit: str, model: str | None) -> str:
    """A Python expression for Chonkie's ``tokenizer`` argument."""
    if unit == "tokens":
        return _hub(model)
    return repr(
        {"chars": "character", "words": "word", "cl100k": "cl100k_base", "o200k": "o200k_base"}.get(
            unit, "character"
        )
    )


def _chonkie(c: StrategyConfig, docs: Sequence[str], model: str | None) -> str:
    p = c.param_dict
    s = c.strategy
    unit = p.get("length", "chars")
    tok = _chonkie_tokenizer(unit, model)
    tail = [_read(docs), "chunks = [c.text for c in chunker.chunk(text)]"]
    if s == "recursive":
        levels = []
        for sep in p["separators"]:
            if sep == "":
                levels.append("RecursiveLevel()")
            elif sep == " ":
                levels.append("RecursiveLevel(whitespace=True)")
            else:
                levels.append(f"RecursiveLevel(delimiters=[{sep!r}])")
        lines = [
            "# closest: Chonkie's RecursiveChunker with the same separator levels (no overlap;",
            "# it also merges chunks under min_characters_per_chunk)",
            "from chonkie import RecursiveChunker, RecursiveLevel, RecursiveRules",
            "",
            f"rules = RecursiveRules(levels=[{', '.join(levels)}])",
            f"chunker = RecursiveChunker(tokenizer={tok}, chunk_size={p['chunk_size']}, rules=rules)",
            *tail,
        ]
        if p.get("chunk_overlap"):
            lines.insert(
                2, f"# note: RecursiveChunker has no chunk_overlap (explorer uses {p['chunk_overlap']})"
            )
        return "\n".join(lines) + "\n"
    if s == "fixed":
        lines = [
            "from chonkie import TokenChunker",
            "",
            f"chunker = TokenChunker(tokenizer={tok}, chunk_size={p['chunk_size']}, chunk_overlap={p['chunk_overlap']})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s in ("sentence", "paragraph"):
        size = p.get("chunk_size") or 2048
        lines = [
            "# closest: SentenceChunker packs whole sentences up to chunk_size",
            "from chonkie import SentenceChunker",
            "",
            f"chunker = SentenceChunker(tokenizer={tok}, chunk_size={size}, "
            f"min_sentences_per_chunk={p.get('sentences_per_chunk', 1)})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "markdown":
        lines = [
            "# closest: RecursiveChunker's Markdown recipe (splits at headings first, no heading path)",
            "from chonkie import RecursiveChunker",
            "",
            f"chunker = RecursiveChunker.from_recipe('markdown', tokenizer={tok}, chunk_size={p.get('chunk_size') or 2048})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "semantic":
        mode = p.get("breakpoint_mode", "percentile")
        if mode != "threshold":
            return _none(
                "Chonkie", s, f"its SemanticChunker uses an absolute similarity threshold, not {mode}"
            )
        size = p.get("max_chunk_size") or 2048
        lines = [
            "# Chonkie's SemanticChunker cuts where similarity drops below the threshold",
            "from chonkie import SemanticChunker",
            "",
            f"chunker = SemanticChunker(embedding_model={_hub(model)}, threshold={p.get('breakpoint_amount')!r}, "
            f"chunk_size={size}, similarity_window={p.get('buffer_size', 1)})",
            *tail,
        ]
        return "\n".join(lines) + "\n"
    if s == "cluster":
        return _none(
            "Chonkie",
            s,
            "the original is ClusterSemanticChunker in Chroma's chunking_evaluation package",
        )
    return _none("Chonkie", s)


def config_to_code(
    configs: Sequence[StrategyConfig],
    doc_names: Sequence[str] = (),
    *,
    model: str | None = None,
    cleanup: Sequence[str] = (),
    quantize: bool = False,
    backend: str = "auto",
) -> dict[str, str]:
    """Snippets reproducing ``configs``: keys ``cli``, ``python``, ``langchain``, ``llamaindex``,
    ``chonkie``. Where another library has no equivalent, its snippet is a comment saying so;
    where it has only a close one, the first comment line says what differs. ``model`` is a
    registered name, or the name of a folder under ``$CHUNK_EXPLORER_MODELS`` (written as that
    variable joined with the name: the code never holds a server path)."""
    configs = list(configs)
    docs = list(doc_names)
    out = {
        "cli": _cli(configs, docs, model, cleanup, quantize, backend),
        "python": _with_os(_python(configs, docs, model, cleanup, quantize, backend)),
    }
    for key, fn in (("langchain", _langchain), ("llamaindex", _llamaindex), ("chonkie", _chonkie)):
        parts = []
        for c in configs:
            code = fn(c, docs, model)
            parts.append(f"# --- {c.display} ---\n{code}" if len(configs) > 1 else code)
        out[key] = _with_os("\n".join(parts))
    return out
