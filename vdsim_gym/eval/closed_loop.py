"""ClosedLoopEval: one controller against a simulated vehicle under a timing model.

Modes (docs/EVAL_MODES.md):

- ``"sync"`` (A): the command from the sample at t_k = k Tc applies at t_k and holds one
  period; bit for bit a plain ``Plant.step`` loop whose controller sees the observation
  in float32.
- ``"virtual_async"`` (B): the sample at t_k gives a command that applies at
  ``ceil((t_start + c_k) / substep_dt)`` ticks, c_k from a ``LatencyModel``; one worker
  computes one sample at a time; overruns follow ``overrun="skip" | "queue"``.

This module checks a run's arguments, builds its form and dispatches the run. Both forms
run on an env core, one timing engine: a policy on an env (``env=``, ``policy=``) on the
env's own; a callback (``plant_kwargs=``, ``controller=``) on a command env
(``vdsim_gym.envs.command``) through ``vdsim_gym.eval.callback.CallbackPolicy``. Modes A
and B are ``vdsim_gym.eval.env_run`` (mode B through the env's measured latency), mode C
``vdsim_gym.eval.wallclock``. Results and errors: ``vdsim_gym.eval.result``.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.config.latency import LatencyModel, check_latency, check_obs_delay, check_overrun
from vdsim_gym.config.network import NetworkModel, check_network
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.envs.command import CommandEnv
from vdsim_gym.errors import (
    ConcurrentUseError,
    ConfigError,
    ControllerError,
    UnknownKeywordError,
    UnsupportedEnvError,
)
from vdsim_gym.eval.callback import CallbackPolicy, Command, Controller
from vdsim_gym.eval.env_run import EnvPolicyRun
from vdsim_gym.eval.result import EvalResult
from vdsim_gym.eval.result_build import RunColumns, build_result_columns
from vdsim_gym.eval.trace_recording import EvalTrace
from vdsim_gym.eval.wallclock import (
    EnvWallclockDriver,
    WallclockOptions,
    WallclockRun,
    check_options,
)
from vdsim_gym.sim.plant import Plant
from vdsim_gym.timing import ceil_ticks, whole_ticks
from vdsim_gym.tracking import check_path

MODES = ("sync", "virtual_async", "wallclock")
# The callback form's plant_kwargs: Plant's keywords (control_period is the eval's own).
PLANT_KEYWORDS: tuple[str, ...] = tuple(
    p for p in inspect.signature(Plant).parameters if p != "control_period")


# The longest run [s] of simulated time: its trace and samples are held in memory (a day
# at 100 Hz of rows is about 0.5 GB).
MAX_EVAL_DURATION_S = 86_400.0
# The env form's run without a duration on an env whose episode has no end in time (no
# time limit, no task end): this many control periods.
DEFAULT_ENV_PERIODS = 500


def _check_duration(duration: Any) -> Any:
    if isinstance(duration, (int, float)) and not isinstance(duration, bool) \
            and duration > MAX_EVAL_DURATION_S:
        raise ConfigError(f"duration = {duration!r} s is longer than the bound of "
                          f"{MAX_EVAL_DURATION_S:g} s (a day of simulated time: the run's "
                          "trace is held in memory); evaluate shorter runs")
    return duration


class ClosedLoopEval:
    """Run one controller against a simulated vehicle in mode A (sync), B (virtual_async)
    or C (wallclock).

    Args (keyword-only):
        plant_kwargs: ``Plant`` keywords (level, vehicle, substep_dt, actuator, ref_point,
            longitudinal, integrator); the control period comes from ``control_period``.
        controller: ``controller(obs, t) -> (delta_rad, longitudinal)`` with obs the
            Plant observation dict at the sample time t [s] (the command env's float32
            state row; ``vdsim_gym.eval.callback``). The same callable runs unchanged in
            every mode; ``seed`` seeds its episode (a network's and a random sensor
            delay's draws).
        control_period: Tc [s], a whole multiple of substep_dt.
        mode: "sync" (A) or "virtual_async" (B).
        latency: B only: a ``LatencyModel`` (default fixed(0)); sync accepts only None
            or fixed(0) (no delay by definition).
        overrun: B only: "skip" (default) or "queue".
        duration: simulated time [s], a whole multiple of substep_dt: no step runs past
            it (default 10 s for a callback).
        reference_path: optional (M, 2) polyline; adds an ``e_y`` trace column and
            e_y_rmse_m / e_y_max_m to stats (over the grid rows that ran).
        initial_state: ``Plant.reset`` state (X, Y, psi, vx, vy, r; missing ones 0).
        env, policy, env_kwargs, seed: instead of plant_kwargs + controller, a policy with
            an SB3-style ``predict`` on a VDSim env (an id or an instance; ``env_kwargs``
            for ``gym.make``). The policy steps the env from ``reset(seed=seed)``: the
            env's C++ core computes observations, commands, reward terms and the episode
            end; mode B gives the env ``LatencyModel.measured()`` for the run and the
            delays of ``latency`` in sample order (``vdsim_gym.eval.env_run``). The trace
            has one row per sample plus the task's info columns (``e_y``, ``s`` on a path
            env); the run also ends when the env ends the episode (``stats["outcome"]``,
            ``stats["episode_summary"]``). ``duration`` defaults to the episode's own end:
            the env's time limit rounded up onto the substep grid as the env rounds it
            (both end at the same step), ``max_episode_steps`` periods, or the task's end
            drawn at reset (an ACC scenario, a dyno cycle); 500 periods without any.
            Configure latency here, not on the env.
        obs_delay: a sensor delay (``LatencyModel``; modes A and B): the controller's
            observation at sample k is the plant's at its capture tick, by the env core's
            rule (docs/ENVS.md, "Sensor delay"); on the env form it is set on the env for
            the run (or the env's own is used). ``samples["obs_age"]`` and the stats
            ``obs_age_mean_s`` / ``obs_age_max_s`` report the ages; the callback form's
            observation dict gains ``obs_age`` [s].
        network: a ``NetworkModel`` between the controller and the plant (mode B): lost
            commands never apply, overtaken ones are discarded, by the env core's rule
            (seeded with the model's seed and the episode's, ``seed``;
            ``samples["t_apply"]`` NaN for a lost one, ``stats["n_lost"]`` and
            ``stats["n_discarded"]``). On the env form it is set on the env for the run
            (or the env's own is used).

    ``run()`` returns an ``EvalResult``; ``stop()`` ends a running run early from the
    controller or any thread (a stop() before run() has no effect).
    """

    # The simulated side: mode C's driver, or the run of modes A and B (it calls its
    # policy itself; the trace and the result read its columns and meta()).
    _driver: EnvPolicyRun
    # The running run's (result builder, its arguments) once its loop returned (_loop).
    _ran: tuple | None = None

    def __init__(
        self,
        *,
        plant_kwargs: Mapping[str, Any] | None = None,
        controller: Controller | None = None,
        control_period: float | None = None,
        mode: str = "sync",
        latency: LatencyModel | None = None,
        overrun: str | None = None,
        duration: float | None = None,
        reference_path: Any = None,
        initial_state: Mapping[str, float] | None = None,
        env: str | gym.Env | None = None,
        policy: PolicyPredictor | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
        seed: int = 0,
        cpu_affinity: Mapping[str, Any] | None = None,
        watchdog: Mapping[str, Any] | None = None,
        trace_path: str | Path | None = None,
        trace_channels: Sequence[str] = (),
        trace_decimation: int | None = None,
        obs_delay: LatencyModel | None = None,
        network: NetworkModel | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
        self.mode = mode
        self.obs_delay = check_obs_delay(obs_delay)
        self.network = check_network(network)
        if self.network is not None and mode != "virtual_async":
            raise ConfigError(
                f"network= delays and drops commands between the controller and the plant: "
                f"mode='virtual_async' (with latency=LatencyModel.fixed(0), mode A's run "
                f"bit for bit), not mode={mode!r}")
        if mode != "wallclock" and (cpu_affinity is not None or watchdog is not None):
            raise ConfigError("cpu_affinity= and watchdog= apply to mode='wallclock' only")
        if mode == "wallclock" and latency is not None:
            raise ConfigError(f"mode='wallclock' measures the real delay of the controller on "
                              f"this host; a latency model ({latency!r}) is for "
                              "mode='virtual_async'. Drop latency=")
        if overrun is not None:
            check_overrun(overrun)
        if latency is not None:
            check_latency(latency)
        if mode == "sync":
            if latency is not None and latency != LatencyModel.fixed(0.0):
                raise ConfigError(
                    f"mode='sync' has no computation delay; got latency={latency!r}. "
                    "Use mode='virtual_async' to insert a latency model"
                )
            if overrun is not None:
                raise ConfigError(
                    f"mode='sync' has no computation delay, so no overruns; got "
                    f"overrun={overrun!r}. Use mode='virtual_async' with a latency model for "
                    "overrun policies, or drop overrun="
                )
            self.latency, self.overrun = None, None
        elif mode == "wallclock":
            self.latency, self.overrun = None, "skip" if overrun is None else overrun
        else:
            self.latency = LatencyModel.fixed(0.0) if latency is None else latency
            self.overrun = "skip" if overrun is None else overrun
        self._wallclock: WallclockOptions | None = None
        self._trace: EvalTrace | None = None
        trace_args = (trace_path, trace_channels, trace_decimation)
        self._env_meta: dict[str, Any] = {}
        self._stop = threading.Event()
        self._env_run: EnvPolicyRun | None = None
        if env is not None:
            self._env_meta = {"env_id": env if isinstance(env, str) else
                              getattr(getattr(env, "spec", None), "id", type(env).__name__),
                              "env_kwargs": dict(env_kwargs or {}), "env_seed": seed,
                              "policy": type(policy).__name__}
            self._init_env(env, policy, env_kwargs, seed, plant_kwargs, controller,
                           control_period, duration, reference_path, initial_state)
            if mode == "wallclock":
                driver = self._driver
                assert isinstance(driver, EnvWallclockDriver)  # _init_env's mode C
                self._wallclock = check_options(cpu_affinity, watchdog,
                                                driver.failsafe_command)
            self._init_trace(*trace_args)
            return
        if policy is not None:
            raise ConfigError("policy= runs on an env: give env='VDSim-DLC-v0' (or an env "
                              "instance) with it, or pass a callback as controller=")
        if controller is None or not callable(controller):
            extra = (" An object with an SB3-style predict() runs through an env: "
                     "ClosedLoopEval(env='VDSim-DLC-v0', policy=model)."
                     if hasattr(controller, "predict") else "")
            raise ConfigError(
                "controller must be a callable controller(obs, t) -> (delta_rad, longitudinal),"
                f" got {controller!r}.{extra}"
            )
        kwargs = dict(plant_kwargs or {})
        if "control_period" in kwargs:
            raise ConfigError(
                "give control_period to ClosedLoopEval(control_period=...), not in plant_kwargs"
            )
        unknown = sorted(set(kwargs) - set(PLANT_KEYWORDS))
        if unknown:
            raise UnknownKeywordError.of("Plant", unknown, PLANT_KEYWORDS)
        ref_point = kwargs.pop("ref_point", None)
        control_period = 0.02 if control_period is None else control_period
        env = CommandEnv(**kwargs, control_period=control_period, initial_state=initial_state)
        callback = CallbackPolicy(controller, env, ref_point)
        self._env_meta = {"env_seed": seed}
        self._init_callback(env, callback, seed, 10.0 if duration is None else duration,
                            reference_path)
        if mode == "wallclock":
            self._wallclock = check_options(cpu_affinity, watchdog,
                                            callback.check_command_within)
        self._init_trace(*trace_args)

    def _init_trace(self, path: Any, channels: Sequence[str], decimation: Any) -> None:
        if path is not None:
            self._trace = EvalTrace(path, channels, decimation, self._driver)
        elif channels or decimation is not None:
            raise ConfigError("trace_channels= and trace_decimation= need trace_path=")

    def _init_callback(self, env: CommandEnv, policy: CallbackPolicy, seed: int,
                       duration: Any, reference_path: Any) -> None:
        """The callback form: ``policy`` (the controller) drives the command env."""
        self.duration = float(duration) if isinstance(duration, (int, float)) else duration
        self._end_tick = whole_ticks(_check_duration(duration), env.substep_dt, "duration")
        self._check_delay_fits()
        self.reference_path = None if reference_path is None else check_path(reference_path)
        self._start(env, policy, seed, grid_rows=True)

    def _start(self, env: Any, policy: Any, seed: int, episode_end: bool = False,
               grid_rows: bool = False) -> None:
        """The run's simulated side: mode C's driver, or the env run of modes A and B."""
        if self.mode == "wallclock":  # the runner ticks the env core's own plant
            self._driver = EnvWallclockDriver(env, policy, seed, self._end_tick,
                                              self.obs_delay)
            return
        self._env_run = EnvPolicyRun(env, policy, seed, self._end_tick, self.latency,
                                     self.overrun, self.obs_delay, self.network, episode_end,
                                     grid_rows)
        self._driver = self._env_run  # substep_dt, ticks_per_period, columns, meta()

    def _check_delay_fits(self) -> None:
        if self.latency is not None and self.latency.reproducible \
                and self.latency.max_delay > self.duration:
            raise ConfigError(
                f"latency {self.latency} can delay a command by up to "
                f"{self.latency.max_delay:g} s, longer than the run (duration={self.duration:g}"
                " s): no such command would ever apply; use a longer duration or a shorter "
                "delay (delays are in seconds)")

    def _init_env(self, env: str | gym.Env, policy: PolicyPredictor | None,
                  env_kwargs: Mapping[str, Any] | None,
                  seed: int, plant_kwargs: Any, controller: Any, control_period: Any,
                  duration: Any, reference_path: Any, initial_state: Any) -> None:
        """The env form: ``policy`` steps ``env`` (its core does the task; env_run)."""
        if plant_kwargs is not None or controller is not None:
            raise ConfigError("give either env= and policy=, or plant_kwargs= and controller=, "
                              "not both")
        if reference_path is not None or initial_state is not None:
            raise ConfigError("with env= the env gives the course and the start state "
                              "(reset(seed=seed)); reference_path= and initial_state= apply "
                              "to the Plant form (plant_kwargs= and controller=)")
        if policy is None or not callable(getattr(policy, "predict", None)):
            raise ConfigError(f"policy must have an SB3-style predict(obs) method, got {policy!r}")
        if isinstance(env, str):
            from vdsim_gym.policies.env_kwargs import required_env_kwargs

            env = gym.make(env, **required_env_kwargs(policy, env_kwargs, "env_kwargs"))
        elif env_kwargs:
            raise ConfigError("env_kwargs apply only when env is an id string")
        from vdsim_gym.envs.core_env import CoreEnv

        base = env.unwrapped
        if not isinstance(base, CoreEnv):
            raise UnsupportedEnvError(f"env must be a VDSim env (VDSim-DLC-v0, "
                                      f"VDSim-PathFollow-v0, ...), got {type(base).__name__}")
        if self.network is not None and getattr(base, "network", None) is not None:
            raise ConfigError(f"the env has its own network ({base.network}) and network="
                              f"{self.network} was given too; give one of them")
        if self.obs_delay is not None and getattr(base, "obs_delay", None) is not None:
            raise ConfigError(f"the env has its own sensor delay ({base.obs_delay!r}) and "
                              f"obs_delay={self.obs_delay!r} was given too; give one of them")
        if getattr(base, "latency", None) is not None:
            raise ConfigError("the env has its own latency; give latency= and overrun= to "
                              "ClosedLoopEval instead, so its timing model is the one used")
        phys = base.physics
        if control_period is not None and whole_ticks(
                control_period, phys.substep_dt, "control_period") != phys.ticks_per_period:
            raise ConfigError(f"control_period={control_period} differs from the env's "
                              f"{phys.control_period}; set it on the env (env_kwargs)")
        self.reference_path = None
        if duration is None:
            # The env's own end: its time limit ends the episode at the first step whose
            # end tick reaches ceil(time_limit / substep_dt) (CoreEnv._set_time_limit_ticks),
            # and the run calls no sample at or after that tick, so both end at the same
            # step; a limit off the substep grid (the DLC's 1.5 x length / speed) is
            # rounded up onto it the same way. Without a time limit the task's own end (an
            # ACC scenario's, a dyno cycle's) is drawn at reset: read from a reset with
            # the run's seed (the run resets the same way, so it draws the same).
            steps = env.spec.max_episode_steps if env.spec is not None else None
            if steps is not None:
                self._end_tick = steps * phys.ticks_per_period
            elif base.time_limit is not None:
                self._end_tick = ceil_ticks(_check_duration(base.time_limit), phys.substep_dt)
            else:
                env.reset(seed=seed)
                self._end_tick = int(base.core.time_limit_ticks) \
                    or DEFAULT_ENV_PERIODS * phys.ticks_per_period
            self.duration = self._end_tick * phys.substep_dt
        else:
            self.duration = float(duration) if isinstance(duration, (int, float)) else duration
            self._end_tick = whole_ticks(_check_duration(duration), phys.substep_dt,
                                         "duration")
        self._check_delay_fits()
        self._start(env, policy, seed, episode_end=duration is None)

    # ------------------------------------------------------------------ public API

    def stop(self) -> None:
        """End the running run early (thread-safe; no effect before run())."""
        self._stop.set()

    def stop_requested(self) -> bool:
        """Whether the running run was asked to stop (a controller that waits, such as a
        SIL exchange, returns early then)."""
        return self._stop.is_set()

    def run(self) -> EvalResult:
        """One run from the initial state; see the class docstring and docs/EVAL_MODES.md.
        With ``trace_path`` the run is recorded and written there (atomically) whatever
        ends it: an exception, Ctrl-C or SIGTERM (raised as KeyboardInterrupt while the
        run lasts) leaves a complete trace of what ran. A signal that comes while the
        trace is written is held until it is written, then raised; a run interrupted after
        its last sample is written as completed (``stopped_early`` False)."""
        # One run at a time: two at once would drive one plant (setdefault is atomic
        # under the GIL, so both threads get the same lock).
        in_use = self.__dict__.setdefault("_in_use", threading.Lock())
        if not in_use.acquire(False):
            raise ConcurrentUseError.of("this ClosedLoopEval (a run is in progress)")
        try:
            return self._run_guarded()
        finally:
            in_use.release()

    def _run_guarded(self) -> EvalResult:
        self._stop.clear()
        self._ran = None
        with sigterm_as_interrupt():  # SIGTERM stops the run as Ctrl-C does
            if self._trace is None:
                return self._build(self._loop())
            trace = self._trace
            session = trace.session(self._driver)
            session.trace_decimation = trace.decimation
            try:
                result = self._build(self._loop())
            except BaseException:
                # What ran, written whatever ends the run (signals held until it is); a
                # run whose loop completed (the interrupt came during the cleanup after
                # it or while its result was built) is written as completed.
                trace.write_held(session, self, self._built_or_none)
                raise
            trace.write_held(session, self, lambda: result)
            return result

    def _built_or_none(self) -> EvalResult | None:
        """The result of this run if its loop completed (``_ran``), None for one stopped
        by an error or an interrupt."""
        if self._ran is None:
            return None
        try:
            return self._build(self._ran)
        except Exception:
            return None

    def _build(self, ran: tuple) -> EvalResult:
        """The result of what ``_loop`` returned (the form's builder and its arguments)."""
        build, args = ran
        return build(*args)

    def _loop(self) -> tuple:
        """The run itself; returns (the result's builder, its arguments), also kept as
        ``_ran`` as soon as the loop has returned (before the cleanup after it), so a run
        whose loop completed is known as such whatever interrupts it after."""
        self._ran = None
        if self._env_run is not None:
            env_run = self._env_run
            try:
                out = env_run.run(self._stop)
            except BaseException:
                if env_run.done is not None:  # only the cleanup after the loop was cut
                    self._ran = self._env_result(env_run.done)
                raise
            self._ran = self._env_result(out)
            return self._ran
        d = self._driver
        # Modes A and B ran above; here mode C's driver.
        assert isinstance(d, EnvWallclockDriver) and self.mode == "wallclock"
        assert self.overrun is not None and self._wallclock is not None  # set for mode C
        try:
            run = WallclockRun(d, self._call, self._end_tick, self.overrun,
                               self._wallclock, self._stop)
            rows, samples, end, stopped, extra = run.run()
            cols = RunColumns.from_rows(rows, samples, d.command_columns)
            self._ran = (build_result_columns, (self, cols, end, stopped, None, extra))
        finally:
            d.drop_pending()
            d.end_run()  # the env handed back as it came
        return self._ran

    def _env_result(self, out: tuple) -> tuple:
        rows, samples, end, stopped, episode = out
        if not isinstance(rows, RunColumns):  # EnvPolicyRun._loop's rows
            rows = RunColumns.from_rows(rows, samples, self._driver.command_columns)
        return build_result_columns, (self, rows, end, stopped, episode)

    # ------------------------------------------------------------------ calls

    def _call(self, obs: Any, k: int, t: float) -> tuple[Command, float]:
        """Controller output for sample k (observed at t), checked, and its wall time."""
        d = self._driver
        # Mode C only: the run of modes A and B calls its policy itself.
        assert isinstance(d, EnvWallclockDriver)
        t0 = time.perf_counter()
        try:
            raw = d.call(obs, t)
        except Exception as err:
            raise ControllerError(
                f"controller raised at sample k={k}, t={t:.6g} s: {type(err).__name__}: {err}",
                k, t,
            ) from err
        wall = time.perf_counter() - t0
        try:
            command = d.check(raw)
        except ValueError as err:  # the same class (InvalidActionError for an action)
            raise type(err)(f"controller output at sample k={k}, t={t:.6g} s: {err}") \
                from None
        return command, wall
