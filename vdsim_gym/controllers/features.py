"""Observation features a learned controller computes from the env's observation, with
the classical controllers' own models (docs/TRAINING.md, "Observation features").

``predicted_state``: the state predicted across a known loop delay, the Smith predictor
of the delay-compensating baselines, as extra columns. A command computed from the
observation of t_k acts at t_k + d; the compensating Stanley and the MPC act on the state
predicted for t_k + d, and a learned controller given the same prediction as input need
not learn the car's dynamics across the delay itself. Path envs (DLC, PathFollow): e_y,
e_psi, vy and r predicted by the single-track model (``PredictedObservation``) under the
steer in flight, the columns ``pred_e_y``, ``pred_e_psi``, ``pred_vy``, ``pred_r``. ACC:
the ego speed, gap and closing speed under the acceleration in flight (``PredictedGap``),
``pred_ego_speed``, ``pred_gap``, ``pred_rel_speed``. Each is normalized as the env
normalizes the column it predicts, unclipped.

The model is the env's nominal vehicle and the delay a fixed number given when the
features are built (the delay the controller is told): the features are part of the
controller, as the MPC's model is, so a policy computes them from the plain observation
(``load_policy``) and the env needs no option for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vdsim_gym._checks import check_seconds
from vdsim_gym.controllers.base import ObsLayout
from vdsim_gym.errors import ConfigError

FEATURES = ("predicted_state",)

_PATH = ("e_y", "e_psi", "vy", "r")
_ACC = ("ego_speed", "gap", "rel_speed")


def check_features(features: Any) -> tuple[str, ...]:
    """``features`` as a tuple of known names (a name, a comma-separated text or a list;
    None or empty: none); an unknown name is a ConfigError naming the known ones."""
    if features is None:
        return ()
    if isinstance(features, str):
        items = [f.strip() for f in features.split(",") if f.strip()]
    elif isinstance(features, Sequence):
        items = list(features)
    else:
        raise ConfigError(f"features must be a name or a list of names ({', '.join(FEATURES)})"
                          f", got {features!r}")
    out: list[str] = []
    for name in items:
        if name not in FEATURES:
            raise ConfigError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}")
        if name not in out:
            out.append(name)
    return tuple(out)


def check_known_delay(delay: Any) -> float:
    """The delay [s] a controller is told: a finite number >= 0 (``check_seconds``)."""
    return check_seconds(delay, "the known delay", allow_zero=True,
                         hint=" (the loop delay the features predict across, e.g. 0.03)")


class PredictedStateFeatures:
    """The ``predicted_state`` columns of an env's observation batch.

    Args:
        env: the env (or one like it: its observation layout and nominal vehicle).
        delay: the loop delay [s] the prediction spans.
    """

    def __init__(self, env: Any, delay: float) -> None:
        from vdsim_gym.controllers.acc_dc import PredictedGap
        from vdsim_gym.controllers.prediction import PredictedObservation

        base: Any = getattr(env, "unwrapped", env)
        self.delay = check_known_delay(delay)
        layout = ObsLayout.from_env(base)
        self.n_obs = len(layout.names)
        if all(n in layout.names for n in (*_PATH, "kappa_ref", "prev_steer")):
            self._model: Any = PredictedObservation(layout, base.vehicle, self.delay)
            cols: tuple[str, ...] = _PATH
        elif all(n in layout.names for n in (*_ACC, "lead_present", "prev_accel")):
            self._model = PredictedGap(layout, base.vehicle.max_acceleration,
                                       base.vehicle.max_deceleration, self.delay)
            cols = _ACC
        else:
            raise ConfigError(f"features predicted_state: {type(base).__name__} observes "
                              f"neither a path (e_y, e_psi, vy, r) nor a gap (ego_speed, gap, "
                              "rel_speed); it applies to the path envs and the ACC")
        self._idx = [layout.index(n) for n in cols]
        self.names = tuple(f"pred_{n}" for n in cols)

    def stage(self) -> tuple[str, dict[str, Any]]:
        """What a compiled policy's C++ feature stage needs to compute these columns
        (``_core.MlpPolicyKernel.set_path_features`` / ``set_gap_features``): "path" or
        "gap" and the keywords."""
        m = self._model
        if hasattr(m, "predictor"):  # PredictedObservation
            p = m.predictor
            return "path", {"model": p.kernel(), "cols": list(m._idx),
                            "scale": list(m._scales), "max_steer": p.vehicle.max_steer,
                            "delay": self.delay, "max_step": p.max_step,
                            "n_obs": self.n_obs}
        return "gap", {"cols": list(m._idx), "scale": list(m._scales), "a_max": m.a_max,
                       "d_max": m.d_max, "delay": self.delay, "n_obs": self.n_obs}

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """(N, k) float32 feature columns of an (N, >= n_obs) batch whose first n_obs
        columns are the env's observation (columns appended after it are ignored)."""
        x = np.asarray(obs)
        if x.ndim != 2 or x.shape[1] < self.n_obs:
            raise ConfigError(f"features: the observation batch must have shape (N, >= "
                              f"{self.n_obs}), got {x.shape}")
        head = np.ascontiguousarray(x[:, :self.n_obs], dtype=float)
        return self._model(head)[:, self._idx].astype(np.float32)


class ObservationFeatures:
    """Every feature of ``names`` for ``env``'s observation, in order: ``names`` (the
    column names appended) and ``__call__(obs) -> (N, k)``."""

    def __init__(self, env: Any, features: Any, delay: float) -> None:
        self.features = check_features(features)
        self.delay = check_known_delay(delay)
        self._parts = [PredictedStateFeatures(env, self.delay) for f in self.features
                       if f == "predicted_state"]
        self.names = tuple(n for p in self._parts for n in p.names)
        self.n_obs = self._parts[0].n_obs if self._parts else 0

    def __len__(self) -> int:
        return len(self.names)

    @property
    def parts(self) -> tuple[PredictedStateFeatures, ...]:
        """The features, in their columns' order."""
        return tuple(self._parts)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([p(obs) for p in self._parts], axis=1) if self._parts else \
            np.zeros((len(obs), 0), np.float32)

    def append(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` (N, n) with the feature columns appended, float32."""
        x = np.asarray(obs, dtype=np.float32)
        return np.concatenate([x, self(x)], axis=1)


__all__ = ["FEATURES", "ObservationFeatures", "PredictedStateFeatures", "check_features",
           "check_known_delay"]
