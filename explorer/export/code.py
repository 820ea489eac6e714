"""A configuration as code that runs: the explorer CLI and Python call, and each strategy's
LangChain / LlamaIndex / Chonkie equivalent, which the strategy writes itself with a
:class:`Kit` (how the model and the document are named, and how each library measures a
length unit), so adding a strategy never means editing this module.

Generated code is built from the validated parameters only, with every user value written as a
Python or shell literal (``repr`` / ``shlex.quote``), so a separator or a file name can never
inject code into a snippet. A model is a registered name or a folder under the models
directory, never a server path.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from explorer.export.readers import read_lines
from explorer.models.choice import MODELS_DIR_ENV
from explorer.models.registry import DEFAULT_MODEL, find_spec
from explorer.strategies import get_strategy
from explorer.strategies.base import PEERS
from explorer.strategies.config import StrategyConfig
from explorer.text.length import WORD

#: The registered models' names on the Hugging Face hub, for code meant to run elsewhere.
HUB_NAMES = {
    "multilingual-e5-small": "intfloat/multilingual-e5-small",
    "all-MiniLM-L6-v2": "sentence-transformers/all-MiniLM-L6-v2",
}
#: Name of the default model on the Hugging Face hub.
HUB_DEFAULT_MODEL = HUB_NAMES[DEFAULT_MODEL]
#: How the peer libraries are named in a "no equivalent" comment.
PEER_NAMES = {"langchain": "LangChain", "llamaindex": "LlamaIndex", "chonkie": "Chonkie"}
TIKTOKEN_UNITS = ("cl100k", "o200k")
#: Setup lines of a snippet counting explorer's words (each Chinese or Japanese character one).
WORD_SETUP = [
    "import re",
    "# explorer's length='words': runs of non-space characters, each Chinese or Japanese character one",
    f"WORD = re.compile({WORD.pattern!a})",
]
#: A top-level import line of a snippet.
_IMPORT = re.compile(r"(from \S+ )?import \S")


# -- the model, as code ---------------------------------------------------------------------------
def model_ref(model: str | None) -> tuple[str, str]:
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
    kind, name = model_ref(model)
    if kind == "folder":
        return f"os.path.join(os.environ[{MODELS_DIR_ENV!r}], {name!r})"
    return repr(name)


def _hub(model: str | None) -> str:
    """A Python expression naming the model for another library (hub name or local folder)."""
    kind, name = model_ref(model)
    if kind == "folder":
        return _model_py(model)
    spec = find_spec(name)
    aliases = spec.aliases if spec is not None else ()
    return repr(HUB_NAMES.get(name) or next((a for a in aliases if "/" in a), name))


def _with_os(code: str) -> str:
    """``import os`` before code that reads the models directory from the environment."""
    return f"import os\n{code}" if "os.environ[" in code and "import os\n" not in code else code


def _py(v: Any) -> str:
    """A Python literal for a parameter value (tuples as lists)."""
    if isinstance(v, tuple):
        return "[" + ", ".join(_py(x) for x in v) + "]"
    return repr(v)


# -- what strategies write their peer code with ------------------------------------------------------
@dataclass(frozen=True)
class Kit:
    """The :class:`explorer.strategies.base.PeerKit` for one model, one peer library and the
    documents: ``read`` loads them with that library's own loader for their kind
    (:mod:`explorer.export.readers`), leaving ``text`` (``documents`` for LlamaIndex)."""

    hub: str
    read: str

    def py(self, value: Any) -> str:
        return _py(value)

    def code(self, lines: Sequence[str]) -> str:
        """The snippet, its imports gathered under its opening comments (the reading lines bring
        their own, which would otherwise sit after the splitter)."""
        flat = "\n".join(lines).split("\n")
        imports = list(dict.fromkeys(line for line in flat if _IMPORT.match(line)))
        rest = [
            line
            for i, line in enumerate(flat)
            if not _IMPORT.match(line) and not (line == "" and i and _IMPORT.match(flat[i - 1]))
        ]  # nor the blank line under an import
        lead = next((i for i, line in enumerate(rest) if not line.startswith("#")), len(rest))
        body: list[str] = []
        for line in rest[lead:]:
            if line.startswith("#") and body and body[-1] and not body[-1].startswith("#"):
                body.append("")  # a comment after code opens a new paragraph
            if line or (body and body[-1]):  # no blank line first or twice
                body.append(line)
        return "\n".join([*rest[:lead], *imports, "", *body]).strip("\n") + "\n"

    def none(self, peer: str, strategy: str, why: str = "") -> str:
        extra = f" ({why})" if why else ""
        return f"# {PEER_NAMES[peer]} has no equivalent of explorer's `{strategy}` strategy{extra}.\n"

    def langchain(self, note: str, cls: str, args: str, unit: str, measured: bool = True) -> str:
        """A ``langchain_text_splitters`` splitter ``cls(args)`` measuring ``unit`` (unless the
        splitter counts its own units: ``measured=False``)."""
        setup, length_kw = self.lc_length(unit) if measured else ([], "")
        lines = [note, f"from langchain_text_splitters import {cls}", *setup, ""]
        if measured and unit in TIKTOKEN_UNITS:
            lines.append(f"splitter = {cls}.from_tiktoken_encoder(encoding_name={unit + '_base'!r}, {args})")
        else:
            lines.append(f"splitter = {cls}({args}{length_kw})")
        return self.code([*lines, self.read, "chunks = splitter.split_text(text)"])

    def lc_length(self, unit: str) -> tuple[list[str], str]:
        """(setup lines, keyword arguments) giving LangChain our length unit (cl100k / o200k go
        through ``from_tiktoken_encoder`` instead)."""
        if unit == "words":
            return WORD_SETUP, ", length_function=lambda t: len(WORD.findall(t))"
        if unit == "tokens":
            return [
                "from transformers import AutoTokenizer",
                f"tokenizer = AutoTokenizer.from_pretrained({self.hub})",
                "# word pieces including the model's special tokens, as explorer's length='tokens' counts them",
            ], ", length_function=lambda t: len(tokenizer.encode(t))"
        return [], ""

    def llamaindex(self, note: list[str], imports: list[str], body: list[str]) -> str:
        return self.code(
            [
                *note,
                "from llama_index.core import Document",
                *imports,
                "",
                *body,
                self.read,
                "nodes = parser.get_nodes_from_documents(documents)",
                "chunks = [n.get_content() for n in nodes]",
            ]
        )

    def li_sentences(self, note: str, size: int, overlap: int, unit: str) -> str:
        """LlamaIndex's SentenceSplitter up to ``size`` (0: its default)."""
        setup, tok = self.li_tokenizer(unit)
        size = size - 2 if size and unit == "tokens" else size
        parser = f"parser = SentenceSplitter(chunk_size={size or 1024}, chunk_overlap={overlap}{tok})"
        return self.llamaindex(
            [note], ["from llama_index.core.node_parser import SentenceSplitter", *setup], [parser]
        )

    def li_tokenizer(self, unit: str) -> tuple[list[str], str]:
        """(setup lines, keyword argument): LlamaIndex counts ``len(tokenizer(text))``, so a
        tokenizer callable gives it our unit."""
        if unit == "chars":
            return [
                "# tokenizer=list: one 'token' per character, as explorer's length='chars'"
            ], ", tokenizer=list"
        if unit == "words":
            return WORD_SETUP, ", tokenizer=WORD.findall"
        if unit == "tokens":
            return [
                "from transformers import AutoTokenizer",
                "",
                "# word pieces without the 2 special tokens: chunk_size is explorer's size - 2",
                f"hf = AutoTokenizer.from_pretrained({self.hub})",
            ], ", tokenizer=hf.tokenize"
        return ["import tiktoken"], f", tokenizer=tiktoken.get_encoding({unit + '_base'!r}).encode"

    def chonkie(self, top: list[str], body: list[str]) -> str:
        return self.code([*top, "", *body, self.read, "chunks = [c.text for c in chunker.chunk(text)]"])

    def chonkie_sentences(self, size: int, min_sentences: int, unit: str) -> str:
        """Chonkie's SentenceChunker up to ``size`` (0: its default)."""
        return self.chonkie(
            [
                "# closest: SentenceChunker packs whole sentences up to chunk_size",
                "from chonkie import SentenceChunker",
            ],
            [
                f"chunker = SentenceChunker(tokenizer={self.chonkie_tokenizer(unit)}, chunk_size={size or 2048}, "
                f"min_sentences_per_chunk={min_sentences})"
            ],
        )

    def chonkie_tokenizer(self, unit: str) -> str:
        """A Python expression for Chonkie's ``tokenizer`` argument."""
        if unit == "tokens":
            return self.hub
        names = {"chars": "character", "words": "word", "cl100k": "cl100k_base", "o200k": "o200k_base"}
        return repr(names.get(unit, "character"))


