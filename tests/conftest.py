"""Shared fixtures."""

from __future__ import annotations

import builtins
import signal
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


@pytest.fixture
def python_sigint():
    """SIGINT raising KeyboardInterrupt (Python's default) for the test, whatever the
    runner installed (an xdist worker's may not be Python's)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def pytest_configure(config):
    """Python's SIGINT handler in every test process: pytest-xdist starts its workers with
    SIGINT ignored (its controller handles Ctrl-C), and the tests of Ctrl-C handling need
    Python's, in process and in the subprocesses they start (which inherit an ignored
    SIGINT and keep it, as under nohup)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _sigint_kept():
    """Every test leaves SIGINT's handler as it found it (a notebook's kernel client
    installs its own and kept it: the tests after it in the same worker saw another
    handler than the ones before it)."""
    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before and before is not None:
        signal.signal(signal.SIGINT, before)
