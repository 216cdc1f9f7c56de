"""Stanley with delay compensation: the law acts on the state predicted across the loop's
delay (a Smith predictor; docs/CONTROLLERS.md, "Delay compensation")."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.composite import LateralLongitudinal
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.prediction import PredictedObservation, loop_delay
from vdsim_gym.controllers.stanley import Stanley


class DelayCompensatedStanley:
    """Stanley's law (the same gains) on the observation predicted ``delay`` seconds on.

    A command computed at t_k applies at t_k + delay; until then the last action holds.
    ``SingleTrackPredictor`` carries e_y, e_psi, vy and r across the delay under that
    held steer, and ``Stanley`` steers from the prediction. With ``delay`` 0 it is Stanley,
    bit for bit. Stateless (the steer in flight is the observation's ``prev_steer``), so a
    batch's rows and episode starts need nothing.

    Args:
        stanley: the Stanley controller whose law and gains are used.
        vehicle: the vehicle the predictor models (the env's).
        delay: the loop delay [s] it compensates (``from_env`` reads the env's).
        **predictor: ``SingleTrackPredictor`` options (relaxation, max_step).
    """

    def __init__(self, stanley: Stanley, vehicle: Any, delay: float, *,
                 follows_env: bool = False, **predictor: Any) -> None:
        self.stanley = stanley
        self.prediction = PredictedObservation(stanley.layout, vehicle, delay, **predictor)
        #: built from the env's own delay (``from_env`` without ``delay``): a residual
        #: wrapper then keeps each row's delay that of its episode (``set_delays``)
        self.follows_env = follows_env

    def set_delays(self, delays: Any) -> None:
        """Per-row delays [s] for batches of that many rows (``PredictedObservation``)."""
        self.prediction.set_delays(delays)

    @property
    def layout(self) -> ObsLayout:
        return self.stanley.layout

    @property
    def delay(self) -> float:
        return self.prediction.delay

    @classmethod
    def from_env(cls, env: gym.Env | Any, *, delay: float | None = None,
                 predictor: dict[str, Any] | None = None, **stanley: Any
                 ) -> DelayCompensatedStanley:
        """Built for ``env``: its layout, vehicle and, unless ``delay`` is given, its
        configured loop delay (``loop_delay(env)``: computation + sensor + steering
        channel)."""
        base: Any = env.unwrapped
        d = loop_delay(env) if delay is None else delay
        return cls(Stanley.from_env(env, **stanley), base.vehicle, d,
                   follows_env=delay is None, **(predictor or {}))

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        if self.prediction.delays.none:
            return self.stanley.predict(observation, state, episode_start, deterministic)
        obs, single = as_batch(observation, len(self.layout.names))
        action, _ = self.stanley.predict(self.prediction(obs))
        return (action[0] if single else action), state


def stanley_dc_pi(env: gym.Env | Any, *, delay: float | None = None,
                  stanley: dict[str, Any] | None = None, pi: dict[str, Any] | None = None,
                  predictor: dict[str, Any] | None = None) -> LateralLongitudinal:
    """The delay-compensated Stanley + PI speed baseline for ``env`` (the delay: the env's
    configured loop delay unless given)."""
    return LateralLongitudinal(
        DelayCompensatedStanley.from_env(env, delay=delay, predictor=predictor,
                                         **(stanley or {})),
        PISpeed.from_env(env, **(pi or {})))