# -- explorer itself -----------------------------------------------------------------------------
def _cli_value(v: Any) -> str:
    if isinstance(v, tuple):
        return json.dumps(list(v), ensure_ascii=False)
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _sets(c: StrategyConfig) -> list[str]:
    return [f"--set {shlex.quote(f'{k}={_cli_value(v)}')}" for k, v in c.changed_params().items()]


@dataclass(frozen=True)
class _Run:
    """Where the configurations run: the documents (files the user has, bundled samples by file
    name), the model and how it runs, the clean-up."""

    docs: list[str]
    samples: list[str]
    model: str | None
    cleanup: Sequence[str]
    quantize: bool
    backend: str
    question: str = ""

    def cli_options(self) -> list[str]:
        extra = []
        kind, name = model_ref(self.model)
        if kind == "registered":
            extra.append(f"--model {shlex.quote(name)}")
        elif kind == "folder":
            extra.append(f'--model "${MODELS_DIR_ENV}"/{shlex.quote(name)}')
        if self.backend and self.backend != "auto":
            extra.append(f"--backend {shlex.quote(self.backend)}")
        if self.quantize:
            extra.append("--int8")
        if self.cleanup:
            extra.append(f"--cleanup {shlex.quote(','.join(self.cleanup))}")
        return extra

    def context_args(self) -> str:
        args = [f"model={_model_py(self.model)}"] if model_ref(self.model)[0] != "default" else []
        args += [f"backend={self.backend!r}"] if self.backend and self.backend != "auto" else []
        args += ["quantize=True"] if self.quantize else []
        return ", ".join(args)

    def cli_docs(self) -> str:
        """The documents as CLI arguments: the files, then ``--sample NAME`` for each sample."""
        words = [shlex.quote(d) for d in self.docs] + [f"--sample {shlex.quote(s)}" for s in self.samples]
        return " ".join(words) or "FILE"


