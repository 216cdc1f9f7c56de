"""Policies from what names them: ``load_policy`` (a run folder or its model file),
``load_controller`` (a controller spec: a baseline of ``BASELINES``, a run folder or an SB3
model file), ``base_controller`` (a residual base) and ``ResidualPolicy`` (a residual
run's policy: base + scaled correction). One module because they call each other: a
residual run's base is a controller spec, and a spec may name a (residual) run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError, TrainingError
from vdsim_gym.policies.algos import MODEL_ALGOS, algo_class, check_algo_in, check_model_algo
from vdsim_gym.policies.baselines import BASELINES
from vdsim_gym.policies.model_files import _algo_of_file, load_sb3_model, load_vecnormalize
from vdsim_gym.policies.trained import (
    TrainedPolicy,
    _check_stats_fit,
    _observation_kwargs,
    _observation_parts,
    _residual_entry,
    _run_config,
)


def base_controller(env: Any, base: Any) -> Any:
    """The base controller for ``env``: a spec string through ``load_controller``, a
    factory called with ``env``, or an object with ``predict`` as it is."""
    if isinstance(base, str):
        base = load_controller(base)[1]
    if not hasattr(base, "predict"):
        if not callable(base):
            raise ConfigError(f"base must be a controller spec (e.g. 'stanley'), a factory "
                              f"make(env) or an object with predict(), got {base!r}")
        base = base(env)
        if not hasattr(base, "predict"):
            raise ConfigError(f"the base factory returned {base!r}, which has no predict()")
    return base


class ResidualPolicy:
    """A residual run's policy: the base controller's command plus the scaled correction
    the trained model outputs for the observation with that command appended
    (``vdsim_gym.residual``). ``predict`` works on one observation or a batch;
    the base's state (a PI integrator) restarts on ``episode_start``.

    The base is built for an env: bind the policy to the env it drives,
    ``policy.for_env(env)`` (a copy; ``bind(env)`` in place) or
    ``load_policy(run, env=env)``; a sweep does it per cell (``factory()``). Unbound,
    ``predict`` builds the base for the run's own env (config.yml's env_id and
    env_kwargs), and refuses when that base follows the env's loop delay (stanley_dc,
    acc_pid_dc, idm_dc, mpc without ``delay=``): it would compensate the run's delay,
    not the one of the env it drives."""

    def __init__(self, inner: TrainedPolicy, env_id: str, base: str, scale: Any) -> None:
        self.inner, self.env_id, self.base_spec, self.scale = inner, env_id, base, scale
        self.name = inner.name
        self.required_env_kwargs = inner.required_env_kwargs
        self.env_kwargs = inner.env_kwargs
        self._rule: Any = None
        self._n_obs = 0

    @property
    def bound(self) -> bool:
        """Whether the base controller has been built (``bind``)."""
        return self._rule is not None

    def bind(self, env: Any) -> ResidualPolicy:
        """Builds the base controller for ``env`` (a VDSim env whose observation is the
        run's: the model's input is it plus the base command); a ConfigError when the
        base cannot drive ``env`` or the observation does not fit the model."""
        from vdsim_gym.controllers.residual import ResidualCore
        from vdsim_gym.wrappers._common import vdsim_base

        base = vdsim_base(env, f"the residual policy {self.name}")
        where = f"the residual policy {self.name} (base {self.base_spec!r})"
        try:
            controller = base_controller(env, self.base_spec)
        except (KeyError, AttributeError, ValueError) as exc:
            raise self._cannot_drive(env, exc) from None
        rule = ResidualCore(controller, self.scale, base.action_names)
        n_obs = len(base.obs_names)
        shape = getattr(getattr(self.inner.model, "observation_space", None), "shape", None)
        if shape is not None and tuple(shape) != (n_obs + rule.m + self.inner.extra_columns,):
            raise ConfigError(f"{where}: {_env_label(env)} observes {n_obs} values and the "
                              f"base {rule.m} actions, but the model takes {shape[0]} inputs; "
                              f"bind it to an env built like its run's ({self.env_id} with "
                              f"policy.env_kwargs)")
        try:  # a base that reads columns the env does not have fails here, not mid-run
            rule.peek(np.zeros((1, n_obs), np.float32))
        except (KeyError, AttributeError) as exc:
            raise self._cannot_drive(env, exc) from None
        self._rule, self._n_obs = rule, n_obs
        return self

    def _cannot_drive(self, env: Any, exc: BaseException) -> ConfigError:
        cause = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
        return ConfigError(f"the residual policy {self.name} (base {self.base_spec!r}) "
                           f"cannot drive {_env_label(env)} ({cause.rstrip('.')}); bind it "
                           f"to an env of its run ({self.env_id})")

    def for_env(self, env: Any) -> ResidualPolicy:
        """A copy bound to ``env`` (the model shared): what a sweep builds per cell, so a
        delay-compensating base compensates that cell's delay."""
        return ResidualPolicy(self.inner, self.env_id, self.base_spec, self.scale).bind(env)

    def factory(self) -> ResidualFactory:
        return ResidualFactory(self)

    def _bind_own_env(self) -> None:
        import gymnasium as gym

        env = gym.make(self.env_id, **self.env_kwargs)
        try:
            self.bind(env)
        finally:
            env.close()
        if getattr(self._rule.base, "follows_env", False):
            self._rule = None
            raise ConfigError(
                f"the residual policy {self.name}: its base {self.base_spec!r} compensates "
                "the loop delay of the env it drives, so it must be built for that env: "
                "policy = policy.for_env(env), or load_policy(run, env=env), before "
                "predict")

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        if self._rule is None:
            self._bind_own_env()
        from vdsim_gym.controllers.base import as_batch, episode_mask

        obs, single = as_batch(observation, self._n_obs)
        mask = np.zeros(len(obs), bool) if episode_start is None else \
            episode_mask(episode_start, len(obs))
        base = self._rule.base_actions(obs, mask)
        res, _ = self.inner.predict(self._rule.augment(obs.astype(np.float32), base),
                                    deterministic=deterministic)
        res = np.clip(np.asarray(res, dtype=float).reshape(base.shape), -1.0, 1.0)
        action = self._rule.combine(base, res)
        return (action[0] if single else action), state


