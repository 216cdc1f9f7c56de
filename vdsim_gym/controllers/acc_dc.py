"""Car following with delay compensation: the PID ACC (or IDM) on the gap and speeds
predicted across the loop delay (docs/CONTROLLERS.md, "Delay compensation").

A target acceleration computed from the observation at t_k applies at t_k + d; until then
the one in flight (the observation's ``prev_accel``) holds. The prediction carries the
ego speed, the gap and the closing speed across d with that acceleration and the lead's
speed held (its acceleration is not observed):

    a = prev_accel * (max_acceleration if prev_accel >= 0 else max_deceleration)
    v' = max(v + a d, 0),  rel' = rel - (v' - v),  gap' = gap + rel d - (v' - v) d / 2

and the controller acts on (v', gap', rel'). With d = 0 it is the controller, bit for bit.
The prediction runs in the core (vdsim/gap_prediction.hpp); tests/test_acc_dc.py keeps
the numpy version as the reference.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.acc_policy import acc_pid, idm_follower
from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.prediction import DelayedObservation, loop_delay
from vdsim_gym.sim.baselines import predict_gap_obs


class PredictedGap(DelayedObservation):
    """Rewrites an ACC observation batch to the one predicted ``delay`` seconds on (the
    module docstring's law): ego_speed, gap and rel_speed replaced, normalized as the env
    does; the other columns kept. Per-row delays with ``set_delays``."""

    def __init__(self, layout: ObsLayout, a_max: float, d_max: float, delay: float) -> None:
        super().__init__(delay)
        self.a_max, self.d_max = float(a_max), float(d_max)
        names = ("ego_speed", "gap", "rel_speed", "lead_present", "prev_accel")
        self._idx = [layout.index(n) for n in names]
        self._scales = [float(layout.scale[i]) for i in self._idx]
        self._one: tuple[float, Any] = (math.nan, None)  # (delay, [delay])

    def _predict(self, obs: np.ndarray, d: Any) -> np.ndarray:
        """One core call (``sim.baselines.predict_gap_obs``, the GIL released): the batch
        as float64 with the three columns predicted across each row's delay."""
        if isinstance(d, float):  # one delay for every row: its array kept
            if d != self._one[0]:
                self._one = (d, np.array([d]))
            delays = self._one[1]
        else:
            delays = np.atleast_1d(np.asarray(d, dtype=float))
        return predict_gap_obs(np.ascontiguousarray(obs, dtype=float), self._idx,
                               self._scales, self.a_max, self.d_max, delays)


class DelayCompensatedFollower:
    """A car-following baseline (``acc_pid`` or ``idm_follower``) on the observation
    predicted across the delay. Its rows' state (PID integrators, the mode) is the inner
    policy's; ``episode_start`` passes through."""

    def __init__(self, inner: Any, layout: ObsLayout, a_max: float, d_max: float,
                 delay: float, follows_env: bool = False) -> None:
        self.inner = inner
        self.layout = layout
        self.prediction = PredictedGap(layout, a_max, d_max, delay)
        self.follows_env = follows_env

    @property
    def delay(self) -> float:
        return self.prediction.delay

    @property
    def modes(self) -> Any:
        return getattr(self.inner, "modes", None)

    def set_delays(self, delays: Any) -> None:
        self.prediction.set_delays(delays)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        if self.prediction.delays.none:
            return self.inner.predict(observation, state, episode_start, deterministic)
        obs, single = as_batch(observation, len(self.layout.names))
        action, _ = self.inner.predict(self.prediction(obs), episode_start=episode_start)
        return (action[0] if single else action), state


def compensated_follower(env: gym.Env | Any, inner: Any, delay: float | None
                         ) -> DelayCompensatedFollower:
    """A car-following policy ``inner`` on the gap predicted across the env's loop delay
    (or ``delay`` [s]: then fixed, not following the env's)."""
    base: Any = env.unwrapped
    d = loop_delay(env) if delay is None else delay
    return DelayCompensatedFollower(inner, ObsLayout.from_env(base),
                                    base.vehicle.max_acceleration,
                                    base.vehicle.max_deceleration, d, follows_env=delay is None)


def acc_pid_dc(env: gym.Env | Any, *, delay: float | None = None, **kwargs: Any
               ) -> DelayCompensatedFollower:
    """The PID ACC (``acc_pid(env, **kwargs)``) on the gap predicted across the env's loop
    delay (or ``delay``)."""
    return compensated_follower(env, acc_pid(env, **kwargs), delay)


def idm_dc(env: gym.Env | Any, *, delay: float | None = None, **kwargs: Any
           ) -> DelayCompensatedFollower:
    """IDM (``idm_follower(env, **kwargs)``) on the gap predicted across the delay."""
    return compensated_follower(env, idm_follower(env, **kwargs), delay)
