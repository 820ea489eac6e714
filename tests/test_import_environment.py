"""Importing the package sets the offline and thread-wait environment before anything can import
torch or transformers (they read it once, at their import)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_importing_explorer_sets_offline_and_passive_threads_first():
    code = (
        "import os, sys; import explorer; "
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, 'heavy import'; "
        "print(os.environ['OMP_WAIT_POLICY'], os.environ['HF_HUB_OFFLINE'], os.environ['TRANSFORMERS_OFFLINE'])"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["PASSIVE", "1", "1"]


def test_a_deployments_own_wait_policy_is_kept():
    code = "import os, explorer; print(os.environ['OMP_WAIT_POLICY'])"
    env = {**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"
