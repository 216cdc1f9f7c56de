"""Where batches run: in this process, or as Ray tasks; and the progress bar over them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps.grid import _Job
from vdsim_gym.eval.sweeps.results import SweepRow
from vdsim_gym.eval.sweeps.runner import _run_batch, _run_chunk

RAY_MISSING = "backend='ray' needs Ray: pip install 'vdsim-gym[ray]'"


class _Progress:
    """tqdm when installed and stderr is a terminal, else a line per finished batch (at
    most ~20 lines: a log file or a pipe gets lines, not tqdm's carriage-return redraws,
    which showed its 100 % line twice); both on stderr, so stdout keeps the tables.
    ``desc`` names the run (the CLI: which controller, k/n), since one command may start
    several bars."""

    def __init__(self, total: int, enabled: bool, desc: str | None = "sweep") -> None:
        if desc is None:
            desc = "sweep"
        if not isinstance(desc, str):
            raise ConfigError(f"progress_label must be a string or None, got {desc!r}")
        self.total, self.done, self.enabled, self.desc = total, 0, enabled, desc
        self._bar = None
        self._next_print = 0.0
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, desc=desc, unit="episode")

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
        elif self.done >= self._next_print or self.done == self.total:
            print(f"[{self.desc}] {self.done}/{self.total} episodes", file=sys.stderr,
                  flush=True)
            self._next_print = self.done + max(1, self.total // 20)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ImportError(RAY_MISSING) from exc
    return ray


def _run_local(job: _Job, batches: list[list[tuple[int, int]]], progress: _Progress
               ) -> Iterator[list[SweepRow]]:
    for batch in batches:
        rows = _run_batch(job, batch)
        progress.update(len(rows))
        yield rows


def _run_ray(job: _Job, batches: list[list[tuple[int, int]]], progress: _Progress,
             address: str | None, batches_per_task: int) -> Iterator[list[SweepRow]]:
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(_run_chunk)
        job_ref = ray.put(job)
        chunks = [batches[i:i + batches_per_task]
                  for i in range(0, len(batches), batches_per_task)]
        pending = [remote.remote(job_ref, chunk) for chunk in chunks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            rows = ray.get(ready[0])
            progress.update(len(rows))
            yield rows
    finally:
        if started:  # never shut down a Ray the caller started
            ray.shutdown()
