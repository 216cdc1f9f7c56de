"""ClosedLoopEval's env form: a policy steps a VDSim env, whose C++ env core does the rest.

``ClosedLoopEval(env=..., policy=...)`` runs here. The env's own core computes the
observation, maps the action to the plant command, keeps the command schedule and scores
the task (reward terms, cones, termination); this loop only calls the policy and supplies
the delays. Mode A runs the env without latency; mode B gives the env
``LatencyModel.measured()`` for the run and passes each sample's delay through
``set_next_delay`` (drawn from the eval's latency model in sample order, or the
policy's measured wall time), so the core's ``AsyncTimeline`` does the mode-B
arithmetic exactly as for the callback form on a Plant.

One env step is one controller sample: the trace has a row per sample (with ``skip``,
grid points whose sample was skipped have no row, unlike the callback form's per-grid
trace), and the run ends at the first sample whose call would fall at or after the end,
or when the env ends its episode (``stats["outcome"]``).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_policy_action
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import ConfigError, InvalidActionError
from vdsim_gym.eval.driver import STATE_COLUMNS
from vdsim_gym.eval.result import ControllerError, _Samples
from vdsim_gym.sim.latency import LatencyModel, NetworkModel
from vdsim_gym.sim.plant import COMMAND_COLUMNS, StateColumns


class EnvPolicyRun:
    """One evaluation of ``policy`` (SB3-style ``predict``) on ``env`` (a VDSim CoreEnv)."""

    def __init__(self, env: gym.Env, policy: Any, seed: int, end_tick: int,
                 latency: LatencyModel | None, overrun: str | None,
                 obs_delay: LatencyModel | None = None,
                 network: NetworkModel | None = None) -> None:
        self.env, self.policy, self.seed = env, policy, seed
        self.base: CoreEnv = env.unwrapped  # type: ignore[assignment]  # ClosedLoopEval checked it
        self.end_tick = end_tick
        self.latency, self.overrun = latency, overrun
        self.obs_delay = obs_delay  # ClosedLoopEval's sensor delay, set on the env per run
        self.used_obs_delay: LatencyModel | None = None  # the run's (the env's own or that)
        self.network = network  # likewise, a network set on the env for the run
        self.substep_dt: float = self.base.substep_dt
        self.ticks_per_period: int = self.base.ticks_per_period
        names = self.base.action_names
        # The vehicle's longitudinal mode names its column; the dyno's action is a
        # reference or the pedal (u_reference, u_pedal).
        self.lon_column = COMMAND_COLUMNS.get(self.base.longitudinal, "u_longitudinal")
        self.command_columns: tuple[str, ...] = ("u_steer", self.lon_column) \
            if names == ("steer", "longitudinal") else tuple(f"u_{n}" for n in names)
        # Float info columns of the task (e_y, s, t for a path env) go into the trace.
        self.info_columns = tuple(k for k, tp in type(self.base).INFO_KEYS if tp is float
                                  and k != "t")
        self.trace_columns: tuple[str, ...] = STATE_COLUMNS + self.info_columns

    def _command(self, action: np.ndarray) -> tuple[float, ...]:
        to_command = getattr(self.base, "action_to_command", None)
        if to_command is None:
            return tuple(action.tolist())
        return tuple(to_command(action))

    def _predict(self, obs: np.ndarray, first: bool, k: int, t: float) -> tuple[Any, float]:
        t0 = time.perf_counter()
        try:
            action, _ = self.policy.predict(obs, episode_start=np.array([first]),
                                            deterministic=True)
        except Exception as err:
            raise ControllerError(
                f"policy raised at sample k={k}, t={t:.6g} s: {type(err).__name__}: {err}",
                k, t) from err
        wall = time.perf_counter() - t0
        try:  # SB3's convention for Box actions: predict's output is clipped to the space
            return check_policy_action(action, len(self.base.action_names)), wall
        except InvalidActionError as err:
            raise InvalidActionError(f"policy output at sample k={k}, t={t:.6g} s: {err}") \
                from None

    def run(self, stop: threading.Event) -> tuple[list[tuple], _Samples, int, bool,
                                                  dict[str, Any]]:
        base = self.base
        timed = self.latency is not None
        if timed:
            base.configure_latency(LatencyModel.measured(), self.overrun or "skip")
        if self.obs_delay is not None:
            base.configure_obs_delay(self.obs_delay)
        if self.network is not None:
            base.configure_network(self.network)
        try:
            return self._loop(stop, timed)
        finally:
            if timed:  # the env is handed back as it came (no latency; reset needed)
                base.configure_latency(None)
            if self.obs_delay is not None:
                base.configure_obs_delay(None)
            if self.network is not None:
                base.configure_network(None)

    def _loop(self, stop: threading.Event, timed: bool) -> tuple:
        base, env, dt, end = self.base, self.env, self.substep_dt, self.end_tick
        core = base.core
        latency = self.latency
        measured = latency is not None and latency.kind == "measured"
        sampler = latency.sampler() if latency is not None and not measured else None
        obs, info = env.reset(seed=self.seed)
        self.used_obs_delay = base.obs_delay  # the env's sensor delay (its own or the eval's)
        aged = base.obs_delay is not None
        networked = base.network is not None  # only a network discards commands
        age = {"obs_age": 0.0} if aged else {}  # of the observation the policy sees next
        rows: list[tuple] = []
        samples = _Samples()
        by_sample: dict[int, dict[str, Any]] = {}  # sample tick -> its samples row
        waiting: list[dict[str, Any]] = []  # rows whose command has not applied yet
        initial = (0.0,) * len(self.command_columns)  # the plant's command after reset
        stopped, first, summary = False, True, {"outcome": None}
        while True:
            now = core.tick
            k, call_tick, t_start = core.next_sample
            if stop.is_set():
                end, stopped = now, True
                break
            if call_tick >= end:
                break
            state = self._state_row(info)
            t_sample = now * dt
            action, wall = self._predict(obs, first, k, t_sample)
            first = False
            command = self._command(action)
            c = wall if measured else (sampler.draw() if sampler is not None else 0.0)
            if not (math.isfinite(c) and c >= 0.0):
                raise ConfigError(f"latency model gave c_k={c!r} at sample k={k}; delays must "
                                  "be finite and >= 0 s")
            if stop.is_set():  # stopped during the call: not applied, no step
                samples.add(k=k, t_sample=t_sample, t_start=t_start, t_call=call_tick * dt,
                            c_k=c, apply_tick=call_tick, overrun=False, command=command,
                            t_compute_s=wall, stopping=True)
                end, stopped = now, True
                break
            if timed:
                base.set_next_delay(c)
            # The core's schedule says which command acts during substep `now` among those
            # sent before; this step's own one does if it applies at once (sent last, it
            # is applied last at its tick).
            before = core.command_in_force(now)[0]
            obs, _, terminated, truncated, info = env.step(action)
            # The env reports its timing keys with a latency model or a network (which
            # may lose a command: apply_tick -1, never applied).
            apply_tick = info.get("apply_tick", now) if timed or "apply_tick" in info else now
            lost = bool(info.get("lost", False))
            row = samples.add(k=k, t_sample=t_sample, t_start=t_start, t_call=call_tick * dt,
                              c_k=c, apply_tick=apply_tick,
                              overrun=bool(info.get("overrun", False)), command=command,
                              t_compute_s=wall, lost=lost, **age)
            if aged:
                age = {"obs_age": float(info["obs_age"])}
            by_sample[now] = row
            in_force = row if 0 <= apply_tick <= now else by_sample.get(before)
            if networked and not lost and apply_tick >= 0:
                # A delivered command discards the pending ones due after it (the
                # network's rule, CommandSchedule.discard_after): overtaken, they never act.
                for w in waiting:
                    if w["apply_tick"] > apply_tick:
                        w["discarded"] = True
                waiting = [w for w in waiting if not w.get("discarded")]
                waiting.append(row)
                waiting = [w for w in waiting if w["apply_tick"] > core.tick]
            rows.append((t_sample, state, initial if in_force is None else in_force["command"],
                         in_force))
            if terminated or truncated:
                summary = {"outcome": info["outcome"], **info.get("episode_summary", {})}
                break
        if not stopped:  # the simulated time reached (a step can end past the duration)
            end = core.tick
        rows.append((core.tick * dt, self._state_row(info), None, None))
        return rows, samples, end, stopped, summary

    def _state_row(self, info: dict[str, Any]) -> tuple[float, ...]:
        extra = tuple(float(info.get(c, math.nan)) for c in self.info_columns)
        session = getattr(self.base.core, "session", None)
        if StateColumns.reads(session):  # the vehicle: its columns read directly
            columns = self.__dict__.get("_columns")
            if columns is None or columns.session is not session:
                columns = self._columns = StateColumns(session)
            return columns() + extra
        observe = getattr(self.base, "plant_observation", None)
        plant = observe() if observe is not None else {}
        return tuple(plant.get(c, math.nan) for c in STATE_COLUMNS) + extra

    def meta(self) -> dict[str, Any]:
        from vdsim_gym.traces.provenance import plant_meta

        return plant_meta(self.base.physics, None, None)


__all__ = ["EnvPolicyRun"]
