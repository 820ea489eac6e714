"""Shared fixtures. The real model is loaded once per session; a fake embedder serves fast tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CHROMA = SHARED / "benchmarks" / "chroma"


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Tests never touch the user's embedding cache."""
    os.environ["CHUNK_EXPLORER_CACHE"] = str(tmp_path_factory.mktemp("embcache"))
    # Models built from the packaged weights (e5 rebuilt, ONNX int8 graphs) are keyed by what
    # they are built from, so test runs share them: a fresh clone builds them once (~1.5 min).
    os.environ.setdefault("CHUNK_EXPLORER_MODEL_CACHE", str(ROOT / ".cache" / "models"))
    yield


@pytest.fixture(scope="session")
def chroma_dir() -> Path:
    if not CHROMA.exists():
        pytest.skip(f"Chroma benchmark data not found at {CHROMA}")
    return CHROMA
