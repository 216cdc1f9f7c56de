"""Car following with delay compensation: the PID ACC (or IDM) on the gap and speeds
predicted across the loop delay (docs/CONTROLLERS.md, "Delay compensation").

A target acceleration computed from the observation at t_k applies at t_k + d; until then
the one in flight (the observation's ``prev_accel``) holds. The prediction carries the
ego speed, the gap and the closing speed across d with that acceleration and the lead's
speed held (its acceleration is not observed):

    a = prev_accel * (max_acceleration if prev_accel >= 0 else max_deceleration)
    v' = max(v + a d, 0),  rel' = rel - (v' - v),  gap' = gap + rel d - (v' - v) d / 2

and the controller acts on (v', gap', rel'). With d = 0 it is the controller, bit for bit.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.acc_policy import acc_pid, idm_follower
from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.prediction import DelayedObservation, loop_delay


class PredictedGap(DelayedObservation):
    """Rewrites an ACC observation batch to the one predicted ``delay`` seconds on (the
    module docstring's law): ego_speed, gap and rel_speed replaced, normalized as the env
    does; the other columns kept. Per-row delays with ``set_delays``."""

    def __init__(self, layout: ObsLayout, a_max: float, d_max: float, delay: float) -> None:
        super().__init__(delay)
        self.a_max, self.d_max = float(a_max), float(d_max)
        self._cols = {n: (layout.index(n), float(layout.scale[layout.index(n)]))
                      for n in ("ego_speed", "gap", "rel_speed", "lead_present", "prev_accel")}

    def _predict(self, obs: np.ndarray, d: Any) -> np.ndarray:
        c = {n: obs[:, i] * s for n, (i, s) in self._cols.items()}
        u = c["prev_accel"]
        a = np.where(u >= 0.0, u * self.a_max, u * self.d_max)
        v = c["ego_speed"]
        v2 = np.maximum(v + a * d, 0.0)
        dv = v2 - v
        lead = c["lead_present"] > 0.5
        out = np.array(obs, dtype=float)
        for name, value in (("ego_speed", v2),
                            ("gap", np.where(lead, c["gap"] + c["rel_speed"] * d - 0.5 * dv * d,
                                             c["gap"])),
                            ("rel_speed", np.where(lead, c["rel_speed"] - dv, c["rel_speed"]))):
            i, s = self._cols[name]
            out[:, i] = value / s
        return out


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


def _compensated(env: gym.Env | Any, inner: Any, delay: float | None
                 ) -> DelayCompensatedFollower:
    base: Any = env.unwrapped
    d = loop_delay(env) if delay is None else delay
    return DelayCompensatedFollower(inner, ObsLayout.from_env(base),
                                    base.vehicle.max_acceleration,
                                    base.vehicle.max_deceleration, d, follows_env=delay is None)


def acc_pid_dc(env: gym.Env | Any, *, delay: float | None = None, **kwargs: Any
               ) -> DelayCompensatedFollower:
    """The PID ACC (``acc_pid(env, **kwargs)``) on the gap predicted across the env's loop
    delay (or ``delay``)."""
    return _compensated(env, acc_pid(env, **kwargs), delay)


def idm_dc(env: gym.Env | Any, *, delay: float | None = None, **kwargs: Any
           ) -> DelayCompensatedFollower:
    """IDM (``idm_follower(env, **kwargs)``) on the gap predicted across the delay."""
    return _compensated(env, idm_follower(env, **kwargs), delay)
