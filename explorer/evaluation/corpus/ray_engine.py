"""The Ray engine: the corpus runner's per-document work on a Ray cluster (a local one by default).

One Ray Data pipeline streams the documents still to do: loading, question matching and chunking
run as Ray tasks (``Dataset.map`` of :func:`~explorer.evaluation.corpus.work.process_document`,
spread over the nodes), embedding as ``Dataset.map_batches`` over a pool of actors that each hold
the model (:func:`~explorer.evaluation.corpus.work.embed_works`, the local engine's code; one
actor per GPU when the cluster has GPUs, the model then moved to the GPU). The driver reads the
finished documents back in corpus order, so the index and the results file are exactly the
local engine's. The questions are embedded by the same kind of actor.

Why a module of its own: it is the only one that imports Ray, and only when ``--engine ray`` is
asked for; Ray is in ``requirements-scale.txt``, not in the app's requirements. Workers import
this package by name: on a cluster it is uploaded with the job (``runtime_env`` ``py_modules``),
while the cluster's Python must have the app's requirements and Ray; the corpus's files must be
readable at the same paths on every node (a shared file system).
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from explorer.errors import ExplorerError, LoadError, ModelError, ParamError
from explorer.evaluation.corpus.sources import Source
from explorer.evaluation.corpus.work import (
    ContextRecipe,
    DocWork,
    WorkSpec,
    embed_works,
    process_document,
    worker_context,
)
from explorer.strategies.context import Context

INSTALL_HINT = "pip install -r requirements-scale.txt"
#: Documents per batch sent to an embedding actor.
BATCH_DOCS = 16
#: Questions per batch sent to an embedding actor.
BATCH_QUERIES = 256
#: Memory a loading task reserves (its worker holds the tokenizer; a 50 MB PDF parses in less).
#: Having resources of their own, loading tasks are never fused into the embedding actors: an
#: actor never waits for a parse.
LOAD_MEMORY = 1024 * 1024 * 1024


def import_ray() -> Any:
    """Ray and Ray Data, or a ParamError saying how to install them."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise ParamError(f"--engine ray needs Ray, which is not installed here: {INSTALL_HINT}") from None
    return ray


