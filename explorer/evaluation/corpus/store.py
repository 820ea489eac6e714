"""What a corpus run leaves on disk so that it can resume: the results file (JSONL, one line per
finished document, then one per result) and, beside it, one small ``.npz`` file per document with
its chunks' offsets, token counts, vectors and BM25 words.

Why a module of its own: resuming is only as good as these files are safe. The results file
starts with a line holding the run's key (configurations, options, model, retriever, mode,
clean-up and the question file's hash): a file written with other settings is refused rather than
mixed. A document's cache file is written whole (to a temporary name, then renamed) before its
line, and a line is flushed as soon as it is written, so a run killed at any moment leaves at
worst a half-written last line, which the next run drops.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from explorer import untrusted
from explorer.errors import LoadError, ParamError
from explorer.evaluation.corpus.work import DocWork, Part, WorkSpec
from explorer.text.wording import quoted
from explorer.untrusted import dumps

#: Bumped when what a line or a cache file holds changes (older files are then refused). 2: BM25
#: words are stemmed in each document's language (9b66aba) and only past a floor of its own
#: function words (``LANGUAGE_MIN_SHARE``); format-1 files hold words stemmed otherwise. 3: a
#: German, Spanish, Italian, Portuguese or Dutch document's own stop words are left out too. 4:
#: words are stemmed with their accents, then folded, and the folded words' aliases are kept. 5:
#: case is folded after NFKC, so "ℌ", "𝐁" and "㎒" give lower-case words (they stayed capitals).
#: 6: Russian, Greek, Arabic, Persian, Hindi, Polish and Turkish documents are stemmed in their
#: language (they were left as written, Polish stemmed as Portuguese), Arabic's tatweel folded,
#: Turkish dotless ı folded to i.
FORMAT = 6


def run_key(spec: WorkSpec, model: str, questions_sha: str) -> str:
    """What a finished document's line and cache file depend on, hashed."""
    payload = {
        "format": FORMAT,
        "configs": [c.to_dict() for c in spec.configs],
        "options": asdict(spec.options),
        "cleanup": asdict(spec.cleanup),
        "retriever": spec.retriever,
        "mode": spec.mode,
        "model": model,
        "questions": questions_sha,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class ResultsFile:
    """The JSONL results file of one run: its first line says which run, then one line per
    finished document (``"kind": "document"``), then the results (``"kind": "result"``)."""

    def __init__(self, path: str | Path, key: str, header: Mapping[str, Any], resume: bool) -> None:
        self.path = Path(path)
        self.key = key
        #: finished documents of an earlier run: source key → its line
        self.finished: dict[str, dict[str, Any]] = {}
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if not fresh and not resume:
            raise ParamError(
                f"--out {str(self.path)!r} exists: add --resume to continue that run, or give another file"
            )
        if not fresh:
            self._read()
            fresh = self.path.stat().st_size == 0  # only a half-written first line was there
        try:
            self._fh = self.path.open("a", encoding="utf-8")
        except OSError as err:
            raise LoadError(f"cannot write {str(self.path)!r}: {err.strerror or err}") from None
        if fresh:
            self.write({"kind": "run", "format": FORMAT, "key": key, **header})

    def _read(self) -> None:
        """The finished documents of the file; a half-written last line is cut off."""
        raw = self.path.read_bytes()
        good = 0  # bytes of whole, readable lines
        lines = raw.split(b"\n")
        for i, line in enumerate(lines):
            if not line.strip():
                good += len(line) + 1
                continue
            try:
                rec = untrusted.loads(line, "line", LoadError)
                if not isinstance(rec, dict) or (rec.get("kind") == "document" and not _whole_record(rec)):
                    raise LoadError("not a record of this program")
            except LoadError:
                if i >= len(lines) - 2:  # the last line, cut by a kill: dropped
                    break
                raise LoadError(
                    f"--out {str(self.path)!r}: line {i + 1} is not a record this program wrote; it is damaged"
                ) from None
            bad = _header_problem(rec) if i == 0 else ""
            if bad:
                raise LoadError(
                    f"--out {str(self.path)!r}: line 1, the run's header, {bad}; the file is damaged: "
                    "give another --out to start a new run"
                )
            if i == 0 and (rec.get("kind") != "run" or rec.get("key") != self.key):
                raise ParamError(
                    f"--out {str(self.path)!r} holds a run with other settings (configurations, options, "
                    "model, retriever, clean-up or questions) or by an older version: give another --out to start a new run"
                )
            if rec.get("kind") == "document":
                self.finished[rec["source"]] = rec
            good += len(line) + 1
        if good < len(raw):
            with self.path.open("r+b") as fh:
                fh.truncate(min(good, len(raw)))

    def write(self, record: Mapping[str, Any]) -> None:
        self._fh.write(dumps(record) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


#: The results file's first line: its fields and their types, as :class:`ResultsFile` writes them
#: (the CLI's header; the first four are always there).
_HEADER = {"kind": str, "format": int, "key": str, "documents": int, "command": str, "engine": str,
           "strategies": list, "retriever": str, "mode": str, "questions_file": str}  # fmt: skip
_HEADER_NEEDS = ("kind", "format", "key", "documents")


def _header_problem(rec: Mapping[str, Any]) -> str:
    """What is wrong with a header line's fields ('' if nothing). Why: ``--resume`` took a header
    of ``"documents": "30"``, ``null`` or nested lists as long as its key matched."""
    for name in _HEADER_NEEDS:
        if name not in rec:
            return f"has no {name!r}"
    for name, value in rec.items():
        want = _HEADER.get(name)
        if want is int:
            ok, what = isinstance(value, int) and not isinstance(value, bool) and value >= 0, "a whole number >= 0"
        elif want is list:
            ok, what = isinstance(value, list) and all(isinstance(v, str) for v in value), "a list of names"
        elif want is str:
            ok, what = isinstance(value, str), "text"
        else:  # a field of another caller's header: a plain value
            ok, what = isinstance(value, str | int | float), "text or a number"
        if not ok:
            return f"has {name}={quoted(value)}, not {what}"
    return ""


#: A finished document's line: its fields and their types, as :func:`document_line` writes them.
_RECORD = {"n": int, "source": str, "name": str, "doc_id": str, "sha": str, "chars": int, "chunks": list,
           "questions": list}  # fmt: skip


def _whole_record(rec: Mapping[str, Any]) -> bool:
    return all(isinstance(rec.get(k), t) and not isinstance(rec.get(k), bool) for k, t in _RECORD.items())


def document_line(source_key: str, stat: tuple[int, int], work: DocWork) -> dict[str, Any]:
    """The results file's line for a finished document."""
    return {
        "kind": "document",
        "n": work.n,
        "source": source_key,
        "name": work.name,
        "doc_id": work.doc_id,
        "sha": work.sha,
        "size": stat[0],
        "mtime_ns": stat[1],
        "chars": work.chars,
        "chunks": [len(p) for p in work.parts],
        "seconds": round(work.seconds, 4),
        "embed_seconds": round(work.embed_seconds, 4),
        "questions": work.outcomes,
    }


class ChunkCache:
    """One ``.npz`` per document (named by the hash of its bytes and the run's key) with every
    configuration's offsets, token counts, vectors and BM25 words. No pickles: plain arrays."""

    def __init__(self, directory: str | Path, key: str) -> None:
        self.directory = Path(directory)
        self.key = key

    def path(self, sha: str) -> Path:
        return self.directory / sha[:2] / f"{sha[:40]}-{self.key[:16]}.npz"

    def has(self, sha: str) -> bool:
        return self.path(sha).is_file()

    def save(self, work: DocWork) -> None:
        arrays: dict[str, np.ndarray] = {}
        for j, p in enumerate(work.parts):
            arrays[f"s{j}"], arrays[f"e{j}"], arrays[f"t{j}"] = p.starts, p.ends, p.tokens
            if p.llm is not None:
                arrays[f"c{j}"] = p.llm
            if p.vectors is not None:
                arrays[f"v{j}"] = np.ascontiguousarray(p.vectors, np.float32)
            if p.words is not None:
                vocab: dict[str, int] = {}
                ids = [vocab.setdefault(w, len(vocab)) for ws in p.words for w in ws]
                arrays[f"w{j}"] = np.array(list(vocab), dtype=str) if vocab else np.zeros(0, "U1")
                arrays[f"i{j}"] = np.array(ids, np.int32)
                arrays[f"l{j}"] = np.array([len(ws) for ws in p.words], np.int32)
                arrays[f"g{j}"] = np.array(p.language)
                pairs = [(f, stem) for f, stems in p.aliases.items() for stem in stems]
                arrays[f"af{j}"] = np.array([f for f, _ in pairs], dtype=str) if pairs else np.zeros(0, "U1")
                arrays[f"as{j}"] = np.array([st for _, st in pairs], dtype=str) if pairs else np.zeros(0, "U1")
        path = self.path(work.sha)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
        except OSError as err:
            raise LoadError(f"cannot write the chunk cache {str(path)!r}: {err.strerror or err}") from None

    def load(self, sha: str, n_parts: int, chars: int) -> list[Part]:
        """The document's parts, each checked: offsets inside its ``chars`` characters, in order,
        one token count per chunk (a damaged or edited file is refused, not scored)."""
        path = self.path(sha)
        try:
            with np.load(path, allow_pickle=False) as z:
                parts = []
                for j in range(n_parts):
                    part = Part(z[f"s{j}"], z[f"e{j}"], z[f"t{j}"], z.get(f"c{j}"))
                    if f"v{j}" in z:
                        part.vectors = z[f"v{j}"]
                    if f"w{j}" in z:
                        words, ids, lens = z[f"w{j}"].tolist(), z[f"i{j}"], z[f"l{j}"]
                        ends = np.cumsum(lens)
                        part.words = [
                            [words[i] for i in ids[e - n : e]] for n, e in zip(lens, ends, strict=True)
                        ]
                        part.language = str(z[f"g{j}"]) if f"g{j}" in z else ""
                        aliased = (z[f"af{j}"].tolist(), z[f"as{j}"].tolist()) if f"af{j}" in z else ([], [])
                        for f, stem in zip(*aliased, strict=True):
                            part.aliases[f] = (*part.aliases.get(f, ()), stem)
                    _check_part(part, chars)
                    parts.append(part)
                return parts
        except (OSError, KeyError, IndexError, ValueError, EOFError, zipfile.BadZipFile) as err:
            raise LoadError(
                f"the chunk cache {str(path)!r} is damaged ({err}): delete it and run again with --resume"
            ) from None


def _check_part(part: Part, chars: int) -> None:
    """ValueError unless ``part`` is what :meth:`ChunkCache.save` wrote for a text of ``chars``."""
    s, e, t = part.starts, part.ends, part.tokens
    arrays = [s, e, t] + ([part.llm] if part.llm is not None else [])
    if any(a.ndim != 1 or a.dtype.kind not in "iu" or len(a) != len(s) for a in arrays):
        raise ValueError("offsets or token counts of unequal length or not whole numbers")
    if len(s) and (s.min() < 0 or e.max() > chars or (e < s).any() or any(a.min() < 0 for a in arrays[2:])):
        raise ValueError(f"offsets outside the document's {chars:,} characters or negative counts")
    if part.vectors is not None and (part.vectors.ndim != 2 or len(part.vectors) != len(s)):
        raise ValueError("one vector per chunk expected")
