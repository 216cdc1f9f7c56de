"""Measurements on the plant and the bench: a vehicle's handling (``handling``), the
robot driver's loop margins on the dyno (``margins``: ``LoopModel``, ``loop_margins``,
``time_domain_delay_margin``) and the cross-check against CommonRoad's published vehicle
models (``validation``, the validation extra).

``vdsim_gym.analysis`` was the loop-margins module: its names stay importable from here
(loaded on first use).
"""

from __future__ import annotations

from typing import Any

_MARGINS = ("LOOP_MODES", "LoopMargins", "LoopModel", "loop_margins", "settles",
            "time_domain_delay_margin")


def __getattr__(name: str) -> Any:
    if name in _MARGINS:
        from vdsim_gym.analysis import margins

        return getattr(margins, name)
    raise AttributeError(f"module 'vdsim_gym.analysis' has no attribute {name!r}")


__all__ = list(_MARGINS)
