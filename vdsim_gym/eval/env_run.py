"""ClosedLoopEval's modes A and B: a policy steps a VDSim env, whose C++ env core does the
rest.

``ClosedLoopEval(env=..., policy=...)`` runs here, and the callback form as a
``CallbackPolicy`` on its command env (``vdsim_gym.eval.callback``). The env's own core computes the
observation, maps the action to the plant command, keeps the command schedule and scores
the task (reward terms, cones, termination); this loop only calls the policy and supplies
the delays. Mode A runs the env without latency; mode B gives the env
``LatencyModel.measured()`` for the run and passes each sample's delay through
``set_next_delay`` (drawn from the eval's latency model in sample order, or the
policy's measured wall time), so the core's ``AsyncTimeline`` does the mode-B
arithmetic for both forms.

One env step is one controller sample: the trace has a row per sample (with ``skip``,
grid points whose sample was skipped have no row; the callback form adds a row at every
grid tick, ``grid_rows``). No step runs past the run's end (the
core's ``run_end``): the last sample is the last whose call falls before the end, the
plant then runs to the end, and the run ends there, or earlier when the env ends its
episode (``stats["outcome"]``).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

from vdsim_gym._checks import check_measured_delay, check_policy_action
from vdsim_gym.config.latency import MAX_DELAY_S, LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.config.vehicle import COMMAND_COLUMNS
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_outcome import TERMINATED, TRUNCATED
from vdsim_gym.errors import ConfigError, ControllerError, InvalidActionError
from vdsim_gym.eval.callback import CallbackPolicy
from vdsim_gym.eval.result import _Samples
from vdsim_gym.eval.result_build import RunColumns
from vdsim_gym.sim.plant import STATE_COLUMNS, StateColumns

# Wrappers gym.make adds that change nothing of a step: the env form steps the core
# directly through them (``EnvPolicyRun.fast``).
_PASSIVE_WRAPPERS = (OrderEnforcing, PassiveEnvChecker)


class EnvPolicyRun:
    """One evaluation of ``policy`` (SB3-style ``predict``) on ``env`` (a VDSim CoreEnv)."""

    def __init__(self, env: gym.Env, policy: PolicyPredictor, seed: int, end_tick: int,
                 latency: LatencyModel | None, overrun: str | None,
                 obs_delay: LatencyModel | None = None,
                 network: NetworkModel | None = None, episode_end: bool = False,
                 grid_rows: bool = False) -> None:
        self.env, self.policy, self.seed = env, policy, seed
        # A trace row at every grid tick, not only at each sample's (the callback form's
        # trace): the core records the state at the grid ticks a step passes.
        self.grid_rows = grid_rows
        # The run's end is the episode's own (ClosedLoopEval without a duration: the env's
        # time limit or its task's end): no step is cut at end_tick, which only bounds the
        # samples called (as the env ends its episode).
        self.episode_end = episode_end
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
        # The last run's output once its loop returned (before the env is handed back):
        # an interrupt during that cleanup still knows the run completed.
        self.done: tuple | None = None

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
            raise self._raised(err, k, t) from err
        wall = time.perf_counter() - t0
        return self._checked(action, k, t), wall

    def _callback_sample(self, callback: CallbackPolicy, obs: np.ndarray, rec: Any,
                         aged: bool) -> tuple[np.ndarray, float]:
        """The callback form's sample: the controller called on the observation (its wall
        time) and its command checked, as the env's action."""
        k, t = rec.next_k, rec.now * self.substep_dt
        t0 = time.perf_counter()
        try:
            raw = callback.call(obs, t, rec.age if aged else None)
        except Exception as err:
            raise ControllerError(
                f"controller raised at sample k={k}, t={t:.6g} s: {type(err).__name__}: {err}",
                k, t) from err
        wall = time.perf_counter() - t0
        try:
            return callback.action(callback.command(raw)), wall
        except InvalidActionError as err:
            raise InvalidActionError(f"controller output at sample k={k}, t={t:.6g} s: {err}") \
                from None

    @staticmethod
    def _raised(err: Exception, k: int, t: float) -> ControllerError:
        return ControllerError(
            f"policy raised at sample k={k}, t={t:.6g} s: {type(err).__name__}: {err}", k, t)

    def _checked(self, action: Any, k: int, t: float) -> np.ndarray:
        try:  # SB3's convention for Box actions: predict's output is clipped to the space
            return check_policy_action(action, len(self.base.action_names))
        except InvalidActionError as err:
            raise InvalidActionError(f"policy output at sample k={k}, t={t:.6g} s: {err}") \
                from None

    @staticmethod
    def _check_delay(c: float, k: int) -> None:
        if not (math.isfinite(c) and c >= 0.0):
            raise ConfigError(f"latency model gave c_k={c!r} at sample k={k}; delays must "
                              "be finite and >= 0 s")

    def fast(self) -> bool:
        """Whether the run can step the env's core directly (``_loop_fast``): an env whose
        core gives the trace's state columns (``CoreEnv.EVAL_STEPPER``: the vehicle envs
        and the dyno), no rendering, no wrapper that could change a step (gym.make's
        passive checkers aside) and CoreEnv's own step."""
        e: Any = self.env
        while isinstance(e, gym.Wrapper):
            if type(e) not in _PASSIVE_WRAPPERS:
                return False
            e = e.env
        base = self.base
        return (e is base and base.render_mode is None and type(base).EVAL_STEPPER
                and type(base).step is CoreEnv.step and type(base)._step is CoreEnv._step)

    def run(self, stop: threading.Event) -> tuple[list[tuple], _Samples, int, bool,
                                                  dict[str, Any]]:
        base = self.base
        self.done = None
        timed = self.latency is not None
        if timed:
            base.configure_latency(LatencyModel.measured(), self.overrun or "skip")
        if self.obs_delay is not None:
            base.configure_obs_delay(self.obs_delay)
        if self.network is not None:
            base.configure_network(self.network)
        if not self.episode_end:
            base.core.run_end = self.end_tick  # no step runs past the run's end
        try:
            self.done = self._loop_fast(stop, timed) if self.fast() else self._loop(stop, timed)
            return self.done
        finally:
            base.core.run_end = None
            if self.grid_rows:
                base.core.grid_rows = False
            if timed:  # the env is handed back as it came (no latency; reset needed)
                base.configure_latency(None)
            if self.obs_delay is not None:
                base.configure_obs_delay(None)
            if self.network is not None:
                base.configure_network(None)

    def _loop(self, stop: threading.Event, timed: bool) -> tuple:
        # The callback form's env is built by ClosedLoopEval, bare: always _loop_fast's.
        assert not isinstance(self.policy, CallbackPolicy) and not self.grid_rows
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
            self._check_delay(c, k)
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
        if not (stopped or self.episode_end) and summary["outcome"] is None:
            try:  # the plant runs from the last sample to the end
                core.run_to_end()
            except BaseException:
                base._interrupted()
                raise
        if not stopped:  # the end reached (or the episode's own end before it)
            end = core.tick
        rows.append((core.tick * dt, self._state_row(info), None, None))
        return rows, samples, end, stopped, summary

    def _loop_fast(self, stop: threading.Event, timed: bool) -> tuple:
        """``_loop``'s run with the core stepped and each sample recorded by one C++ call
        (``CoreEnv.eval_stepper``); the result's columns built from the records at the
        end. The same rows and samples as ``_loop``, bit for bit (tests/eval/
        test_eval_fast_env_form.py runs both)."""
        base, env, dt, end = self.base, self.env, self.substep_dt, self.end_tick
        latency = self.latency
        measured = latency is not None and latency.kind == "measured"
        sampler = latency.sampler() if latency is not None and not measured else None
        draw = sampler.draw if sampler is not None else None
        obs, _ = env.reset(seed=self.seed)
        self.used_obs_delay = base.obs_delay  # the env's sensor delay (its own or the eval's)
        aged = base.obs_delay is not None
        callback = self.policy if isinstance(self.policy, CallbackPolicy) else None
        if callback is not None:
            callback.reset()
        base.core.grid_rows = self.grid_rows  # (cleared: this run's rows only)
        rec = base.eval_stepper(self.info_columns, timed)
        predict = None if callback is not None else self.policy.predict
        stop_set, perf = stop.is_set, time.perf_counter
        start, rest = np.array([True]), np.array([False])
        stopping: dict[str, Any] | None = None  # the sample a stop() came during
        stopped = False
        with base.held():  # one run steps the env: no other step() meanwhile
            while True:
                if stop_set():
                    end, stopped = rec.now, True
                    break
                if rec.call_tick >= end:
                    break
                t0 = perf()
                if predict is not None:
                    try:
                        action, _ = predict(obs, episode_start=start, deterministic=True)
                    except Exception as err:
                        raise self._raised(err, rec.next_k, rec.now * dt) from err
                    wall = perf() - t0
                else:  # the callback form: its controller, its command as the action
                    assert callback is not None
                    action, wall = self._callback_sample(callback, obs, rec, aged)
                start = rest
                c = wall if measured else (draw() if draw is not None else 0.0)
                if not 0.0 <= c <= MAX_DELAY_S:  # NaN fails too
                    self._check_delay(c, rec.next_k)
                    if timed:
                        check_measured_delay(c, MAX_DELAY_S)  # set_next_delay's error
                if stop_set():  # stopped during the call: not applied, no step
                    checked = self._checked(action, rec.next_k, rec.now * dt)
                    stopping = {"k": rec.next_k, "t_sample": rec.now * dt,
                                "t_start": rec.t_start, "t_call": rec.call_tick * dt, "c_k": c,
                                "apply_tick": rec.call_tick, "command": self._command(checked),
                                "t_compute_s": wall, "obs_age": rec.age}
                    end, stopped = rec.now, True
                    break
                try:
                    nxt = rec(action, c, wall)
                    if nxt is None:  # not n finite floats: named, or converted and stepped
                        nxt = rec(self._checked(action, rec.next_k, rec.now * dt), c, wall)
                except InvalidActionError:
                    raise  # named before any step
                except BaseException:  # Ctrl-C mid-step: the env is partly advanced
                    base._interrupted()
                    raise
                obs = nxt
                if rec.flags & (TERMINATED | TRUNCATED):
                    break
            if not (stopped or self.episode_end or rec.flags & (TERMINATED | TRUNCATED)):
                try:  # the plant runs from the last sample to the end
                    rec.finish()
                except BaseException:
                    base._interrupted()
                    raise
        summary: dict[str, Any] = {"outcome": None}
        if rec.flags & (TERMINATED | TRUNCATED):
            ended = base._episode_ended(rec.flags)
            summary = {"outcome": ended["outcome"], **ended.get("episode_summary", {})}
        if not stopped:  # the end reached (or the episode's own end before it)
            end = rec.now
        columns = self._run_columns(rec, rec.now * dt, base.network is not None,
                                    base.obs_delay is not None, stopping)
        return columns, None, end, stopped, summary

    def _run_columns(self, rec: Any, t_end: float, networked: bool, aged: bool,
                     stopping: dict[str, Any] | None) -> RunColumns:
        """The run's RunColumns from the recorder (``EvalStepper.columns``, built in C++ by
        ``_loop``'s rules: the command in force of each row, the network's discards)."""
        t, states, commands, src, src_overrun, k, apply_tick, reals, flags = rec.columns(
            rec.state_now(), t_end, self.substep_dt, networked)
        n = len(k)
        samples: dict[str, np.ndarray] = {
            "k": k, "t_sample": reals[0], "t_start": reals[1], "t_call": reals[2],
            "c_k": reals[3], "apply_tick": apply_tick, "overrun": flags[0],
            **{name: reals[6 + j] for j, name in enumerate(self.command_columns)},
            "t_compute_s": reals[4], "stopping": flags[1], "discarded": flags[2],
            "lost": flags[3], "obs_age": reals[5] if aged else np.full(n, math.nan)}
        if stopping is not None:
            extra = {"k": stopping["k"], "t_sample": stopping["t_sample"],
                     "t_start": stopping["t_start"], "t_call": stopping["t_call"],
                     "c_k": stopping["c_k"], "apply_tick": stopping["apply_tick"],
                     "overrun": False, "t_compute_s": stopping["t_compute_s"],
                     "stopping": True, "discarded": False, "lost": False,
                     "obs_age": stopping["obs_age"] if aged else math.nan,
                     **dict(zip(self.command_columns, stopping["command"], strict=True))}
            samples = {key: np.append(v, np.array(extra[key], dtype=v.dtype))
                       for key, v in samples.items()}
        return RunColumns(t=t, states=states, commands=commands, src_t_sample=src[0],
                          src_t_apply=src[1], src_c_k=src[2], src_overrun=src_overrun,
                          samples=samples)

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

        policy = self.policy
        if isinstance(policy, CallbackPolicy):  # the callback form's reference point
            return plant_meta(self.base.physics, policy.ref_point, policy.ref_point_setting)
        return plant_meta(self.base.physics, None, None)


__all__ = ["EnvPolicyRun"]
