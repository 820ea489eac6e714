"""The redesign moved code, not cuts: every strategy's offsets match the digests saved before."""

from __future__ import annotations

import json

import pytest

from tests.support import golden

pytestmark = pytest.mark.slow


def test_every_strategy_cuts_as_before_the_redesign(chroma_dir):
    saved = json.loads(golden.FIXTURE.read_text())
    now = golden.compute()
    assert now.keys() == saved.keys()
    changed = {k: (saved[k], now[k]) for k in saved if saved[k] != now[k]}
    assert not changed, f"{len(changed)} configurations cut differently: {sorted(changed)[:5]}"