def check_address(address: str) -> None:
    """ParamError unless something listens at ``address`` (``host:port``, ``ray://host:port``);
    ``auto`` (a cluster started on this machine) is left to Ray."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=5):
            pass
    except (OSError, ValueError) as err:
        raise ParamError(
            f"--address {address!r}: no Ray cluster reachable there ({err}); give HOST:PORT of the "
            "head node (`ray start --head` prints it) or ray://HOST:10001"
        ) from None


class _Failed:
    """An error in a worker, carried back as data and raised again by the driver."""

    KINDS: ClassVar[dict[str, type[ExplorerError]]] = {
        "LoadError": LoadError,
        "ParamError": ParamError,
        "ModelError": ModelError,
    }

    @classmethod
    def text(cls, err: ExplorerError) -> str:
        return f"{type(err).__name__}:{err}"

    @classmethod
    def raise_(cls, text: str) -> None:
        kind, _, msg = text.partition(":")
        raise cls.KINDS.get(kind, ExplorerError)(msg)


def _load_row(row: dict[str, Any], spec: WorkSpec, recipe: ContextRecipe) -> dict[str, Any]:
    """A Ray task: one document loaded, matched and chunked."""
    source: Source = pickle.loads(row["source"])
    try:
        work = process_document(source, spec, worker_context(recipe))
    except ExplorerError as err:
        return {"n": source.n, "work": b"", "error": _Failed.text(err)}
    return {"n": source.n, "work": pickle.dumps(work, protocol=5), "error": ""}


def _gpu_context(recipe: ContextRecipe) -> Context:
    """The context of an actor: on a GPU, a registered model runs under torch and moves there."""
    import ray

    if not ray.get_gpu_ids() or recipe.fake is not None:
        return worker_context(recipe)
    ctx = worker_context(replace(recipe, backend="torch") if recipe.backend == "auto" else recipe)
    emb = ctx.get_embedder()
    load = getattr(emb, "_load", None)
    model = load() if callable(load) else None
    if model is not None and hasattr(model, "to"):
        model.to("cuda")
        emb._packed = None  # type: ignore[attr-defined]  # the packed pass builds CPU tensors
    return ctx


class _EmbedDocs:
    """A Ray Data actor: holds the model, embeds batches of documents."""

    def __init__(self, spec: WorkSpec, recipe: ContextRecipe) -> None:
        self.spec = spec
        self.ctx = _gpu_context(recipe)

    def __call__(self, batch: Any) -> Any:
        ok = [i for i, e in enumerate(batch["error"]) if not e]
        works = [pickle.loads(batch["work"].iloc[i]) for i in ok]
        try:
            embed_works(works, self.spec, self.ctx)
        except ExplorerError as err:
            batch = batch.copy()
            batch["error"] = [e or _Failed.text(err) for e in batch["error"]]
            return batch
        out = list(batch["work"])
        for i, w in zip(ok, works, strict=True):
            out[i] = pickle.dumps(w, protocol=5)
        batch = batch.copy()
        batch["work"] = out
        return batch


class _EmbedQueries:
    """A Ray Data actor: holds the model, embeds batches of questions."""

    def __init__(self, recipe: ContextRecipe) -> None:
        self.ctx = _gpu_context(recipe)

    def __call__(self, batch: Any) -> Any:
        vectors = self.ctx.get_embedder().encode_queries(list(batch["text"]))
        batch = batch[["i"]].copy()
        batch["vector"] = [np.asarray(v, np.float32).tobytes() for v in vectors]
        return batch


class RayEngine:
    """Documents and questions through Ray (see the module docstring); ``address`` None starts
    a local Ray with this machine's CPUs."""

    def __init__(self, ctx: Context, spec: WorkSpec, address: str | None = None) -> None:
        self.ray = ray = import_ray()
        self.spec = spec
        self.recipe = ContextRecipe.of(ctx)
        self._started = False
        if not ray.is_initialized():
            quiet = {"logging_level": logging.ERROR, "log_to_driver": False, "include_dashboard": False}
            if address:
                _connect(ray, address, quiet)
            else:
                # "local": a new Ray of our own, even where a cluster already runs on this machine
                ray.init(address="local", num_cpus=os.cpu_count() or 2, **quiet)
            self._started = True
        resources = ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        self.cpus = int(resources.get("CPU", 1))
        data = ray.data.DataContext.get_current()
        data.execution_options.preserve_order = True
        data.enable_progress_bars = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)

    def _actors(self) -> dict[str, Any]:
        """The embedding actors' pool: one per GPU, else one per 4 CPUs (at least one)."""
        size = self.gpus or max(1, self.cpus // 4)
        # max_restarts=0: an actor that dies fails the run (it resumes with --resume) rather
        # than restarting from arguments the object store may have dropped
        args: dict[str, Any] = {"compute": self.ray.data.ActorPoolStrategy(size=size), "max_restarts": 0}
        if self.gpus:
            args["num_gpus"] = 1
        return args

    def documents(self, todo: Sequence[Source]) -> Iterator[DocWork]:
        ray = self.ray
        items = [{"n": s.n, "source": pickle.dumps(s)} for s in todo]
        ds = ray.data.from_items(items)
        ds = ds.map(_load_row, fn_kwargs={"spec": self.spec, "recipe": self.recipe}, memory=LOAD_MEMORY)
        ds = _map_batches(
            ds,
            _EmbedDocs,
            fn_constructor_kwargs={"spec": self.spec, "recipe": self.recipe},
            batch_size=BATCH_DOCS,
            batch_format="pandas",
            **self._actors(),
        )
        due = iter(s.n for s in todo)
        want = next(due, None)
        waiting: dict[int, DocWork] = {}
        for row in ds.iter_rows():
            if row["error"]:
                _Failed.raise_(row["error"])
            work: DocWork = pickle.loads(row["work"])
            waiting[work.n] = work
            while want is not None and want in waiting:
                yield waiting.pop(want)
                want = next(due, None)

    def queries(self, texts: list[str]) -> np.ndarray:
        ray = self.ray
        ds = ray.data.from_items([{"i": i, "text": t} for i, t in enumerate(texts)])
        ds = _map_batches(
            ds,
            _EmbedQueries,
            fn_constructor_kwargs={"recipe": self.recipe},
            batch_size=BATCH_QUERIES,
            batch_format="pandas",
            **self._actors(),
        )
        rows = sorted(ds.iter_rows(), key=lambda r: r["i"])
        return (
            np.stack([np.frombuffer(r["vector"], np.float32) for r in rows])
            if rows
            else np.zeros((0, 1), np.float32)
        )

    def close(self) -> None:
        if self._started:
            self.ray.shutdown()
            self._started = False


def _connect(ray: Any, address: str, options: dict[str, Any]) -> None:
    """``ray.init`` on the cluster at ``address``, its native log lines held back (a failed
    connection retries for seconds, a line each time): a failure is one ParamError."""
    check_address(address)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as held:
            os.dup2(held.fileno(), 2)
            try:
                ray.init(address=address, runtime_env=_runtime_env(), **options)
            finally:
                os.dup2(saved, 2)
    except (ConnectionError, RuntimeError) as err:
        raise ParamError(f"--address {address!r}: {err}{_auth_hint(err)}") from None
    finally:
        os.close(saved)


def _auth_hint(err: BaseException) -> str:
    """What to do when the cluster refused us for want of its token."""
    chain: list[str] = []
    cause: BaseException | None = err
    while cause is not None and len(chain) < 10:
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    if not any("Auth" in c for c in chain) or os.environ.get("RAY_AUTH_MODE") == "token":
        return ""
    return (
        "; the cluster asks for its token: export RAY_AUTH_MODE=token and RAY_AUTH_TOKEN "
        "(`ray get-auth-token` on the head node prints it)"
    )


def _map_batches(ds: Any, fn: Any, **kwargs: Any) -> Any:
    """``ds.map_batches`` without the warning that ``max_restarts`` is passed the old way (Ray
    2.60 names no parameter for it)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
        return ds.map_batches(fn, **kwargs)


def _runtime_env() -> dict[str, Any]:
    """What a cluster's workers get with the job: this package (uploaded), the offline switches."""
    package = str(Path(__file__).resolve().parents[2])
    env = {k: os.environ[k] for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if k in os.environ}
    return {"py_modules": [package], "env_vars": env}
