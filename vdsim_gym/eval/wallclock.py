"""Mode C (wall clock): the C++ ``RealTimeRunner`` ticks the plant's session every
substep_dt of wall clock on its own thread (GIL released); a Python control thread wakes
every Tc, snapshots the session, calls the controller and latches its command through the
session's command path (``command_now``, as mode A), all under the runner's mutex. The
controller may block or spin: the simulation keeps advancing. docs/EVAL_MODES.md, "C".

Overruns: a sample whose command is latched later than one period after its slot is an
overrun. ``skip``: the slots that fell due meanwhile are not taken (the next sample is the
first slot at or after the latch); ``queue``: every slot is taken in order, a late one at
once, reading the state when the control thread gets to it (a real-time loop cannot read
the past).
"""

from __future__ import annotations

import functools
import math
import os
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym._checks import check_integer, check_policy_action, check_seconds, is_integer
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.envs.env_outcome import TERMINATED, TRUNCATED
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.callback import CallbackPolicy
from vdsim_gym.eval.env_run import EnvPolicyRun
from vdsim_gym.eval.result import _Samples
from vdsim_gym.sim.realtime import realtime_runner
from vdsim_gym.timing import ceil_ticks

RTF_BAND = 0.02  # quality "rtf_band": |rtf - 1| above this


@dataclass
class Taken:
    """One mode-C sample: the wake at its slot [s of the runner's clock], the plant's tick
    and state row when read; ``outcome`` when the episode had ended at that snapshot
    (nothing called); else the command, the call's wall time, the tick it was latched at
    (None: a stop came during the call, nothing latched) and the wall clock then."""

    wake: float
    tick: int
    state: tuple[float, ...]
    outcome: str | None = None
    command: Any = None
    wall: float = 0.0
    latch_tick: int | None = None
    latched: float | None = None  # the runner's wall clock at the latch (None: read now)
ENDS = TERMINATED | TRUNCATED  # a task's flags that end a mode-C run (the episode's end)


@dataclass(frozen=True)
class WallclockOptions:
    sim_cpu: int | None = None  # the runner thread's CPU (None: inherited)
    ctrl_cpus: tuple[int, ...] | None = None  # the control thread's CPUs
    watchdog_timeout_s: float | None = None
    failsafe: tuple[float, ...] | None = None  # the fail-safe command (checked)
    failsafe_u: Any = None  # as given (the env form: an action)

    def describe(self) -> dict[str, Any]:
        return {"cpu_affinity": None if self.sim_cpu is None and self.ctrl_cpus is None else
                {"sim": self.sim_cpu, "ctrl": None if self.ctrl_cpus is None else
                 list(self.ctrl_cpus)},
                "watchdog": None if self.watchdog_timeout_s is None else
                {"timeout_s": self.watchdog_timeout_s,
                 "failsafe_u": [float(x) for x in self.failsafe_u]}}


def check_options(cpu_affinity: Any, watchdog: Any,
                  check_command: Callable[[Any], Any]) -> WallclockOptions:
    """Validated ``cpu_affinity`` ({"sim": cpu, "ctrl": [cpus]}) and ``watchdog``
    ({"timeout_s": s, "failsafe_u": command}); errors name the key and the fix."""
    sim, ctrl = None, None
    if cpu_affinity is not None:
        if not isinstance(cpu_affinity, Mapping) or not set(cpu_affinity) <= {"sim", "ctrl"}:
            raise ConfigError(f"cpu_affinity must be a dict with keys 'sim' (one CPU) and/or "
                              f"'ctrl' (a list of CPUs), got {cpu_affinity!r}")
        n = os.cpu_count() or 1
        if "sim" in cpu_affinity:
            sim = check_integer(cpu_affinity["sim"], "cpu_affinity['sim']", maximum=n - 1,
                                what="a CPU number")
        if "ctrl" in cpu_affinity:
            raw = cpu_affinity["ctrl"]
            cpus = [raw] if is_integer(raw) else raw
            if not isinstance(cpus, (list, tuple, set)) or not cpus or not all(
                    is_integer(c) and 0 <= c < n for c in cpus):
                raise ConfigError(f"cpu_affinity['ctrl'] must be a non-empty list of CPU "
                                  f"numbers in [0, {n - 1}], got {raw!r}")
            ctrl = tuple(sorted({int(c) for c in cpus}))
    timeout, failsafe, given = None, None, None
    if watchdog is not None:
        if not isinstance(watchdog, Mapping) or set(watchdog) != {"timeout_s", "failsafe_u"}:
            raise ConfigError(f"watchdog must be a dict with 'timeout_s' [s] and 'failsafe_u' "
                              f"(a command), got {watchdog!r}")
        timeout = check_seconds(watchdog["timeout_s"], "watchdog['timeout_s']")
        given = watchdog["failsafe_u"]
        try:
            failsafe = tuple(check_command(given))
        except ValueError as err:
            raise ConfigError(f"watchdog['failsafe_u']: {err}") from None
    return WallclockOptions(sim, ctrl, timeout, failsafe, given)


