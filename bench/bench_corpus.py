"""The corpus runner end to end on a generated corpus: time, peak memory, and an interrupted run
resumed without doing a finished document again.

    python bench/bench_corpus.py [--docs 10000] [--retriever bm25] [--engine local] [--kill-at 0.4]

1. generates ``--docs`` documents and their questions (bench/make_corpus.py; kept between runs);
2. evaluates them in one go (``python -m explorer evaluate --corpus DIR --out full.jsonl``),
   progress shown as it goes: wall time and the child's peak RSS (``wait4``'s ru_maxrss);
3. starts the same run on a new results file, kills it (SIGKILL) once ``--kill-at`` of the
   documents are finished, runs it again with ``--resume``, and checks that every document is in
   the results file once, that the resumed run processed only the others, and that its scores are
   the uninterrupted run's.

Dense retrieval embeds every chunk with the model (about 100-160 chunks a second on 2 CPU cores),
so 10,000 documents (~50,000 chunks) take the better part of an hour there; BM25 (the default
here) embeds nothing and runs the whole pipeline otherwise. Nothing is asserted; the figures are
printed (and written as JSON with ``--json FILE``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from make_corpus import make_corpus  # noqa: E402

TIMING = ("seconds", "embed_seconds", "from_cache", "with_model_load", "cold")


class Child:
    """``python -m explorer ...`` with its stderr echoed and kept, measured by ``wait4``."""

    def __init__(self, argv: list[str], cache: Path) -> None:
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "CHUNK_EXPLORER_CACHE": str(cache),
        }
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "explorer", *argv],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.err: list[str] = []
        self.out = b""
        self._threads = [
            threading.Thread(target=self._echo, daemon=True),
            threading.Thread(target=self._read_out, daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _echo(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.err.append(line)
            sys.stderr.write("    " + line)
            sys.stderr.flush()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        self.out = self.proc.stdout.read()

    def wait(self) -> dict:
        if self.proc.returncode is None:
            _, status, usage = os.wait4(self.proc.pid, 0)
            self.proc.returncode = os.waitstatus_to_exitcode(status)
            peak = usage.ru_maxrss
        else:  # already reaped by poll(): the largest child so far
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        for t in self._threads:
            t.join()
        return {
            "rc": self.proc.returncode,
            "seconds": round(time.perf_counter() - self.t0, 1),
            "peak_rss_mb": round(peak / 1024, 1),  # ru_maxrss is in KiB on Linux
        }


def _doc_lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if '"kind": "document"' in line:
            with contextlib.suppress(ValueError):  # the line the kill cut
                out.append(json.loads(line)["source"])
    return out


def _plain(raw: bytes) -> list[dict]:
    results = json.loads(raw)
    for d in results:
        for key in TIMING:
            d.pop(key, None)
            if isinstance(d.get("cost"), dict):
                d["cost"].pop(key, None)
    return results


def _counts(err: list[str]) -> str:
    notes = [line for line in err if line.startswith("note:") and "processed" in line]
    return notes[-1].strip() if notes else ""


def run(args: argparse.Namespace) -> dict:
    work = Path(args.dir)
    corpus, questions = work / "corpus", work / "questions.jsonl"
    t0 = time.perf_counter()
    if not questions.exists() or len(list(corpus.rglob("*.txt"))) != args.docs:
        print(f"generating {args.docs:,} documents in {corpus} ...", flush=True)
        make_corpus(work, args.docs, every=args.every)
    gen_s = time.perf_counter() - t0
    base = ["evaluate", "--corpus", str(corpus), "--questions", str(questions), "--retriever", args.retriever,
            "--engine", args.engine, "--format", "json", *args.extra]  # fmt: skip
    report: dict = {"documents": args.docs, "questions": sum(1 for _ in questions.open()), "retriever": args.retriever,
                    "engine": args.engine, "generate_s": round(gen_s, 1)}  # fmt: skip

    full_out = work / "full.jsonl"
    for p in (full_out, work / "cut.jsonl"):
        if p.exists():
            p.unlink()
    # each run starts with an empty embedding cache (the resumed run shares the killed run's)
    subprocess.run(
        ["rm", "-rf", f"{full_out}.chunks", f"{work}/cut.jsonl.chunks", f"{work}/cache"], check=True
    )
    print(f"\n== full run ({args.retriever}, {args.engine}) ==", flush=True)
    full = Child([*base, "--out", str(full_out)], work / "cache" / "full")
    report["full"] = {**full.wait(), "note": _counts(full.err)}

    print(f"\n== interrupted run: SIGKILL at {args.kill_at:.0%} of the documents ==", flush=True)
    cut_out = work / "cut.jsonl"
    cut = Child([*base, "--out", str(cut_out)], work / "cache" / "cut")
    target = int(args.docs * args.kill_at)
    while cut.proc.poll() is None and len(_doc_lines(cut_out)) < target:
        time.sleep(0.2)
    cut.proc.send_signal(signal.SIGKILL)
    killed = cut.wait()
    finished = _doc_lines(cut_out)
    report["killed"] = {**killed, "finished_documents": len(finished)}

    print("\n== resumed run ==", flush=True)
    again = Child([*base, "--out", str(cut_out), "--resume"], work / "cache" / "cut")
    resumed = again.wait()
    sources = _doc_lines(cut_out)
    report["resumed"] = {
        **resumed,
        "note": _counts(again.err),
        "expected_processed": args.docs - len(finished),
        "each_document_once": len(sources) == len(set(sources)) == args.docs,
        "same_scores_as_full_run": full.proc.returncode == 0 and _plain(again.out) == _plain(full.out),
    }
    report["scores"] = [
        {k: r[k] for k in ("strategy", "chunks", "recall", "precision", "iou", "hit_rate", "mrr")}
        for r in json.loads(full.out)
    ]
    return report


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=10_000)
    p.add_argument("--every", type=int, default=10, help="one question every N documents")
    p.add_argument("--retriever", default="bm25", choices=("dense", "bm25", "hybrid"))
    p.add_argument("--engine", default="local", choices=("local", "ray"))
    p.add_argument("--kill-at", type=float, default=0.4, help="fraction of the documents done when killed")
    p.add_argument("--dir", default="/tmp/chunk-explorer-corpus-bench")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("extra", nargs="*", help="more `evaluate` options, after --")
    args = p.parse_args()
    report = run(args)
    text = json.dumps(report, indent=2)
    print("\n" + text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
