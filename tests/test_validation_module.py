"""vdsim_gym.analysis.validation without the validation extra: importable, and a clear error
naming the extra when CommonRoad's models are needed (the comparisons themselves run
under ``pytest -m validation``: tests/test_validation_commonroad.py)."""

from __future__ import annotations

import sys

import pytest


def test_validation_names_the_extra_when_commonroad_is_missing(monkeypatch) -> None:
    from vdsim_gym.analysis import validation

    monkeypatch.setitem(sys.modules, "vehiclemodels", None)  # import raises ImportError
    with pytest.raises(ImportError, match=r"pip install 'vdsim-gym\[validation\]'"):
        validation.commonroad_vehicle()
    with pytest.raises(ImportError, match=r"vdsim-gym\[validation\]"):
        validation.run_theirs("mb", "step")