def _quantiles(x: list[float]) -> dict[str, float] | None:
    if not x:
        return None
    a = np.asarray(x)
    return {"p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max())}


def _rtf_windows(tick_wall: np.ndarray, dt: float) -> dict[str, float] | None:
    """Virtual time advanced per 1 s of wall clock, over whole windows."""
    if tick_wall.size == 0:
        return None
    n = int(math.floor(tick_wall[-1]))
    if n < 2:
        return None
    counts = np.bincount(np.floor(tick_wall).astype(np.int64), minlength=n + 1)[:n]
    rtf = counts * dt
    return {"p01": float(np.percentile(rtf, 1)), "p50": float(np.percentile(rtf, 50)),
            "p99": float(np.percentile(rtf, 99)), "min": float(rtf.min()), "n": n}


def load1() -> float | None:
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


class WallclockRun:
    """One mode-C run of a driver (``EnvWallclockDriver``: an env's core, a policy's or a
    callback's)."""

    def __init__(self, driver: Any, call: Callable[[Any, int, float], tuple[Any, float]],
                 end_tick: int, overrun: str, options: WallclockOptions,
                 stop: threading.Event) -> None:
        self.d, self.call, self.end_tick = driver, call, end_tick
        self.overrun, self.options, self.stop = overrun, options, stop
        self.dt, self.P = driver.substep_dt, driver.ticks_per_period
        self.Tc = self.P * self.dt

    def run(self) -> tuple[list[tuple], _Samples, int, bool, dict[str, Any]]:
        d, dt = self.d, self.dt
        d.reset()
        session = d.session
        runner = realtime_runner(session, dt, self.end_tick)
        attach = getattr(d, "attach_runner", None)
        if attach is not None:  # a sensor delay: captures on the runner's thread
            attach(runner)
        o = self.options
        if o.watchdog_timeout_s is not None:
            assert o.failsafe is not None  # the options' check requires one with a timeout
            ticks = max(1, ceil_ticks(o.watchdog_timeout_s, dt))
            runner.set_watchdog(ticks, *o.failsafe)
        self.rows: list[tuple] = []
        self.samples = _Samples()
        self.wakes: list[float] = []
        self.jitter: list[float] = []
        self.to_apply: list[float] = []
        self.ctrl_applied: bool | None = None
        self.error: BaseException | None = None
        self.outcome: str | None = None
        load_start = load1()
        runner.start(-1 if o.sim_cpu is None else o.sim_cpu)
        self._done = threading.Event()
        ctrl = threading.Thread(target=self._control, args=(runner,), name="vdsim-ctrl",
                                daemon=True)
        ctrl.start()
        try:
            while not self._done.wait(0.05):  # short waits: Ctrl-C reaches this thread
                pass
        except BaseException:  # KeyboardInterrupt: stop both threads, then re-raise
            self.stop.set()
            raise
        finally:
            if self.stop.is_set() or self.error is not None:
                runner.request_stop()
            self._join(ctrl)
            runner.join()  # both threads are joined on every exit path
        if self.error is not None:
            raise self.error
        end = session.tick
        stopped = self.stop.is_set()
        runner_stats = self._stats(runner, end, stopped or self.outcome is not None,
                                   load_start)
        if self.outcome is not None:  # the env ended the episode (a collision, ...)
            runner_stats["outcome"] = self.outcome
        self.rows.append((end * dt, d.state_row(d.observe()), None, None))
        return self.rows, self.samples, end, stopped, runner_stats

    # ------------------------------------------------------------------ control thread

    def _join(self, ctrl: threading.Thread) -> None:
        """Waits for the control thread on its own Event (Thread.join after an interrupted
        join can return while the thread still runs), then joins it."""
        while True:
            try:
                self._done.wait()
                ctrl.join()
                return
            except KeyboardInterrupt:  # a second Ctrl-C: keep stopping, then re-raise
                self.stop.set()
                self._done.wait()
                ctrl.join()
                raise

    def _control(self, runner: Any) -> None:
        try:
            self._pin_ctrl()
            self._loop(runner)
        except BaseException as err:  # noqa: BLE001  (re-raised by run() after the joins)
            self.error = err
            runner.request_stop()
        finally:
            self._done.set()

    def _pin_ctrl(self) -> None:
        cpus = self.options.ctrl_cpus
        if cpus is None:
            return
        setter = getattr(os, "sched_setaffinity", None)
        if setter is None or not sys.platform.startswith("linux"):
            self.ctrl_applied = False
            return
        try:
            setter(0, set(cpus))  # 0: the calling thread on Linux
            self.ctrl_applied = True
        except OSError:
            self.ctrl_applied = False

    def _loop(self, runner: Any) -> None:
        d, dt, P, Tc, end = self.d, self.dt, self.P, self.Tc, self.end_tick
        take = getattr(d, "take_sample", None) or self._take
        in_force: dict[str, Any] | None = None
        initial = (0.0,) * len(d.command_columns)
        k = 0
        while k * P < end and not self.stop.is_set() and not runner.finished:
            slot = k * Tc
            s = take(runner, k, slot)
            if s is None:  # stopped, or the runner finished, before the slot
                break
            wake = s.wake
            if s.tick >= end:
                break
            t_sample = s.tick * dt
            self.rows.append((t_sample, s.state,
                              initial if in_force is None else in_force["command"], in_force))
            if s.outcome is not None:  # the env's episode ended at this snapshot
                self.outcome = s.outcome
                runner.request_stop()
                break
            if s.latch_tick is None:  # stopped during the call: the command is not latched
                self.samples.add(k=k, t_sample=t_sample, t_start=t_sample, t_call=t_sample,
                                 c_k=s.wall, apply_tick=s.tick, overrun=False,
                                 command=s.command, t_compute_s=s.wall, stopping=True)
                break
            command, wall, latch_tick = s.command, s.wall, s.latch_tick
            latched = runner.wall_now() if s.latched is None else s.latched
            overrun = latched > slot + Tc
            age = getattr(d, "last_obs_age", None)  # with a sensor delay
            in_force = self.samples.add(k=k, t_sample=t_sample, t_start=t_sample,
                                        t_call=t_sample, c_k=wall, apply_tick=latch_tick,
                                        overrun=overrun, command=command, t_compute_s=wall,
                                        **({} if age is None else {"obs_age": age}))
            self.wakes.append(wake)
            self.jitter.append(wake - slot)
            self.to_apply.append(latched - wake)
            if self.overrun == "skip":
                k = max(k + 1, math.ceil(latched / Tc - 1e-9))
            else:
                k += 1

    def _take(self, runner: Any, k: int, slot: float) -> Taken | None:
        """A sample taken here: the wake at the slot, the plant read under the runner's
        lock, the controller called, its command latched under the lock."""
        d, session = self.d, self.d.session
        runner.sleep_until(slot)
        wake = runner.wall_now()
        if self.stop.is_set() or runner.finished:
            return None
        runner.lock()
        try:
            tick = session.tick
            obs = d.observe()
            state = d.state_row(obs)  # read under the lock too: the sim moves on
        finally:
            runner.unlock()
        ended = getattr(d, "ended", None)
        if tick >= self.end_tick or ended is not None:
            return Taken(wake, tick, state, outcome=ended)
        command, wall = self.call(obs, k, tick * self.dt)
        if self.stop.is_set():
            return Taken(wake, tick, state, command=command, wall=wall)
        runner.lock()
        try:
            d.command_now(command)
            runner.note_command()
            latch_tick = session.tick
        finally:
            runner.unlock()
        return Taken(wake, tick, state, command=command, wall=wall, latch_tick=latch_tick,
                     latched=runner.wall_now())

    # ------------------------------------------------------------------ stats

    def _stats(self, runner: Any, end: int, stopped: bool, load_start: float | None
               ) -> dict[str, Any]:
        dt, Tc = self.dt, self.Tc
        wall = runner.wall_elapsed
        ticks = runner.ticks_done
        rtf = ticks * dt / wall if wall > 0 else math.nan
        lag = runner.max_lag
        n_overrun = sum(1 for r in self.samples.rows if r["overrun"])
        reasons = []
        if not abs(rtf - 1.0) <= RTF_BAND:
            reasons.append("rtf_band")
        if lag > Tc:
            reasons.append("sim_max_lag")
        if not stopped and ticks < self.end_tick:
            reasons.append("sim_ticks_short")
        periods = np.diff(self.wakes).tolist() if len(self.wakes) > 1 else []
        return {
            "control_period_s": _quantiles(periods),
            "wake_jitter_s": _quantiles(self.jitter),
            "sample_to_apply_s": _quantiles(self.to_apply),
            "rtf": rtf,
            "rtf_windows": _rtf_windows(runner.tick_wall(), dt),
            "sim_max_lag_s": lag,
            "sim_ticks": ticks,
            "sim_ticks_planned": self.end_tick,
            "wall_s": wall,
            "load1_start": load_start,
            "sim_affinity_requested": self.options.sim_cpu is not None,
            "sim_affinity_applied": runner.affinity_applied,
            "ctrl_affinity_requested": self.options.ctrl_cpus is not None,
            "ctrl_affinity_applied": bool(self.ctrl_applied),
            "failsafe_latches": runner.failsafe_latches,
            "quality": {"ok": not reasons, "reasons": reasons,
                        "warnings": ["control_overrun"] if n_overrun else []},
        }


class EnvWallclockDriver(EnvPolicyRun):
    """Mode C of the env form: the runner ticks the env core's plant; each sample peeks
    the core's observation of the plant as it is (no advance; a copy of the task scores
    it, the task itself is untouched), the policy's action is latched through the task's
    action-to-command mapping (``latch``). The run ends at the duration, a stop(), or the
    first snapshot at which the task ends the episode (terminated, or its own truncation
    such as a course's end: ``stats["outcome"]``)."""

    def __init__(self, env: Any, policy: PolicyPredictor, seed: int, end_tick: int,
                 obs_delay: Any = None) -> None:
        super().__init__(env, policy, seed, end_tick, None, None, obs_delay)
        core = self.base.core
        self.core, self.session = core, core.session
        self._obs = np.zeros(len(self.base.obs_names), np.float32)
        self._info = np.zeros(len(self.base.info_names))
        self._col = {name: j for j, name in enumerate(self.base.info_names)}
        self._n = len(self.base.action_names)
        self.ended: str | None = None
        self._first = True

    def reset(self) -> None:
        if self.obs_delay is not None:  # the eval's sensor delay, on the env for the run
            self.base.configure_obs_delay(self.obs_delay)
        self.used_obs_delay = self.base.obs_delay
        self.env.reset(seed=self.seed)
        if isinstance(self.policy, CallbackPolicy):
            self.policy.reset()
        self.ended, self._first = None, True
        self.last_obs_age: float | None = None

    def end_run(self) -> None:
        if self.obs_delay is not None:
            self.base.configure_obs_delay(None)

    def attach_runner(self, runner: Any) -> None:
        """With a sensor delay on the env: the core takes its captures on the runner's
        thread after every substep (and now, at the reset's tick)."""
        if self.base.obs_delay is not None:
            self.core.after_tick()
            runner.set_hook(self.core)

    def observe(self) -> np.ndarray:
        flags = self.core.peek(self._obs, self._info)
        if flags & ENDS:
            self.ended = self.base.outcome(flags)
        if self.base.obs_delay is not None:  # the sensor's newest capture, its age
            c = self.core.sensor_read(self._obs)
            self.last_obs_age = (self.core.tick - c) * self.substep_dt
        return self._obs.copy()

    def state_row(self, obs: Any) -> tuple[float, ...]:
        info = {k: float(self._info[self._col[k]]) for k in self.info_columns}
        return self._state_row(info)

    @property
    def take_sample(self) -> Callable[[Any, int, float], Taken | None] | None:
        """A policy that takes a whole sample in one native call, ``take_sample(driver,
        runner, k, slot)`` (the wake at the slot, observe, call and latch without Python
        in between: a controller in another process, vdsim_gym.sil); None: the run's loop
        takes it."""
        native = getattr(self.policy, "take_sample", None)
        return None if native is None else functools.partial(native, self)

    def call(self, obs: np.ndarray, t: float) -> Any:
        policy = self.policy
        if isinstance(policy, CallbackPolicy):  # the callback form: a command
            return policy.call(obs, t, self.last_obs_age)
        action, _ = policy.predict(obs, episode_start=np.array([self._first]),
                                   deterministic=True)
        self._first = False
        return action

    def check(self, raw: Any) -> tuple[float, ...]:
        policy = self.policy
        if isinstance(policy, CallbackPolicy):  # the command, saturated
            return policy.command(raw)
        return tuple(check_policy_action(raw, self._n).tolist())  # clipped, as SB3 does

    def command_now(self, action: tuple[float, ...]) -> None:
        policy = self.policy
        if isinstance(policy, CallbackPolicy):  # the callback form's command: its action
            self.core.latch(policy.action(action))
            return
        self.core.latch(np.asarray(action, dtype=float))

    def failsafe_command(self, raw: Any) -> tuple[float, ...]:
        """The watchdog's fail-safe: in the env form an action, its plant command; in the
        callback form a command within the vehicle's range."""
        policy = self.policy
        if isinstance(policy, CallbackPolicy):
            return policy.check_command_within(raw)
        return tuple(self.core.command_for(np.asarray(self.check(raw))))

    def drop_pending(self) -> None:
        """Mode C latches at once: nothing is ever pending."""


__all__ = ["EnvWallclockDriver", "Taken", "WallclockOptions", "WallclockRun", "check_options",
           "load1"]
