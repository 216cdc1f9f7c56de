"""Refactors leave seeded rollouts bit-identical: digests against tests/golden/rollouts.json.

The file holds one record per machine (``python tests/golden/rollouts.py`` on the commit
before a refactor); digests are only comparable where the CPU features and numpy/libc
match (see the recorder's docstring), so elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "golden_rollouts", Path(__file__).parent / "golden" / "rollouts.py")
golden = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(golden)


def test_golden_rollouts_are_bit_identical():
    here = golden.fingerprint()
    records = golden.load()
    data = next((r for r in records if r["fingerprint"] == here), None)
    if data is None:
        pytest.skip(f"golden digests were recorded on {[r['fingerprint'] for r in records]}, "
                    f"this machine is {here}: add its record with `python "
                    "tests/golden/rollouts.py` on a commit known to be right")
    now = golden.compute()
    # A record made before a case was added lacks it (compared where recorded); a case
    # that disappeared is an error.
    assert set(data["digests"]) <= set(now), sorted(set(data["digests"]) - set(now))
    changed = sorted(k for k in data["digests"] if now[k] != data["digests"][k])
    assert not changed, f"rollouts changed (recorded at {data['recorded_at']}): {changed}"
