"""SIGTERM as Ctrl-C: a scheduler's stop or ``kill`` raises KeyboardInterrupt in the main
thread, so the work in progress is finalized (a run folder, a trace) as on Ctrl-C,
instead of the process dying with nothing written."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any


def raise_on_sigterm() -> Any:
    """Installs the handler; returns the previous one (None off the main thread, where
    signals cannot be handled, or when SIGTERM is already handled this way)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    current = signal.getsignal(signal.SIGTERM)
    if getattr(current, "_vdsim_sigterm", False):
        return None  # nested: the outer installer restores

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    handler._vdsim_sigterm = True  # type: ignore[attr-defined]
    return signal.signal(signal.SIGTERM, handler)


def restore_sigterm(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    previous = raise_on_sigterm()
    try:
        yield
    finally:
        restore_sigterm(previous)


__all__ = ["raise_on_sigterm", "restore_sigterm", "sigterm_as_interrupt"]
