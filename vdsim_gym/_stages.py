"""Progress of a long measurement, stage by stage (``Stages``): a stderr line as each
stage starts, with the time so far, and a stage's answers on stdout as it finishes. The
benchmarks (``vdsim_gym.bench``) and the accuracy table (``vdsim_gym.eval.accuracy``)
report through it."""

from __future__ import annotations

import sys
import time


class Stages:
    """A stderr line as each measured configuration starts, with the time so far, and
    (``result``) a stage's answers on stdout as it finishes; the whole table comes at the
    end."""

    def __init__(self, label: str, total: int, enabled: bool = True) -> None:
        self.label, self.total, self.enabled = label, total, enabled
        self.k = 0
        self.t0 = time.perf_counter()

    def _print(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)

    def start(self, what: str) -> None:
        self.k += 1
        self._print(f"[{self.label} {self.k}/{self.total}] {what} "
                    f"(at {time.perf_counter() - self.t0:.0f} s)")

    def progress(self, steps: int) -> None:
        self._print(f"[{self.label} {self.k}/{self.total}]   {steps} steps "
                    f"(at {time.perf_counter() - self.t0:.0f} s)")

    def result(self, lines: list[str]) -> None:
        """A stage's results on stdout as it finishes (the whole report comes again at
        the end): a long run shows its answers as they come."""
        if self.enabled:
            for line in lines:
                print(f"[{self.label} {self.k}/{self.total}] {line}", flush=True)

    def done(self) -> None:
        self._print(f"[{self.label}] done in {time.perf_counter() - self.t0:.1f} s")


__all__ = ["Stages"]
