"""A trained run's parts: ``TrainedPolicy`` (the model behind its saved observation
statistics) and what ``load_policy`` reads of the run folder (config.yml, checked: its
residual entry, the env options that shape the observation; the statistics' fit to the
model)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import TrainingError


class TrainedPolicy:
    """A saved run as an SB3-style policy: ``predict(obs)`` normalizes ``obs`` with the
    run's VecNormalize statistics (if any), then asks the model (deterministic by
    default). Works on one observation or a batch. ``required_env_kwargs``: the env
    options its observation was trained with (``{"action_history": k}`` for k > 0, else
    empty): build its env with them, ``gym.make(env_id, **policy.required_env_kwargs)``
    (the sweep and ``ClosedLoopEval`` with an env id do). ``env_kwargs``: every gym.make
    kwarg it was trained with (its run's config.yml; {} without one), which
    ``vdsim-gym sweep --own-env`` / ``compare.py --own-env`` sweep it on.

    ``features``: the run's controller features (an ``ObservationFeatures``), appended to
    the observation it is given; ``privileged``: the number of privileged critic columns
    the model's input ends with, given as zeros (its actor reads none of them:
    ``vdsim_gym.policies.asymmetric``). Both come from config.yml (``load_policy``), so
    the policy acts on the env's plain observation."""

    def __init__(self, model: Any, obs_rms: Any = None, clip_obs: float = 10.0,
                 epsilon: float = 1e-8, name: str = "",
                 required_env_kwargs: Mapping[str, Any] | None = None,
                 env_kwargs: Mapping[str, Any] | None = None, features: Any = None,
                 privileged: int = 0) -> None:
        self.model, self.obs_rms, self.clip_obs, self.epsilon = model, obs_rms, clip_obs, epsilon
        self.name = name
        self.required_env_kwargs: dict[str, Any] = dict(required_env_kwargs or {})
        self.env_kwargs = {**dict(env_kwargs or {}), **self.required_env_kwargs}
        self.features = features if features is not None and len(features) else None
        self.privileged = int(privileged)

    @property
    def extra_columns(self) -> int:
        """The model's inputs beyond the observation it is given (features, privileged)."""
        return (len(self.features) if self.features is not None else 0) + self.privileged

    def model_input(self, observation: np.ndarray) -> np.ndarray:
        """What the model's first layer gets for ``observation`` (one or a batch): the
        features and the privileged zeros appended, then normalized."""
        obs = np.asarray(observation, dtype=np.float32)
        if not self.extra_columns:
            return self.normalize(obs)
        batch = obs.reshape(1, -1) if obs.ndim == 1 else obs
        if self.features is not None:
            batch = self.features.append(batch)
        if self.privileged:
            batch = np.concatenate([batch, np.zeros((len(batch), self.privileged),
                                                    np.float32)], axis=1)
        out = self.normalize(batch)
        return out[0] if obs.ndim == 1 else out

    def normalize(self, obs: np.ndarray) -> np.ndarray:
        if self.obs_rms is None:
            return obs
        out = (obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)
        return np.clip(out, -self.clip_obs, self.clip_obs).astype(np.float32)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        return self.model.predict(self.model_input(observation), state=state,
                                  episode_start=episode_start, deterministic=deterministic)


def _observation_kwargs(env_id: Any) -> tuple[str, ...]:
    """The gym.make keywords that shape ``env_id``'s observation (its class's
    ``OBSERVATION_KWARGS``; none for an id not registered)."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    try:
        entry = gym.spec(str(env_id)).entry_point
    except gym.error.Error:
        return ()
    cls = load_env_creator(entry) if isinstance(entry, str) else entry
    return tuple(getattr(cls, "OBSERVATION_KWARGS", ()))


def _run_config(cfg: Path) -> dict[str, Any]:
    """A run folder's config.yml (``read_yaml``: a regular file, parsed strictly) as a
    mapping; {} when there is none."""
    from vdsim_gym._files import read_yaml

    if not cfg.exists() and not cfg.is_symlink():
        return {}
    config = read_yaml(cfg, "the run's config.yml")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise TrainingError(f"{cfg}: must be a mapping of keys (algo, env_id, env_kwargs, "
                            f"...), got a {type(config).__name__}; put the run's own "
                            "config.yml back (vdsim-gym train writes it)")
    return config


def _residual_entry(residual: Any, config: Mapping[str, Any], cfg: Path) -> dict[str, Any]:
    """config.yml's ``residual: {base, scale}`` checked (with the ``env_id`` its base is
    built for by default)."""
    from vdsim_gym.controllers.residual import check_scale

    if not isinstance(residual, Mapping) or not isinstance(residual.get("base"), str) \
            or not residual["base"].strip() or "scale" not in residual:
        raise TrainingError(f"{cfg}: residual must be a mapping with base (a controller "
                            f"spec, e.g. stanley_dc) and scale, got {residual!r}; put the "
                            "run's own config.yml back")
    env_id = config.get("env_id")
    if not isinstance(env_id, str) or not env_id:
        raise TrainingError(f"{cfg}: a residual run needs env_id (its base controller is "
                            f"built for that env), got {env_id!r}")
    try:
        check_scale(residual["scale"], max(1, np.size(residual["scale"])))
    except ValueError as exc:
        raise TrainingError(f"{cfg}: residual {exc}") from None
    return {"env_id": env_id, "base": residual["base"].strip(), "scale": residual["scale"]}


def _check_stats_fit(stats: Path, obs_rms: Any, model: Any, zip_path: Path) -> None:
    shape = getattr(getattr(model, "observation_space", None), "shape", None)
    mean = np.asarray(getattr(obs_rms, "mean", None))
    if shape is not None and mean.shape != tuple(shape):
        raise TrainingError(f"{stats}: statistics of observations of shape {mean.shape}, but "
                            f"{zip_path.name} takes {tuple(shape)}; the two files come from "
                            "different runs: put the run's own statistics back")


def _observation_parts(config: Mapping[str, Any], env_kwargs: Mapping[str, Any],
                       cfg: Path) -> tuple[Any, int]:
    """config.yml's ``features`` (with ``known_delay``), rebuilt for the run's env, and
    the number of its ``privileged_columns``; (None, 0) for a run without them."""
    names = config.get("features") or []
    privileged = config.get("privileged_columns") or []
    if not isinstance(names, list) or not isinstance(privileged, list):
        raise TrainingError(f"{cfg}: features and privileged_columns must be lists, got "
                            f"{names!r} and {privileged!r}; put the run's own config.yml "
                            "back")
    if not names:
        return None, len(privileged)
    import gymnasium as gym

    from vdsim_gym.controllers.features import ObservationFeatures
    from vdsim_gym.errors import ConfigError

    env_id = config.get("env_id")
    if not isinstance(env_id, str) or not env_id:
        raise TrainingError(f"{cfg}: a run with features needs env_id (they are built for "
                            f"its observation), got {env_id!r}")
    try:
        env = gym.make(env_id, **env_kwargs)
        try:
            features = ObservationFeatures(env, names, config.get("known_delay", math.nan))
        finally:
            env.close()
    except ConfigError as exc:
        raise TrainingError(f"{cfg}: features {names}: {exc}") from None
    return features, len(privileged)
