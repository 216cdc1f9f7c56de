"""SIGTERM as Ctrl-C: a scheduler's stop or ``kill`` raises KeyboardInterrupt in the main
thread, so the work in progress is finalized (a run folder, a trace) as on Ctrl-C,
instead of the process dying with nothing written; and ``signals_held``: both held while
a file that finalizes work is written, then raised."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
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


HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_held(note: str = "", raise_after: bool = True) -> Iterator[None]:
    """SIGINT and SIGTERM held while the block runs, so that the files it writes are
    written whole (on the main thread; elsewhere no signal is handled): one that comes is
    recorded (and ``note``, if given, printed once on stderr), and when the block ends
    its own handler runs (Ctrl-C's and ``sigterm_as_interrupt``'s raise
    KeyboardInterrupt; ``raise_after=False``: not, for a block that runs while a stop is
    already under way). Signals whose handler is not Python's (ignored, the default
    action, one installed outside Python) are left as they are."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    previous: dict[int, Callable[..., Any]] = {}

    def hold(signum: int, frame: Any) -> None:
        if note and not got:
            sys.stderr.write(f"{note}\n")
            sys.stderr.flush()
        got.append(signum)

    def release() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if got and raise_after:  # the first held signal, handled now as it would have been
            previous[got[0]](got[0], None)

    try:
        for sig in HELD_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):
                previous[sig] = signal.signal(sig, hold)  # type: ignore[assignment]
        yield
    except BaseException:
        release()  # a held signal's KeyboardInterrupt, chained to the error, or the error
        raise
    release()


@contextlib.contextmanager
def signals_call(stop: Callable[[], None]) -> Iterator[list[int]]:
    """While the block runs (on the main thread), SIGINT and SIGTERM call ``stop`` (a
    run's stop request) instead of raising: the run ends in order and returns what it
    did; the block gets the list of signals that came, so the caller can raise after its
    files are written. Signals whose handler is not Python's are left as they are."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    previous: dict[signal.Signals, Any] = {}

    def handler(signum: int, frame: Any) -> None:
        got.append(signum)
        stop()

    handler._vdsim_sigterm = True  # type: ignore[attr-defined]  # nested: left in place
    try:
        for sig in HELD_SIGNALS:
            if callable(signal.getsignal(sig)):
                previous[sig] = signal.signal(sig, handler)
        yield got
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


__all__ = ["HELD_SIGNALS", "raise_on_sigterm", "restore_sigterm", "signals_call",
           "sigterm_as_interrupt", "signals_held"]
