"""Shared fixtures."""

from __future__ import annotations

import builtins
from collections.abc import Callable

import pytest


@pytest.fixture
def block_import(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``block_import("tqdm")``: importing that package (or its submodules) raises
    ImportError for the rest of the test, as if it were not installed."""
    real_import = builtins.__import__
    blocked: set[str] = set()

    def fake(name, *args, **kwargs):
        if name.split(".")[0] in blocked:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    def block(package: str) -> None:
        blocked.add(package)
        monkeypatch.setattr(builtins, "__import__", fake)

    return block