def _cli(configs: Sequence[StrategyConfig], run: _Run) -> str:
    extra = run.cli_options()
    paths = run.cli_docs()
    lines = []
    for i, c in enumerate(configs, 1):
        cmd = f"python -m explorer chunk {paths} --strategy {shlex.quote(c.strategy)}"
        # several configurations: each to its own file (pasted as a block, they shared one stream)
        out = f"> chunks-{i}-{c.strategy}.jsonl" if len(configs) > 1 else ""
        lines.append(" ".join(x for x in (cmd, " ".join(_sets(c)), *extra, out) if x))
    if len(configs) > 1:
        strategies = " ".join(" ".join([f"--strategy {shlex.quote(c.strategy)}", *_sets(c)]) for c in configs)
        asked = " ".join(run.question.split()) or "YOUR QUESTION"  # one line, one shell word
        compare = f"python -m explorer compare {paths} --question {shlex.quote(asked)}"
        lines += ["", "# the same strategies side by side for one question:"]
        lines.append(" ".join(x for x in (compare, strategies, *extra) if x))
    return "\n".join(lines) + "\n"


def _python(configs: Sequence[StrategyConfig], run: _Run) -> str:
    out = ["from explorer import Context, chunk_document", "from explorer.documents.loaders import load_path"]
    if run.samples:
        out.append("from explorer.documents.samples import load_sample")
    if run.cleanup:
        out.append("from explorer.documents.cleanup import Cleanup")
    out += ["", f"ctx = Context({run.context_args()})"]
    clean = f", Cleanup({', '.join(f'{c}=True' for c in run.cleanup)})" if run.cleanup else ""
    files = run.docs or ([] if run.samples else ["FILE"])
    load = [f"[load_path(p{clean}) for p in {files!r}]"] if files else []
    load += [f"[load_sample(s{clean}) for s in {run.samples!r}]"] if run.samples else []
    out.append(f"docs = {' + '.join(load)}")
    for i, c in enumerate(configs):
        params = "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in c.changed_params().items()) + "}"
        out.append(
            f"chunks_{i} = [c for d in docs for c in chunk_document(d, {c.strategy!r}, {params}, ctx)]"
        )
    out.append("# each chunk: c.text == doc.text[c.start:c.end], c.pages, c.headings, c.reason")
    return "\n".join(out) + "\n"


def config_to_code(
    configs: Sequence[StrategyConfig],
    doc_names: Sequence[str] = (),
    *,
    samples: Sequence[str] = (),
    model: str | None = None,
    cleanup: Sequence[str] = (),
    quantize: bool = False,
    backend: str = "auto",
    encodings: Mapping[str, str] | None = None,
    changed: Mapping[str, int] | None = None,
    question: str = "",
) -> dict[str, str]:
    """Snippets reproducing ``configs``: keys ``cli``, ``python``, ``langchain``, ``llamaindex``,
    ``chonkie``. ``doc_names`` are files the user has (named as they are), ``samples`` bundled
    samples by file name (``--sample`` on the command line); each peer's snippet loads them with
    that library's loader for their kind. Where another library has no equivalent, its snippet
    is a comment saying so; where it has only a close one, the first comment line says what
    differs. ``model`` is a registered name, or the name of a folder under
    ``$CHUNK_EXPLORER_MODELS`` (written as that variable joined with the name: the code never
    holds a server path). ``encodings``: each document's encoding as explorer read it, by name
    (the peers' readers use it); ``changed``: the control characters explorer removed or made line ends in each
    (``Document.changed_controls``), which the peers' readers keep; ``question``: the one the
    CLI's ``compare`` line asks (the session's last, else a placeholder)."""
    configs = list(configs)
    run = _Run(list(doc_names), list(samples), model, cleanup, quantize, backend, question)
    out = {"cli": _cli(configs, run), "python": _with_os(_python(configs, run))}
    for key in PEERS:
        kit = Kit(hub=_hub(model), read=read_lines(key, run.docs, run.samples, run.cleanup, encodings, changed))
        parts = []
        for c in configs:
            strategy = get_strategy(c.strategy)
            code = strategy.peer_code(strategy.parse(c.param_dict), kit)[key]
            parts.append(f"# --- {c.display} ---\n{code}" if len(configs) > 1 else code)
        out[key] = _with_os("\n".join(parts))
    return out
