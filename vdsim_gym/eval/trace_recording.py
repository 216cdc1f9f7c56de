"""``ClosedLoopEval(trace_path=...)``: the run recorded by the plant's session every
``decimation`` substeps (at least 100 Hz by default) and written as a .vdtrace whatever
ends the run (docs/TRACES.md). Mode B and C traces carry the timing of the command in
force on each row; the reference path (and a path env's cones) go in as overlays.
Ctrl-C and SIGTERM are held while the trace is written (``signals_held``) and raised
after, so an interrupt never costs the trace of what ran."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._checks import check_decimation
from vdsim_gym._signals import signals_held
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import nearest_ticks
from vdsim_gym.traces.recording import (
    check_trace_channels,
    course_overlays,
    default_decimation,
    dyno_channels,
    timing_channels,
    vehicle_channels,
    write_trace,
)


class EvalTrace:
    def __init__(self, path: str | Path, channels: Sequence[str], decimation: int | None,
                 driver: Any) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ConfigError(f"trace_path {str(path)!r} is a folder; give a file path such "
                              "as runs/a.vdtrace")
        self.channels = check_trace_channels(channels)
        self.decimation = default_decimation(driver.substep_dt, driver.ticks_per_period) \
            if decimation is None else check_decimation(decimation, "trace_decimation")

    @staticmethod
    def session(driver: Any) -> Any:
        """The session the run ticks: the Plant's, or the env core's."""
        session = getattr(driver, "session", None)
        return session if session is not None else driver.base.core.session

    @staticmethod
    def _physics(driver: Any) -> Any:
        plant = getattr(driver, "plant", None)
        return plant.physics if plant is not None else driver.base.physics

    def write_held(self, session: Any, ev: Any, result_of: Callable[[], Any]) -> Path:
        """``write`` of ``result_of()`` with SIGINT and SIGTERM held until the trace is
        written (``signals_held``), then raised: an interrupt never costs the trace of
        what ran. An interrupt that came just before the hold began (nothing written yet)
        is raised after the trace is written."""
        session.trace_decimation = 0  # the session records nothing after this run
        early: KeyboardInterrupt | None = None
        started = False
        while not started:
            try:
                with signals_held():
                    started = True
                    path = self.write(session, ev, result_of())
            except KeyboardInterrupt as exc:
                if started:  # the held signal, once the trace was written (or failed)
                    raise
                early = early or exc  # before the hold began: nothing written yet
        if early is not None:
            raise early
        return path

    def write(self, session: Any, ev: Any, result: Any) -> Path:
        """Writes what ran; ``result`` None: the run ended by an exception (the state and
        command channels of what ran, no timing channels)."""
        d = ev._driver
        session.record_trace_row()  # the closing row at the end
        rows = session.take_trace()
        physics = self._physics(d)
        if physics.level == "dyno":
            channels = dyno_channels(rows, physics.longitudinal)
        else:
            channels = vehicle_channels(rows, physics.level, physics.longitudinal,
                                        self.channels)
        timing = None
        if result is None:
            meta = {"eval_mode": ev.mode, "overrun_policy": ev.overrun,
                    "latency_model": None if ev.latency is None else ev.latency.describe(),
                    **d.meta()}
            stopped, t_stop = True, float(session.time)
        else:
            meta = result.meta
            stopped, t_stop = result.stats["stopped_early"], result.stats["t_stop"]
            if ev.mode != "sync":
                s = result.samples
                dt = d.substep_dt
                samples = [{"apply_tick": nearest_ticks(ta, dt)[0], "t_sample": ts, "c_k": c,
                            "overrun": o}
                           for ta, ts, c, o, ok in zip(s["t_apply"], s["t_sample"], s["c_k"],
                                                       s["overrun"], s["applied"], strict=True)
                           if ok]
                timing = timing_channels(rows[:, 0], samples, dt)
        overlays = []
        if ev.reference_path is not None:
            overlays.append({"name": "reference", "kind": "path2d",
                             "points": np.asarray(ev.reference_path)})
        course = getattr(getattr(d, "base", None), "course", None)
        if course is not None:
            overlays = course_overlays(course)
        return write_trace(self.path, channels, meta=meta, physics=physics,
                           decimation=self.decimation, seed=getattr(d, "seed", None),
                           timing=timing, stopped_early=stopped, t_stop=t_stop,
                           overlays=overlays)


__all__ = ["EvalTrace"]
