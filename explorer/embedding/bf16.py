"""bfloat16 under torch: the fast CPU path where the processor multiplies bfloat16 natively.

Why: on a CPU with AMX tiles (Intel Sapphire Rapids and later), torch runs a bfloat16 model's
matrix products on those units. Measured on 2 cores with multilingual-e5-small
(``bench/bench_embed.py``): ~4× sentence-transformers float32 on sentences and on 1,000-character
chunks, against ~1.8× for the int8 ONNX graph, with vectors at cosine ~0.99996 of float32
(int8: ~0.99). Elsewhere it loses to int8 ONNX: emulated it is slow, and with AVX-512 BF16
instructions alone (an AMD EPYC) it ran at 2.1–2.5× against ONNX's 2.5–3.1×, so ``auto`` asks
for it only where :func:`native_bf16` says the AMX units are there.

Texts are sorted by length and run in padded batches of about :data:`BATCH_TOKENS` tokens with a
padding mask (no packing: with a block mask, attention leaves the fused kernel, measured 1.4×
slower in bfloat16), through the model and its mean pooling traced once to TorchScript
(:func:`traced_pool`: no GIL during a pass); pooling is done in float32.

The check (once per model and machine, cached like the ONNX build): the bfloat16 model embeds
:data:`~explorer.embedding.onnx_backend.PROBES` beside float32; a cosine under
:data:`MIN_COSINE` on any probe refuses it and ``auto`` moves on to ONNX.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from explorer.errors import ModelError
from explorer.models.local import folder_fingerprint, model_cache_root, publish

CHECK_VERSION = 2  # 2: the traced pass
#: Refuse bfloat16 below this cosine to float32 on any probe (measured: e5 min 0.99996).
MIN_COSINE = 0.999
#: Padded tokens per forward call (2,048 measured best for sentences and chunks alike).
BATCH_TOKENS = 2048
_lock = threading.Lock()


def native_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bfloat16 matrices in hardware (the ``amx_bf16`` flag): only
    then is bfloat16 faster than the int8 graph. Read from the kernel's CPU flags, so that
    choosing a backend does not import torch (~5 s)."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "amx_bf16" in line.split()
    except OSError:
        pass
    return False


def check_dir(folder: Path) -> Path:
    """Where the check of the model in ``folder`` is cached (keyed by its files and torch)."""
    from importlib.metadata import version

    salt = f"torch={version('torch')}"
    return model_cache_root() / "bf16" / f"{folder_fingerprint(folder, salt)}-v{CHECK_VERSION}"


def ensure_bf16(folder: Path, prefix: str = "", subprocess: bool = True) -> dict[str, Any]:
    """The check report of bfloat16 against float32 for the model in ``folder``, made on first
    use in a child process (it loads the model twice). Raises :class:`ModelError` naming the
    measured cosine when bfloat16 fails it."""
    from explorer.models.rebuild import run_child

    report_file = check_dir(folder) / "check.json"
    if subprocess and not report_file.is_file():
        run_child("explorer.embedding.bf16", str(folder), prefix)
    with _lock:
        if not report_file.is_file():
            report = _check(folder, prefix)
            tmp = Path(tempfile.mkdtemp(prefix=".check-", dir=_made(report_file.parent.parent)))
            try:
                (tmp / "check.json").write_text(json.dumps(report, indent=1))
                publish(tmp, report_file.parent)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        report = json.loads(report_file.read_text())
    if not report.get("passed"):
        raise ModelError(report.get("why", "bfloat16 failed its check"))
    return report


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _check(folder: Path, prefix: str) -> dict[str, Any]:
    import torch
    from sentence_transformers import SentenceTransformer

    from explorer.embedding.onnx_backend import PROBES

    model = SentenceTransformer(str(folder), device="cpu").eval()
    probes = [prefix + p for p in PROBES]
    want = model.encode(probes, normalize_embeddings=True, show_progress_bar=False)
    transformer = model[0]
    ids = transformer.tokenizer(probes, truncation=True, max_length=model.max_seq_length)["input_ids"]
    got = mean_pooled(traced_pool(transformer.auto_model.to(torch.bfloat16).eval()), ids)
    got /= np.linalg.norm(got, axis=1, keepdims=True)
    cos = np.sum(want * got, axis=1)
    report: dict[str, Any] = {
        "min_cosine": round(float(cos.min()), 6),
        "mean_cosine": round(float(cos.mean()), 6),
        "probes": len(probes),
        "passed": bool(cos.min() >= MIN_COSINE),
    }
    if not report["passed"]:
        report["why"] = (
            f"bfloat16 {folder.name} agrees with float32 at cosine min {report['min_cosine']:.4f}, "
            f"under {MIN_COSINE}"
        )
    return report


def traced_pool(bert: Any) -> Any:
    """``bert`` with masked mean pooling, traced to TorchScript: ``(ids, mask) -> vectors``.

    Why: eager torch takes the GIL back between every operation, so beside a busy Python thread
    (a page script) its forward pass crawled: 150 chunks took 54 s instead of 2.5 s. The traced
    graph runs the whole pass in C++ without the GIL (8.9 s beside the same thread, the int8
    ONNX graph 8.3 s; alone 2.35 s, cosine 0.9999998 to eager). The example has padding, so
    the mask is applied in every traced call; transformers skips its all-ones shortcut while
    tracing."""
    import warnings

    import torch

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: Any, mask: Any) -> Any:
            hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state.float()
            weights = mask.unsqueeze(-1).float()
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)

    ids = torch.ones((2, 8), dtype=torch.long)
    mask = torch.ones((2, 8), dtype=torch.long)
    mask[1, 5:] = 0
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # tracer warnings about Python values in the model code
        return torch.jit.trace(Pooled().eval(), (ids, mask), check_trace=False)


def mean_pooled(pooled: Any, ids: Sequence[Sequence[int]], max_tokens: int = BATCH_TOKENS) -> np.ndarray:
    """Mean of each id sequence's last hidden states (padding masked out), float32 ``(n, dim)``,
    not normalised: ``pooled`` (:func:`traced_pool`) over sorted padded batches
    (:func:`~explorer.embedding.packed.padded_batches`)."""
    import torch

    from explorer.embedding.packed import padded_batches

    out = np.zeros((len(ids), 0), np.float32)
    for batch, arr, mask in padded_batches(ids, max_tokens):
        with torch.inference_mode():
            vecs = pooled(torch.from_numpy(arr), torch.from_numpy(mask)).numpy()
        if out.shape[1] == 0:
            out = np.zeros((len(ids), vecs.shape[1]), np.float32)
        out[batch] = vecs
    return out


if __name__ == "__main__":
    import logging
    import sys

    from explorer.models.local import offline

    offline()
    logging.disable(logging.WARNING)
    try:
        ensure_bf16(Path(sys.argv[1]), sys.argv[2], subprocess=False)
    except ModelError as err:
        sys.exit(f"error: {err}")
