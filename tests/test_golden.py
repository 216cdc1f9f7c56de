"""Refactors leave seeded rollouts bit-identical: digests against tests/golden/rollouts.json.

The file is recorded on one machine (``python tests/golden/rollouts.py`` on the commit
before a refactor); digests are only comparable where the CPU features and numpy/libc
match (see the recorder's docstring), so elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "golden_rollouts", Path(__file__).parent / "golden" / "rollouts.py")
golden = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(golden)


def test_golden_rollouts_are_bit_identical():
    data = json.loads(golden.FILE.read_text())
    here = golden.fingerprint()
    if data["fingerprint"] != here:
        pytest.skip(f"golden digests were recorded on {data['fingerprint']}, this machine is "
                    f"{here}: re-record with `python tests/golden/rollouts.py` on a commit "
                    "known to be right")
    now = golden.compute()
    assert set(now) == set(data["digests"])
    changed = sorted(k for k in now if now[k] != data["digests"][k])
    assert not changed, f"rollouts changed (recorded at {data['recorded_at']}): {changed}"
