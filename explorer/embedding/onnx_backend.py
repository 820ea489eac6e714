"""ONNX Runtime int8: the fast CPU path for a registered BERT model, built here from its weights.

Why: on 2 CPU cores sentence-transformers in float32 embeds ~150 short sentences/s with
all-MiniLM-L6-v2. The same weights exported to ONNX, with ONNX Runtime's BERT fusions
(attention, GELU) and int8 dynamic quantisation (one scale per output channel), then layer
norms as plain operators (:mod:`explorer.embedding.onnx_layernorm`: ONNX Runtime's fused
layer-norm kernel is slow), run 3–4× faster, release the GIL while they run (other visitors'
pages keep painting), and keep vectors within cosine ~0.99 of float32.

The graph has two outputs: ``embedding`` (the mean-pooled vector, what :meth:`OnnxRunner.embed`
asks for) and ``last_hidden_state`` (every token's vector, for the one-pass preview of
:mod:`explorer.embedding.late`; ONNX Runtime computes only the outputs it is asked for, and the
fusions are unchanged: the hidden state is the last layer norm's output).

The build (export → fuse → quantise → unfuse layer norms → check) runs once per model and
machine, in the model cache folder; nothing is downloaded. The check embeds :data:`PROBES` with the float32 model and
the int8 graph; a build whose cosine falls under :data:`MIN_COSINE` (any probe) or
:data:`MIN_MEAN_COSINE` (mean) is refused, and the caller falls back to float32.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from explorer.embedding.onnx_layernorm import unfuse_layer_norms_in
from explorer.errors import ModelError
from explorer.models.local import folder_fingerprint, model_cache_root, offline, publish
from explorer.models.rebuild import run_child

BUILD_VERSION = 3  # 2: second output last_hidden_state; 3: layer norms as plain operators
#: Refuse an int8 build below these cosines to float32 on the probes (MiniLM measured
#: min 0.982 / mean 0.993; e5 min 0.97 / mean 0.99 — see README, Benchmarks).
MIN_COSINE = 0.95
MIN_MEAN_COSINE = 0.98
#: Sessions that run texts side by side (:mod:`explorer.embedding.lanes`), at most one per core.
#: Each e5 session costs ~123 MB of RSS (1 → 4 sessions: 491 → 858 MB measured), and ONNX Runtime's
#: Python API cannot share prepacked weights between sessions, so more cores mean more threads per
#: session, not more sessions.
MAX_LANES = 4
PROBES = (
    "How do I report a deviation from the procedure?",
    "The quick brown fox jumps over the lazy dog near the riverbank at dawn.",
    "Comment signaler un écart de procédure au responsable qualité ?",
    "Le rapport annuel présente les résultats de l'exercice et les perspectives pour 2025.",
    "Mme Durand a présenté le budget : 3,5 M€ (+4,2 %), « une hausse maîtrisée ».",
    "Install the package, then run the command with --check to verify the chunks.",
    "x",
    "Ein kurzer deutscher Satz über Wasser und Energie.",
    " ".join(["Retrieval-augmented generation splits documents into chunks before indexing."] * 8),
)
_lock = threading.Lock()


def graph_id() -> str:
    """What the int8 graph's vectors are cached under, beside the model's name: a new build
    version or ONNX Runtime release gives (slightly) other vectors, which must not mix with the
    old ones in an index (v2 → v3 moved e5's by cosine down to 0.997)."""
    from importlib.metadata import version

    return f"onnx-int8-v{BUILD_VERSION}-ort{version('onnxruntime')}"


def build_dir(folder: Path) -> Path:
    """Where the int8 graph of the model in ``folder`` is cached (keyed by the folder's files)."""
    return model_cache_root() / "onnx" / f"{_fingerprint(folder)}-v{BUILD_VERSION}"


def _fingerprint(folder: Path) -> str:
    import onnxruntime

    return folder_fingerprint(folder, f"ort={onnxruntime.__version__}")


def ensure_onnx(folder: Path, prefix: str = "", subprocess: bool = True) -> tuple[Path, dict[str, Any]]:
    """``(model.int8.onnx, check report)`` for the model in ``folder``, built on first use (in a
    child process: the export peaks at several GB for e5's 250,000-word vocabulary).
    Raises :class:`ModelError` (naming the measured cosine) when the build fails its check."""
    target = build_dir(folder)
    report_file = target / "check.json"
    if subprocess and not report_file.is_file():
        run_child("explorer.embedding.onnx_backend", str(folder), prefix)
    with _lock:
        if report_file.is_file():
            report = json.loads(report_file.read_text())
            if not report.get("passed"):
                raise ModelError(report.get("why", "the ONNX build failed its check"))
            return target / "model.int8.onnx", report
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
        try:
            report = _build(folder, tmp, prefix)
            (tmp / "check.json").write_text(json.dumps(report, indent=1))
            (tmp / "model.fp32.onnx").unlink(missing_ok=True)
            (tmp / "model.opt.onnx").unlink(missing_ok=True)
            publish(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if not report["passed"]:
        raise ModelError(report["why"])
    return target / "model.int8.onnx", report


def _build(folder: Path, out: Path, prefix: str) -> dict[str, Any]:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    offline()
    from transformers import AutoModel

    bert = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    cfg = bert.config
    fp32, opt, int8 = out / "model.fp32.onnx", out / "model.opt.onnx", out / "model.int8.onnx"
    ids = torch.ones((2, 8), dtype=torch.long)
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _MeanPooled(bert), (ids, ids), str(fp32), input_names=["input_ids", "attention_mask"],
            output_names=["embedding", "last_hidden_state"], opset_version=17, dynamo=False,
            dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                          "embedding": {0: "batch"}, "last_hidden_state": {0: "batch", 1: "seq"}},
        )  # fmt: skip
        fused = optimize_model(
            str(fp32), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size
        )
        fused.save_model_to_file(str(opt))
        quantize_dynamic(str(opt), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": 1})  # fmt: skip
        unfused = unfuse_layer_norms_in(int8)
    tokenizer = _tokenizer(folder, int(getattr(cfg, "max_position_embeddings", 512)))
    probes = [prefix + p for p in PROBES]
    want = _torch_reference(bert, tokenizer, probes)
    runner = OnnxRunner(int8, tokenizer)
    got = runner.embed(probes)
    cos = np.sum(_unit(want) * _unit(got), axis=1)
    states = runner.token_states([e.ids for e in tokenizer.encode_batch(probes)])
    pooled = np.stack([s.mean(axis=0) for s in states])
    hidden_cos = float(np.min(np.sum(_unit(pooled) * _unit(got), axis=1)))
    report = {
        "min_cosine": round(float(cos.min()), 5),
        "mean_cosine": round(float(cos.mean()), 5),
        "probes": len(probes),
        "fusions": {k: v for k, v in fused.get_fused_operator_statistics().items() if v},
        "layer_norms_unfused": unfused,
        "bytes": int8.stat().st_size,
        "hidden_state_cosine": round(hidden_cos, 6),  # mean of last_hidden_state vs embedding
    }
    report["passed"] = report["min_cosine"] >= MIN_COSINE and report["mean_cosine"] >= MIN_MEAN_COSINE
    if report["passed"] and hidden_cos < 0.9999:
        report["passed"] = False
        report["why"] = (
            f"the ONNX graph's token states do not pool to its embedding (cosine {hidden_cos:.5f})"
        )
        return report
    if not report["passed"]:
        report["why"] = (
            f"the int8 ONNX build of {folder.name} agrees with float32 at cosine min "
            f"{report['min_cosine']:.3f} / mean {report['mean_cosine']:.3f}, under "
            f"{MIN_COSINE} / {MIN_MEAN_COSINE}: using float32"
        )
    return report


class _MeanPooled:
    """BERT + attention-masked mean pooling as one graph (normalising happens in numpy); it
    also returns the last hidden states (the graph's second output)."""

    def __new__(cls, bert: Any) -> Any:
        import torch

        class Pooled(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = bert

            def forward(self, input_ids: Any, attention_mask: Any) -> Any:
                hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9), hidden

        return Pooled().eval()


def _torch_reference(bert: Any, tokenizer: Any, texts: list[str]) -> np.ndarray:
    import torch

    pooled = _MeanPooled(bert)
    rows = []
    with torch.inference_mode():
        for t in texts:
            ids = torch.tensor([tokenizer.encode(t).ids])
            rows.append(pooled(ids, torch.ones_like(ids))[0][0].numpy())
    return np.stack(rows)


def _tokenizer(folder: Path, max_length: int) -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    limit = max_length
    cfg = folder / "sentence_bert_config.json"
    if cfg.is_file():
        limit = int(json.loads(cfg.read_text()).get("max_seq_length") or limit)
    tok.enable_truncation(min(limit, max_length))
    tok.no_padding()
    return tok


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return v / n


class OnnxRunner:
    """ONNX Runtime sessions over a mean-pooled graph: texts in, float32 vectors out.

    One session per lane (:mod:`explorer.embedding.lanes`): up to :data:`MAX_LANES` sessions,
    each with ``cores // lanes`` threads, run different texts side by side.

    Every call takes one text. Why: the int8 graph scales its activations per call, so in a
    padded batch a text's vector moved with the texts beside it (cosine down to 0.977 for MiniLM)
    and the content-hash cache kept whichever came first. One text per call makes a vector a
    function of its text alone, bitwise the same on 1 or several threads per session, so on any
    number of cores. On single-threaded lanes it is also faster (2 cores, 2 lanes: e5 0.77–0.86×
    the time of batches of 2,048 tokens, MiniLM 0.82–0.89×); on a session of 2 threads 1,000-
    character chunks take 0.90–0.99× the time of batches, but short sentences 1.46–1.60×
    (one short text does not keep two threads busy): the price of the same vector everywhere."""

    def __init__(self, path: Path, tokenizer: Any, threads: int | None = None) -> None:
        cores = max(1, threads or os.cpu_count() or 1)
        self.lanes = min(MAX_LANES, cores)
        self.threads = cores // self.lanes
        self.sessions = [_session(path, self.threads) for _ in range(self.lanes)]
        self.tokenizer = tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Mean-pooled vectors (not normalised), in the order given, one text per call (see the
        class)."""
        encs = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(encs), 0), np.float32)
        for batch, vecs in self._run("embedding", [e.ids for e in encs]):
            if out.shape[1] == 0:
                out = np.zeros((len(encs), vecs.shape[1]), np.float32)
            out[batch] = vecs
        return out

    def token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        """The last hidden state of every token of each id sequence (special tokens included,
        as given), float32 ``(len, dim)`` each, in the order given; one sequence per call, like
        :meth:`embed`."""
        out: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(ids)
        for batch, hidden in self._run("last_hidden_state", ids):
            for r, k in enumerate(batch):
                out[k] = np.array(hidden[r, : len(ids[k])], dtype=np.float32)
        return out

    def _run(self, output: str, seqs: list[list[int]]) -> list[tuple[list[int], np.ndarray]]:
        """``([index], output)`` of each of ``seqs``, one per call, run on the lanes."""
        from explorer.embedding.lanes import run_lanes
        from explorer.embedding.packed import padded_batches

        calls = list(padded_batches(seqs, 1, 1))  # one text per call (see the class)

        def work(lane: int, call: tuple[list[int], np.ndarray, np.ndarray]) -> np.ndarray:
            feed = {"input_ids": call[1], "attention_mask": call[2]}
            return self.sessions[lane].run([output], feed)[0]

        return [(c[0], out) for c, out in run_lanes(calls, work, min(self.lanes, len(calls)))]


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # idle pool threads sleep instead of spinning: on a shared server spinning threads take
    # the cores that page scripts and the web server need between two batches
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


if __name__ == "__main__":
    import logging
    import sys

    logging.disable(logging.WARNING)  # ONNX Runtime's quantiser suggests pre-processing on every run
    try:
        ensure_onnx(Path(sys.argv[1]), sys.argv[2], subprocess=False)
    except ModelError as err:
        sys.exit(f"error: {err}")