def _env_label(env: Any) -> str:
    spec = getattr(env, "spec", None)
    return getattr(spec, "id", None) or type(getattr(env, "unwrapped", env)).__name__


class ResidualFactory:
    """``make(env) -> ResidualPolicy`` bound to ``env`` (a sweep's policy factory), with
    the run's ``required_env_kwargs`` and ``env_kwargs`` as the policy has them."""

    def __init__(self, policy: ResidualPolicy) -> None:
        self.policy = policy
        self.name = policy.name
        self.required_env_kwargs = policy.required_env_kwargs
        self.env_kwargs = policy.env_kwargs

    def __call__(self, env: Any) -> ResidualPolicy:
        return self.policy.for_env(env)


def load_policy(run: str | Path, which: str = "model", *, env: Any = None,
                trust: bool = False) -> TrainedPolicy | ResidualPolicy:
    """The policy of a run folder (``which``: "model", the final one, or "best_model",
    EvalCallback's best), or of a ``.zip`` path: with its folder's vecnormalize.pkl
    (best_vecnormalize.pkl for best_model.zip: the statistics when it was saved) when
    present, and its config.yml (algo, env options, residual base) when present.

    ``env``: for a residual run, the env the policy will drive; its base controller is
    built for it (``ResidualPolicy.for_env``), so a delay-compensating base compensates
    that env's delay. Without it, a residual policy must be bound before ``predict``
    (``policy.for_env(env)``) when its base follows the env's delay.

    ``trust``: False (the default) loads without running code from the folder: the
    model's pickled entries and vecnormalize.pkl are read by an unpickler that builds only
    data (numpy arrays, Gymnasium spaces, SB3's own policy, schedule and VecNormalize
    classes) and refuses anything else, naming it; a model loaded so is for prediction
    (a training state it cannot rebuild, e.g. a schedule written as a function, is left
    out). ``trust=True`` (``--trust``) unpickles as stable-baselines3 does, which runs
    whatever the files name: only for folders you trust (docs/TRAINING.md, "Trust").

    Every problem with the folder (a truncated zip, a config.yml that is not a mapping, a
    model of another algorithm than config.yml's ``algo``, statistics that are not
    VecNormalize's or do not fit the model, a residual entry without its base) is a
    TrainingError naming the file and the fix."""
    path = Path(run)
    if which not in ("model", "best_model"):
        raise TrainingError(f"which={which!r}: use 'model' (the final one) or 'best_model'")
    if path.suffix == ".zip":
        zip_path, folder = path, path.parent
    else:
        zip_path, folder = path / f"{which}.zip", path
    if zip_path.stem == "best_model":
        from vdsim_gym._best import recover_best

        recover_best(folder)  # a new best a stop left staged: finished (or dropped) first
    if not zip_path.exists():
        raise TrainingError(f"no saved model at {zip_path}; a run folder holds model.zip "
                            "(and best_model.zip once an evaluation ran)")
    config = _run_config(folder / "config.yml")
    algo = None if config.get("algo") is None else \
        check_algo_in(config["algo"], folder / "config.yml")
    env_kwargs = config.get("env_kwargs") or {}
    if not isinstance(env_kwargs, Mapping):
        raise TrainingError(f"{folder / 'config.yml'}: env_kwargs must be a mapping of gym.make "
                            f"options, got {env_kwargs!r}; fix or remove it")
    env_kwargs = dict(env_kwargs)
    history = config.get("action_history") or env_kwargs.get("action_history") or 0
    if isinstance(history, bool) or not isinstance(history, int) or history < 0:
        raise TrainingError(f"{folder / 'config.yml'}: action_history must be a whole number "
                            f">= 0, got {history!r}")
    residual = config.get("residual")
    if residual is not None and residual is not False:
        residual = _residual_entry(residual, config, folder / "config.yml")
    model = load_sb3_model(zip_path, algo, trust=trust,
                           where=f"config.yml says algo: {algo}" if algo else None)
    obs_rms, clip, eps = None, 10.0, 1e-8
    stats = folder / ("best_vecnormalize.pkl" if zip_path.stem == "best_model"
                      else "vecnormalize.pkl")
    if stats.exists():
        vn = load_vecnormalize(stats, trust=trust)
        if vn.norm_obs:
            obs_rms = vn.obs_rms
            _check_stats_fit(stats, obs_rms, model, zip_path)
        clip, eps = vn.clip_obs, vn.epsilon
    # what shapes the observation the model was trained on (its env's OBSERVATION_KWARGS)
    required = {k: env_kwargs[k] for k in _observation_kwargs(config.get("env_id"))
                if k in env_kwargs and k != "action_history"}
    if history:
        required["action_history"] = history
    features, privileged = _observation_parts(config, {**env_kwargs, **required},
                                              folder / "config.yml")
    policy = TrainedPolicy(model, obs_rms, clip, eps, name=str(zip_path),
                           required_env_kwargs=required or None, env_kwargs=env_kwargs,
                           features=features, privileged=privileged)
    if residual:
        out = ResidualPolicy(policy, residual["env_id"], residual["base"], residual["scale"])
        return out.bind(env) if env is not None else out
    return policy


