"""Peer code on texts the other export tests do not use: spaced French marks, CJK, flags and NFD
accents, Markdown tables and fences, CRLF line ends, a long base64 line. Where the snippet says it
gives explorer's chunks, it does; where a peer reads the file, it reads explorer's text."""

from __future__ import annotations

import base64
import sys
import types
from pathlib import Path

import pytest

from explorer import chunk_document
from explorer.documents.loaders import load_path
from explorer.export.code import config_to_code
from explorer.strategies.config import StrategyConfig

TEXTS = {
    "french.txt": ("Il dit\u00a0: «\u00a0mot\u00a0», la hausse est de 10\u00a0%. Qu’en dit-on\u202f? " * 6 + "\n\n") * 3,
    "cjk.txt": "東京は日本の首都です。人口は約千四百万人です。北京是中国的首都。" * 8 + "\n\n" + "これはテストです。" * 12,
    "flags.txt": ("Drapeau 🇫🇷 et 🇯🇵, cafe\u0301 et re\u0301sume\u0301, famille 👨\u200d👩\u200d👧. " * 8 + "\n\n") * 3,
    "tables.md": "# T\n\nIntro.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```py\ndef f(x):\n    return x\n\n\nf(2)\n```\n\nEnd words." * 3,
    "windows.txt": "Line one of the text.\r\nLine two here.\r\n\r\nNew paragraph with words.\r\n" * 12,
    "base64.txt": "Intro.\n\n" + base64.b64encode(bytes(range(256)) * 6).decode() + "\n\nOutro words here.\n",
}


def _write(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(TEXTS[name].encode("utf-8"))
    return path


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize(
    "params",
    [
        {"chunk_size": 80, "chunk_overlap": 10},
        {"chunk_size": 80, "chunk_overlap": 0, "keep_separator": "end"},
        {"chunk_size": 12, "chunk_overlap": 3, "length": "words"},
    ],
)
def test_langchain_recursive_snippet_gives_explorers_chunks(tmp_path, name, params):
    """The one snippet that claims explorer's chunks ("same chunks as explorer's `recursive`")."""
    pytest.importorskip("langchain_text_splitters")
    path = _write(tmp_path, name)
    config = StrategyConfig.make("recursive", params)
    code = config_to_code([config], [str(path)])["langchain"]
    assert code.startswith("# same chunks as explorer's `recursive`")
    ns: dict = {}
    exec(compile(code, "<langchain snippet>", "exec"), ns)  # our own generated code, test only
    assert ns["chunks"] == [c.text for c in chunk_document(load_path(path), "recursive", config.param_dict)]


class _Document:
    """LlamaIndex's ``Document`` as the reading uses it, where llama-index is not installed."""

    def __init__(self, text: str, metadata: dict | None = None) -> None:
        self.text, self.metadata = text, metadata or {}


def _llama_index_core(monkeypatch) -> None:
    """The real ``llama_index.core`` if installed, else a stand-in: ``Document`` and inert parsers."""
    try:
        import llama_index.core  # noqa: F401
    except ImportError:
        core = types.ModuleType("llama_index.core")
        core.Document, core.__path__ = _Document, []  # type: ignore[attr-defined]
        parsers = types.ModuleType("llama_index.core.node_parser")
        parsers.__getattr__ = lambda name: lambda *args, **kwargs: None  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "llama_index", types.ModuleType("llama_index"))
        monkeypatch.setitem(sys.modules, "llama_index.core", core)
        monkeypatch.setitem(sys.modules, "llama_index.core.node_parser", parsers)


def test_llamaindex_reads_a_text_file_as_explorer_does(tmp_path, monkeypatch):
    """SimpleDirectoryReader kept ``\\r\\n`` and gave each document its path as metadata, which
    LlamaIndex's splitters take off chunk_size (80-character windows held 40): the snippet's
    documents now hold explorer's text and nothing else."""
    _llama_index_core(monkeypatch)
    folder = tmp_path / "a folder with a rather long name, as real paths have"
    folder.mkdir()
    path = _write(folder, "windows.txt")
    code = config_to_code([StrategyConfig.make("fixed", {"chunk_size": 80})], [str(path)])["llamaindex"]
    reading = code.split("nodes = parser")[0]
    ns: dict = {}
    exec(compile(reading, "<llamaindex snippet>", "exec"), ns)  # our own generated code, test only
    (document,) = ns["documents"]
    assert document.text == load_path(path).text
    assert not document.metadata


def _every_configuration():
    """Each strategy in each length unit, and semantic in each breakpoint mode."""
    from explorer import ParamError
    from explorer.strategies import strategy_names
    from explorer.strategies.curve import MODES
    from explorer.strategies.params import LENGTH

    for name in strategy_names():
        for unit in LENGTH.choices:
            for mode in MODES if name == "semantic" else (None,):
                params = {"length": unit, **({"breakpoint_mode": mode} if mode else {})}
                try:
                    yield StrategyConfig.make(name, params)
                except ParamError:
                    continue


def test_every_peer_snippet_says_first_whether_it_gives_explorers_chunks():
    """Only LangChain's recursive splitter gives explorer's chunks (the tests above run it); every
    other snippet opens with "closest" or "no equivalent". LangChain's and LlamaIndex's token
    windows opened "windows of model word pieces", though LangChain decodes each window from its
    pieces (line breaks and no-break spaces come back as spaces) and LlamaIndex cuts at spaces."""
    seen = 0
    for config in _every_configuration():
        code = config_to_code([config], ["doc.txt"])
        for peer in ("langchain", "llamaindex", "chonkie"):
            first = code[peer].splitlines()[0]
            same = config.strategy == "recursive" and peer == "langchain"
            expected = ("# same chunks as explorer's",) if same else ("# closest:",)
            assert first.startswith(expected) or "has no equivalent" in first, (config.display, peer, first)
            seen += 1
    assert seen > 60
