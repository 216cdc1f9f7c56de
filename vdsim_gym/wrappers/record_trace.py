"""RecordTrace: every episode of a VDSim env as a .vdtrace (docs/TRACES.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_decimation
from vdsim_gym._signals import signals_held
from vdsim_gym.errors import ConfigError
from vdsim_gym.traces.provenance import plant_meta
from vdsim_gym.traces.recording import (
    check_trace_channels,
    course_overlays,
    default_decimation,
    dyno_channels,
    timing_channels,
    vehicle_channels,
    write_trace,
)
from vdsim_gym.wrappers._common import vdsim_base


class RecordTrace(
    gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray], gym.utils.RecordConstructorArgs
):
    """``RecordTrace(env, path, decimation=None, channels=())``: the env core's plant
    records a row every ``decimation`` substeps (default: >= 100 Hz on the control grid;
    the dyno: every substep), and each episode is written to ``path`` when it ends
    (terminated or truncated), when the next ``reset()`` starts before it ended, at
    ``close()``, or when a ``step()`` raises (Ctrl-C included): always a complete trace of
    what ran (``stopped_early`` in its manifest when the episode had not ended), written
    atomically. ``path`` may contain ``{episode}`` (the episode count from 0), e.g.
    ``runs/dlc_{episode}.vdtrace``; without it each episode replaces the file. A path
    env's course goes in as overlays (reference, cones). With a latency model on the env,
    each row also carries the timing of the command in force (``t_sample``, ``t_apply``,
    ``c_k``, ``overrun``: the core's command schedule, as a ClosedLoopEval trace does).
    ``written`` lists the files.
    """

    def __init__(self, env: gym.Env, path: str | Path, *, decimation: int | None = None,
                 channels: tuple[str, ...] = ()) -> None:
        base = vdsim_base(env, "RecordTrace")
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self._base = base  # env.unwrapped, typed (its core may be rebuilt: read it each time)
        self.path_template = str(path)
        if Path(self.path_template).is_dir():
            raise ConfigError(f"RecordTrace path {self.path_template!r} is a folder; give a "
                             "file path such as runs/ep_{episode}.vdtrace")
        self.channels = check_trace_channels(channels)
        p = base.physics
        self.decimation = default_decimation(p.substep_dt, p.ticks_per_period) \
            if decimation is None else check_decimation(decimation)
        self.episode = -1
        self.written: list[Path] = []
        self._open = False
        self._seed: int | None = None
        self._timing: list[dict[str, Any]] = []  # the episode's applied commands

    def _session(self) -> Any:
        return self._base.core.session

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        if self._open:
            self._write(stopped=True)
        self._session().trace_decimation = self.decimation
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode += 1
        self._open, self._seed = True, seed
        self._timing = []
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        try:
            obs, reward, terminated, truncated, info = self.env.step(action)
        except (ValueError, TypeError):
            # A refused action (NaN, out of range, wrong shape) leaves the env unchanged:
            # the recording goes on. If the step failed part-way the env needs a reset,
            # and the trace is finalized as stopped.
            if self._open and getattr(self.env.unwrapped, "_needs_reset", False):
                self._write(stopped=True)
            raise
        except BaseException:  # Ctrl-C, SIGTERM: the trace so far is written
            if self._open:
                self._write(stopped=True)
            raise
        if info.get("apply_tick", -1) >= 0:  # a command scheduled (not lost)
            self._timing.append({"apply_tick": int(info["apply_tick"]),
                                 "t_sample": float(info["t_sample"]),
                                 "c_k": float(info["c_k"]), "overrun": bool(info["overrun"])})
        if (terminated or truncated) and self._open:
            info["trace_path"] = str(self._write(stopped=False))
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        if self._open:
            self._write(stopped=True)
        self._session().trace_decimation = 0
        super().close()

    def _write(self, stopped: bool) -> Path:
        """The episode's trace written with Ctrl-C and SIGTERM held until it is on disk
        (``signals_held``), then raised: a signal never costs the recorded episode."""
        self._open = False
        with signals_held():
            return self._write_now(stopped)

    def _write_now(self, stopped: bool) -> Path:
        base = self._base
        session = self._session()
        session.record_trace_row()
        rows = session.take_trace()
        p = base.physics
        if p.level == "dyno":
            channels = dyno_channels(rows, p.longitudinal)
        else:
            channels = vehicle_channels(rows, p.level, p.longitudinal, self.channels)
        meta = {"eval_mode": "env", "env_id": getattr(base.spec, "id", type(base).__name__),
                "env_seed": self._seed, **plant_meta(p, None)}
        course = getattr(base, "course", None)
        path = Path(self.path_template.format(episode=self.episode))
        timing = timing_channels(rows[:, 0], self._timing, p.substep_dt) \
            if self._timing else None
        out = write_trace(path, channels, meta=meta, physics=p, decimation=self.decimation,
                          seed=self._seed, timing=timing, stopped_early=stopped,
                          t_stop=float(session.time) if stopped else None,
                          overlays=course_overlays(course) if course is not None else ())
        self.written.append(out)
        return out


__all__ = ["RecordTrace"]