def _sb3_model(spec: str, algo: str | None, trust: bool = False) -> tuple[str, Any]:
    path = Path(spec)
    if path.is_dir() and (path / "model.zip").exists():
        path = path / "model.zip"  # an agents/train.py run folder
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    stats = "best_vecnormalize.pkl" if path.stem == "best_model" else "vecnormalize.pkl"
    if path.exists() and (path.parent / stats).exists():
        # trained with observation normalization (agents/train.py): the policy normalizes
        # with the run's statistics, named after its run folder
        name = path.parent.name if path.stem in ("model", "best_model") else path.stem
        if path.stem == "best_model":
            name += "/best"
        policy = load_policy(path, trust=trust)
        # a residual run: built per sweep cell, so its base sees the cell's delay
        return name, policy.factory() if isinstance(policy, ResidualPolicy) else policy
    if not path.exists():
        raise ConfigError(f"{spec!r} is not a baseline (stanley or stanley:key=value,...) and "
                          f"no such SB3 model file ({path.with_suffix('.zip')} does not exist)")
    try:
        import stable_baselines3  # noqa: F401  (its absence named here)
    except ImportError as exc:
        raise ImportError(f"{spec!r} is an SB3 model file: loading it needs "
                          "stable-baselines3; pip install 'vdsim-gym[train]'") from exc

    guess = None if algo else _algo_of_file(path)
    names = [check_model_algo(algo)] if algo else sorted(MODEL_ALGOS, key=lambda n: n != guess)
    errors = []
    for n in names:
        try:
            algo_class(n)
        except ImportError:
            if algo:
                raise
            continue  # sb3-contrib not installed: its algorithms are not tried
        try:
            return path.stem, load_sb3_model(path, n, trust=trust,
                                             where=f"--algo {algo}" if algo else None)
        except TrainingError as exc:
            if algo or "not a readable" in str(exc) or "pickled code" in str(exc):
                raise ConfigError(f"{spec!r}: {exc}") from None
            errors.append(f"{n}: {exc}")  # try the next algorithm
    raise ConfigError(f"{spec!r}: could not load {path} as an SB3 model ({'; '.join(errors)}); "
                      f"pass --algo ({', '.join(MODEL_ALGOS)}) if it is one")


def load_controller(spec: str, algo: str | None = None, *, trust: bool = False
                    ) -> tuple[str, Any]:
    """(name, policy) from "stanley", "stanley:gain=2,kp=0.3" (kp, ki go to the PI speed
    loop, the rest to Stanley), "stanley_dc[:delay=S,...]" (Stanley on the state predicted
    across the loop delay: the cell's own unless ``delay`` is given), "acc_pid_dc[:...]" and
    "idm_dc[:...]" (the same for car following), "mpc[:...]" (linear
    MPC steering with OSQP, the same delay rule; the ``mpc`` extra), "acc_pid[:...]",
    "idm[:...]" (VDSim-ACC-v0's baselines), "cycle_follower[:...]" (VDSim-Dyno-v0's) or the
    path of a saved SB3 model (``algo`` or each of PPO, SAC, TD3, A2C, DDPG is tried), or an
    agents/train.py run folder or model in one (its vecnormalize.pkl normalizes the
    observations; named after the folder). ``trust``: as ``load_policy``'s (a saved model
    is read as data only unless True). Errors start with the quoted spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{spec!r} is not a controller; pass stanley, stanley:key=value,... "
                          "or the path of a saved SB3 model")
    name, _, params = spec.partition(":")
    factory = BASELINES.get(name)
    if factory is not None:
        return spec, factory(spec, params)
    return _sb3_model(spec, algo, trust)
