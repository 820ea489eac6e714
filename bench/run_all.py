"""Run every benchmark in bench/ in turn (``make bench``). Each prints its own table.

Benchmarks print medians and ratios against peers run in the same process; nothing here is
asserted. Pass names to run a subset: ``python bench/run_all.py chunking sentences``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["sentences", "loaders", "encodings", "chunking", "embed", "semantic", "app", "chroma_eval"]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default, in this order: {', '.join(ORDER)})")
    names = ap.parse_args(argv).names or ORDER
    failed = []
    for name in names:
        script = HERE / (name if name.endswith(".py") else f"bench_{name}.py")
        if not script.exists():
            script = HERE / f"{name}.py"
        if not script.exists():
            print(f"no benchmark named {name!r}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"\n=== {script.name} ===", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call([sys.executable, str(script)], cwd=HERE.parent)
        print(f"--- {script.name}: exit {rc}, {time.perf_counter() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
