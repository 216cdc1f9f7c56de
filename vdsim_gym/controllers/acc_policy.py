"""SB3-style ``predict`` for the car-following baselines on VDSim-ACC-v0: one controller
per batch row (reset on ``episode_start``), reading the env's named observation columns
and returning the action (target acceleration / vehicle limit).

``acc_pid`` and ``idm_follower`` run in C++ (``sim.baselines.ACCKernel`` and
``IDMKernel``, csrc/vdsim/baselines.hpp), bit for bit the scalar ``ACCController`` and ``IDM`` of
controllers/acc.py and controllers/idm.py, which stay the readable definitions and the
tests' reference. ``CarFollowingPolicy(env, make)`` still wraps any per-row controller
factory in Python."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.acc import ACCConfig, ACCController, ACCGains
from vdsim_gym.controllers.base import (
    ObsLayout,
    as_batch,
    episode_mask,
    kernel_predict,
    kernel_state,
    set_kernel_state,
)
from vdsim_gym.controllers.idm import IDM
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim import baselines as kernels

# The observation columns a car-following kernel reads, in its order.
CAR_FOLLOWING_COLUMNS = ("ego_speed", "set_speed", "lead_present", "gap", "rel_speed")


class CarFollowingPolicy:
    """Wraps a per-row controller factory ``make() -> object with step(v, v_lead, gap, dt,
    v_set) -> accel [m/s^2]`` as a batched policy (v_set: the episode's set speed, read
    from the observation); or, with ``kernel(columns, n_obs, dt, a_max, d_max)``, a C++
    kernel that evaluates the batch at once (``make`` then documents the rows' law)."""

    def __init__(self, env: gym.Env | Any, make: Any, kernel: Any = None) -> None:
        base: Any = getattr(env, "unwrapped", env)  # a VDSim env: its own attributes
        if tuple(getattr(base, "action_names", ())) != ("accel",):
            raise ConfigError("a car-following baseline needs VDSim-ACC-v0 (action 'accel')")
        if base.longitudinal != "accel":
            raise ConfigError("the car-following baselines command an acceleration: build the "
                              "env with longitudinal='accel' (its default)")
        self.layout = ObsLayout.from_env(base)
        self.dt = base.control_period
        self.a_max, self.d_max = base.vehicle.max_acceleration, base.vehicle.max_deceleration
        self._make = make
        self._rows: list[Any] = []
        self._kernel_factory = kernel
        self._n_obs = len(self.layout.names)
        self._k: Any = None
        self._build_kernel()
        # A rendering single env shows the baseline's mode (cruise, follow, emergency) on
        # its frames: the policy notes it there after each single-observation predict.
        self._notes: dict[str, Any] | None = (
            base.render_notes if getattr(base, "render_mode", None) is not None
            and isinstance(getattr(base, "render_notes", None), dict) else None)

    def _build_kernel(self) -> Any:
        if self._kernel_factory is not None:
            self._k = self._kernel_factory(self.layout.columns(*CAR_FOLLOWING_COLUMNS),
                                           self._n_obs, self.dt, self.a_max, self.d_max)
        return self._k

    # Copies (deepcopy, copy.copy) carry the rows' state and build their own kernel.
    def __getstate__(self) -> dict[str, Any]:
        return kernel_state(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        set_kernel_state(self, state, CarFollowingPolicy._build_kernel)
        if self._k is None:
            self._build_kernel()

    def reset(self) -> None:
        self._rows = []
        if self._k is not None:
            self._k.clear()

    @property
    def modes(self) -> list[str | None]:
        """Each row's mode (cruise, follow, emergency; None before its first call or for
        a controller without modes)."""
        if self._k is not None:
            modes = getattr(self._k, "modes", None)
            return [None] * self._k.rows if modes is None else list(modes)
        return [getattr(r, "mode", None) for r in self._rows]

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        k = self._k
        if k is not None:
            out = kernel_predict(k, observation, episode_start, self._n_obs)
            if self._notes is not None and out.ndim == 1:
                modes = getattr(k, "modes", None)
                if modes and modes[0]:
                    self._notes["mode"] = modes[0]
            return out, state
        obs, single = as_batch(observation, len(self.layout.names))
        n = len(obs)
        if len(self._rows) != n:
            self._rows = [self._make() for _ in range(n)]
        restart = episode_mask(episode_start, n)
        col = self.layout.column  # physical units (the env's obs_scale)
        v, v_set = col(obs, "ego_speed"), col(obs, "set_speed")
        lead = col(obs, "lead_present") > 0.5
        gap = col(obs, "gap")
        v_lead = v + col(obs, "rel_speed")
        out = np.zeros((n, 1), np.float32)
        for i in range(n):
            if restart[i]:
                self._rows[i].reset()
            a = self._rows[i].step(float(v[i]), float(v_lead[i]) if lead[i] else None,
                                   float(gap[i]) if lead[i] else None, self.dt,
                                   float(v_set[i]))
            out[i, 0] = a / self.a_max if a >= 0 else a / self.d_max
        out = np.clip(out, -1.0, 1.0)
        if single and self._notes is not None and getattr(self._rows[0], "mode", None):
            self._notes["mode"] = self._rows[0].mode
        return (out[0] if single else out), state


class _ACCRow:
    def __init__(self, config: ACCConfig, gains: ACCGains) -> None:
        self.ctrl = ACCController(config, gains)

    def reset(self) -> None:
        self.ctrl.reset()

    @property
    def mode(self) -> str | None:
        return self.ctrl.mode

    def step(self, v: float, v_lead: float | None, gap: float | None, dt: float,
             v_set: float) -> float:
        return self.ctrl.compute(v, v_lead, gap, dt, set_speed=v_set).acceleration


class _IDMRow:
    def __init__(self, idm: IDM, track_set_speed: bool) -> None:
        self.idm, self.track = idm, track_set_speed

    def reset(self) -> None:
        pass

    def step(self, v: float, v_lead: float | None, gap: float | None, dt: float,
             v_set: float) -> float:
        if self.track and v_set > 0 and v_set != self.idm.v0:  # desired speed: the set speed
            self.idm = dataclasses.replace(self.idm, v0=v_set)
        return self.idm.acceleration(v, v_lead, gap)


# acc_pid's default hysteresis on leaving emergency braking [s of TTC].
EMERGENCY_HYSTERESIS = 1.0


def acc_pid(env: gym.Env | Any, *, gains: ACCGains | None = None,
            emergency_ttc_threshold: float = 3.0,
            emergency_hysteresis: float = EMERGENCY_HYSTERESIS) -> CarFollowingPolicy:
    """The PID ACC baseline on ``env``: its time headway, min distance and vehicle limits,
    the episode's set speed from the observation, ``gains`` (default ACCGains()).

    Emergency braking starts below ``emergency_ttc_threshold`` and holds while closing
    with TTC below the threshold plus ``emergency_hysteresis`` (0: the reference's rule,
    none). Without it the loop toggles full braking every sample or two once TTC grazes
    the threshold (stop-and-go at 0 ms, Tc 20 ms: 176 mode switches in 30 s against 18,
    RMS jerk 97.5 m/s^3 against 31.6), and which samples toggle depends on the last digits
    of the state, so a training-grade integrator cannot reproduce them (docs/ACC.md,
    "Emergency hysteresis")."""
    if not (math.isfinite(emergency_hysteresis) and emergency_hysteresis >= 0.0):
        raise ConfigError(f"emergency_hysteresis = {emergency_hysteresis!r} s must be >= 0 "
                          "(0: no hysteresis, the reference's rule)")
    base: Any = env.unwrapped  # VDSim-ACC-v0: its own attributes
    cfg = ACCConfig(set_speed=30.0, time_headway=base.time_headway,
                    min_distance=base.min_distance,
                    emergency_ttc_threshold=emergency_ttc_threshold,
                    max_acceleration=base.vehicle.max_acceleration,
                    max_deceleration=base.vehicle.max_deceleration,
                    emergency_exit_ttc=(emergency_ttc_threshold + emergency_hysteresis
                                        if emergency_hysteresis > 0 else None))
    g = gains or ACCGains()

    def kernel(columns: Any, n_obs: int, dt: float, a_max: float, d_max: float) -> Any:
        return kernels.ACCKernel(
            columns, n_obs, dt, a_max, d_max, time_headway=cfg.time_headway,
            min_distance=cfg.min_distance, emergency_ttc=cfg.emergency_ttc_threshold,
            exit_ttc=cfg.emergency_exit_ttc, max_acceleration=cfg.max_acceleration,
            max_deceleration=cfg.max_deceleration, pid_speed=dict(g.pid_speed),
            pid_distance=dict(g.pid_distance))

    return CarFollowingPolicy(env, lambda: _ACCRow(cfg, g), kernel)


def idm_follower(env: gym.Env | Any, **idm: Any) -> CarFollowingPolicy:
    """The IDM baseline on ``env``: vehicle limits from it, desired speed v0 the episode's
    set speed (unless ``v0`` is given), Treiber's other parameters unless given."""
    base: Any = env.unwrapped  # VDSim-ACC-v0: its own attributes
    model = IDM(**{"max_acceleration": base.vehicle.max_acceleration,
                   "max_deceleration": base.vehicle.max_deceleration, **idm})
    track = "v0" not in idm

    def kernel(columns: Any, n_obs: int, dt: float, a_max: float, d_max: float) -> Any:
        m = model
        return kernels.IDMKernel(
            columns, n_obs, dt, a_max, d_max, v0=m.v0, time_headway=m.time_headway,
            min_gap=m.min_gap, idm_a_max=m.a_max, b_comfort=m.b_comfort, delta=m.delta,
            max_acceleration=m.max_acceleration, max_deceleration=m.max_deceleration,
            track_set_speed=track)

    return CarFollowingPolicy(env, lambda: _IDMRow(model, track), kernel)


__all__ = ["CAR_FOLLOWING_COLUMNS", "EMERGENCY_HYSTERESIS", "CarFollowingPolicy", "acc_pid",
           "idm_follower"]
