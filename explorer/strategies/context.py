"""What a strategy may need besides the document: length functions and (lazily) an embedder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from explorer.text.length import Length, get_length

if TYPE_CHECKING:
    from explorer.embedding.base import Embedder


@dataclass
class Context:
    """Per-run services. ``model`` names the embedding model (None = the registry's default);
    ``backend`` how it runs (see :data:`explorer.models.registry.BACKENDS`); ``quantize``
    asks for the torch int8 variant. ``tokens_model`` names the tokenizer that ``length=tokens``
    counts in when it should not be the embedding model's (the Chroma rows count MiniLM tokens
    whatever model embeds, so every model sees the same chunks).

    The embedder is created on first use only, so structural strategies never import torch.
    """

    model: str | None = None
    embedder: Embedder | None = None
    quantize: bool = False
    backend: str = "auto"
    tokens_model: str | None = None
    #: Word pieces per model input when preview mode reads a document (None = the registry's
    #: choice for the model, else its limit; see :mod:`explorer.embedding.late`).
    preview_window: int | None = None
    #: Optional progress callback ``(done, total)`` for slow steps (embedding).
    progress: Any = None
    _cache: dict = field(default_factory=dict, repr=False)

    _default: ClassVar[Context | None] = None  # process-wide default, see default()

    @classmethod
    def default(cls) -> Context:
        if cls._default is None:
            cls._default = cls()
        return cls._default

    def length(self, unit: str) -> Length:
        return get_length(unit, self.tokens_model or self.model)

    def get_embedder(self) -> Embedder:
        if self.embedder is None:
            from explorer.embedding.embedder import get_embedder

            self.embedder = get_embedder(self.model, quantize=self.quantize, backend=self.backend)
        return self.embedder

    def model_key(self) -> str:
        """The model as far as vectors and token counts go, without building it: the embedder's
        id once there is one, else what was asked for (a BM25 run never builds the model, whose
        first build on a machine takes a minute and gigabytes)."""
        if self.embedder is not None:
            return self.embedder.model_id
        return f"{self.model}|{self.backend}|int8={self.quantize}|tokens={self.tokens_model}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """The embedding model's word pieces per text, its special tokens counted (its tokenizer
        only: the model is not built for this)."""
        if self.embedder is not None:
            return self.embedder.count_tokens(texts)
        tokens = self._cache.get("model tokens")  # made once: the streamed runner asks per document
        if tokens is None:
            tokens = self._cache["model tokens"] = get_length("tokens", self.model)
        return tokens.count_batch(list(texts))
