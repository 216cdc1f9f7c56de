"""Small helpers shared by tests (on the path through pytest's ``pythonpath = tests``)."""

from __future__ import annotations

import math
from typing import Any

_NAN = "<nan>"


def canon(value: Any) -> Any:
    """``value`` with every float NaN replaced by a marker, recursively through dicts,
    lists and tuples, so that infos holding NaN (``pass_speed`` before the course end)
    compare with ``==`` (NaN != NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    if isinstance(value, dict):
        return {k: canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(canon(v) for v in value)
    return value
