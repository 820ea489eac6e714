"""``--engine ray``: loading and chunking as Ray tasks, embedding in Ray Data actors, on a local
Ray of 2 CPUs, gives exactly the local engine's scores and results file."""

from __future__ import annotations

import json

import pytest

from bench.make_corpus import make_corpus
from tests.cli.test_cli import run_main
from tests.evaluation.test_corpus import _plain, fake_cli  # noqa: F401  (a fixture, used by name below)

ray = pytest.importorskip("ray", reason="ray is not installed: pip install -r requirements-scale.txt")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("fake_cli"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context"),
]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (the engine uses a Ray already started and leaves it up)."""
    started = not ray.is_initialized()
    if started:
        ray.init(
            address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
        )
    yield
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("raycorpus"), 24, every=1)


def _args(corpus, *rest: str) -> list[str]:
    groups = ["--strategy", "recursive", "--set", "chunk_size=300", "--strategy", "fixed"]
    return [
        "evaluate",
        "--corpus",
        str(corpus[0]),
        "--questions",
        str(corpus[1]),
        *groups,
        "--format",
        "json",
        *rest,
    ]


@pytest.mark.parametrize("retriever", ["dense", "hybrid"])
def test_ray_engine_scores_exactly_as_the_local_engine(capsysbinary, corpus, tmp_path, local_ray, retriever):
    rc, local, err = run_main(
        capsysbinary, *_args(corpus, "--retriever", retriever, "--engine", "local", "-q")
    )
    assert rc == 0, err
    out = tmp_path / "ray.jsonl"
    rc, by_ray, err = run_main(
        capsysbinary, *_args(corpus, "--retriever", retriever, "--engine", "ray", "--out", str(out))
    )
    assert rc == 0, err
    assert _plain(json.loads(by_ray)) == _plain(json.loads(local))
    assert "on the ray engine (24 processed, 0 resumed)" in err
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["n"] for x in lines if x["kind"] == "document"] == list(range(24))  # in corpus order
    rc, again, err = run_main(
        capsysbinary,
        *_args(corpus, "--retriever", retriever, "--engine", "ray", "--out", str(out), "--resume"),
    )
    assert rc == 0 and "(0 processed, 24 resumed)" in err
    assert _plain(json.loads(again)) == _plain(json.loads(local))


def test_a_bad_document_in_a_ray_task_is_one_error_line(capsysbinary, tmp_path, local_ray):
    corpus_dir, questions = make_corpus(tmp_path, 5, every=1)
    (corpus_dir / "d00" / "zz_image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    rc, _, err = run_main(capsysbinary, *_args((corpus_dir, questions), "--engine", "ray", "-q"))
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("error:") and "zz_image.txt" in err and "PNG" in err
