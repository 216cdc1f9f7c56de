"""Policies by name: a trained run loaded as a policy, the models that ship with the
package, and the controller specs of the command lines.

``load_policy(run_dir)`` gives an object with SB3's ``predict`` that normalizes the
observation with the run's saved statistics first, so a trained model runs through the
same evaluation and sweep code as a baseline; its ``required_env_kwargs`` (the run's
``action_history``) rebuild the observation it was trained on, and ``required_env_kwargs``
here merges them into an env's kwargs (the sweep and ``ClosedLoopEval`` do).
``shipped_model(name)`` is the run folder of a policy that ships with the package
(agents/models). ``load_controller(spec)`` is the registry behind ``vdsim-gym sweep
--controller`` and ``agents/compare.py``: "stanley[:key=value,...]", "stanley_dc[:...]",
"mpc[:...]", "acc_pid[:...]", "idm[:...]", "cycle_follower[:...]", a run folder or an SB3
model file.

This module sits below ``vdsim_gym.eval`` and ``vdsim_gym.training`` (docs/ARCHITECTURE.md,
"Layers"): evaluation applies a trained policy's env options without importing the
trainer. stable-baselines3 (the ``train`` extra) is imported only when a model is loaded.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._files import load_yaml
from vdsim_gym.errors import ConfigError

# Every model class by its upper-case name: (module, class). The training algorithms are
# the lower-case ALGOS; TQC and CrossQ come from sb3-contrib (the train extra).
_MODEL_CLASSES: dict[str, tuple[str, str]] = {
    "PPO": ("stable_baselines3", "PPO"), "SAC": ("stable_baselines3", "SAC"),
    "TD3": ("stable_baselines3", "TD3"), "TQC": ("sb3_contrib", "TQC"),
    "CROSSQ": ("sb3_contrib", "CrossQ"), "A2C": ("stable_baselines3", "A2C"),
    "DDPG": ("stable_baselines3", "DDPG")}
ALGOS = ("ppo", "sac", "td3", "tqc", "crossq")


class TrainingError(ConfigError):
    """A training configuration that cannot run, or a run folder or model that cannot be
    loaded, with the cause and the fix (a ConfigError, so a VDSimError and a ValueError)."""


def check_algo(algo: str) -> str:
    name = str(algo).lower()
    if name not in ALGOS:
        raise TrainingError(f"unknown algorithm {algo!r}; choose from {', '.join(ALGOS)}")
    return name


def algo_class(algo: str) -> Any:
    """The SB3 (or sb3-contrib) class of an algorithm name ("ppo", "tqc", "CrossQ", ...);
    a missing package is an ImportError naming the extra."""
    import importlib

    name = str(algo).upper()
    if name not in _MODEL_CLASSES:
        raise TrainingError(f"unknown algorithm {algo!r}; choose from "
                            f"{', '.join(_MODEL_CLASSES)}")
    module, cls = _MODEL_CLASSES[name]
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        package = module.replace("_", "-")
        raise ImportError(f"{cls} needs {package}; pip install 'vdsim-gym[train]'") from exc


def required_env_kwargs(policy: Any, env_kwargs: Mapping[str, Any] | None,
                        where: str = "env kwargs") -> dict[str, Any]:
    """``env_kwargs`` with what ``policy`` needs of its env's observation
    (``policy.required_env_kwargs``, e.g. a trained run's ``action_history``); a
    different value given for such a key is a ValueError naming both."""
    out = dict(env_kwargs or {})
    for key, value in (getattr(policy, "required_env_kwargs", None) or {}).items():
        if key in out and out[key] != value:
            raise ConfigError(f"{where} sets {key}={out[key]!r}, but the policy was trained with "
                              f"{key}={value!r} (its observation depends on it); drop it")
        out[key] = value
    return out


# ------------------------------------------------------------------ trained runs

class TrainedPolicy:
    """A saved run as an SB3-style policy: ``predict(obs)`` normalizes ``obs`` with the
    run's VecNormalize statistics (if any), then asks the model (deterministic by
    default). Works on one observation or a batch. ``required_env_kwargs``: the env
    options its observation was trained with (``{"action_history": k}`` for k > 0, else
    empty): build its env with them, ``gym.make(env_id, **policy.required_env_kwargs)``
    (the sweep and ``ClosedLoopEval`` with an env id do). ``env_kwargs``: every gym.make
    kwarg it was trained with (its run's config.yml; {} without one), which
    ``vdsim-gym sweep --own-env`` / ``compare.py --own-env`` sweep it on."""

    def __init__(self, model: Any, obs_rms: Any = None, clip_obs: float = 10.0,
                 epsilon: float = 1e-8, name: str = "",
                 required_env_kwargs: Mapping[str, Any] | None = None,
                 env_kwargs: Mapping[str, Any] | None = None) -> None:
        self.model, self.obs_rms, self.clip_obs, self.epsilon = model, obs_rms, clip_obs, epsilon
        self.name = name
        self.required_env_kwargs: dict[str, Any] = dict(required_env_kwargs or {})
        self.env_kwargs = {**dict(env_kwargs or {}), **self.required_env_kwargs}

    def normalize(self, obs: np.ndarray) -> np.ndarray:
        if self.obs_rms is None:
            return obs
        out = (obs - self.obs_rms.mean) / np.sqrt(self.obs_rms.var + self.epsilon)
        return np.clip(out, -self.clip_obs, self.clip_obs).astype(np.float32)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        obs = np.asarray(observation, dtype=np.float32)
        return self.model.predict(self.normalize(obs), state=state,
                                  episode_start=episode_start, deterministic=deterministic)


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
    the base's state (a PI integrator) restarts on ``episode_start``. The base is built
    for the run's env (``gym.make(env_id, **env_kwargs)``) at the first call, or for an
    env given to ``bind(env)``."""

    def __init__(self, inner: TrainedPolicy, env_id: str, base: str, scale: Any) -> None:
        self.inner, self.env_id, self.base_spec, self.scale = inner, env_id, base, scale
        self.name = inner.name
        self.required_env_kwargs = inner.required_env_kwargs
        self.env_kwargs = inner.env_kwargs
        self._rule: Any = None
        self._n_obs = 0

    def bind(self, env: Any) -> ResidualPolicy:
        """Builds the base controller for ``env`` (its observation must be the run's)."""
        from vdsim_gym.controllers.residual import ResidualCore

        base = getattr(env, "unwrapped", env)
        self._rule = ResidualCore(base_controller(env, self.base_spec), self.scale,
                                  base.action_names)
        self._n_obs = len(base.obs_names)
        return self

    def for_env(self, env: Any) -> ResidualPolicy:
        """A copy bound to ``env`` (the model shared): what a sweep builds per cell, so a
        delay-compensating base compensates that cell's delay."""
        return ResidualPolicy(self.inner, self.env_id, self.base_spec, self.scale).bind(env)

    def factory(self) -> ResidualFactory:
        return ResidualFactory(self)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        if self._rule is None:
            import gymnasium as gym

            env = gym.make(self.env_id, **self.env_kwargs)
            try:
                self.bind(env)
            finally:
                env.close()
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


def shipped_models() -> list[str]:
    """Names of the trained policies that ship with the package (docs/RESULTS.md):
    ``agents/models/<name>`` in a source tree, ``vdsim_gym/_data/models`` in a wheel."""
    from vdsim_gym._data import models_dir

    return sorted(p.name for p in models_dir().iterdir() if (p / "model.zip").is_file())


def shipped_model(name: str) -> Path:
    """The run folder of the shipped policy ``name`` (``shipped_models()``, e.g.
    "dlc_ppo"): ``load_policy(shipped_model("dlc_ppo"))``, or ``str()`` of it as a sweep
    controller spec (``load_controller``). An unknown name is a
    TrainingError listing the shipped ones."""
    from vdsim_gym._data import models_dir

    names = shipped_models()
    if not isinstance(name, str) or name not in names:
        raise TrainingError(f"no shipped model {name!r}; the package ships "
                            f"{', '.join(names) or 'none'}")
    return models_dir() / name


def load_policy(run: str | Path, which: str = "model") -> TrainedPolicy | ResidualPolicy:
    """The policy of a run folder (``which``: "model", the final one, or "best_model",
    EvalCallback's best), or of a ``.zip`` path: with its folder's vecnormalize.pkl
    (best_vecnormalize.pkl for best_model.zip: the statistics when it was saved) when
    present.

    Trust: loading unpickles ``vecnormalize.pkl`` and the model's serialized entries
    (stable-baselines3's ``load`` does too), and unpickling runs code the file names.
    Load only run folders you trust, as with ``torch.load`` and SB3 (docs/TRAINING.md,
    "Using a trained model")."""
    import pickle

    from stable_baselines3.common.base_class import BaseAlgorithm

    path = Path(run)
    if path.suffix == ".zip":
        zip_path, folder = path, path.parent
    else:
        zip_path, folder = path / f"{which}.zip", path
    if not zip_path.exists():
        raise TrainingError(f"no saved model at {zip_path}; a run folder holds model.zip "
                            "(and best_model.zip once an evaluation ran)")
    algo, history, env_kwargs = "ppo", 0, {}
    config: dict[str, Any] = {}
    cfg = folder / "config.yml"
    if cfg.exists():
        config = load_yaml(cfg.read_text()) or {}
        algo = config.get("algo", "ppo")
        env_kwargs = dict(config.get("env_kwargs") or {})
        history = int(config.get("action_history") or env_kwargs.get("action_history") or 0)
    model: BaseAlgorithm = algo_class(check_algo(algo)).load(zip_path, device="cpu")
    obs_rms, clip, eps = None, 10.0, 1e-8
    stats = folder / ("best_vecnormalize.pkl" if zip_path.stem == "best_model"
                      else "vecnormalize.pkl")
    if stats.exists():
        with stats.open("rb") as fh:
            vn = pickle.load(fh)  # noqa: S301  (our own run folder)
        obs_rms = vn.obs_rms if vn.norm_obs else None
        clip, eps = vn.clip_obs, vn.epsilon
    policy = TrainedPolicy(model, obs_rms, clip, eps, name=str(zip_path),
                           required_env_kwargs={"action_history": history} if history
                           else None, env_kwargs=env_kwargs)
    residual = config.get("residual")
    if residual:
        return ResidualPolicy(policy, str(config["env_id"]), str(residual["base"]),
                              residual["scale"])
    return policy


# ------------------------------------------------------------------ controller specs

_SB3_ALGOS = tuple(_MODEL_CLASSES)


def _parse_params(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ConfigError(f"controller parameter {part!r}: write key=value")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"controller parameter {part!r}: {value!r} is not a "
                              "number") from None
    return out


def _baseline(spec: str, params: str, compensated: bool = False) -> Any:
    from vdsim_gym.controllers import PISpeed, Stanley, stanley_dc_pi, stanley_pi

    try:
        p = _parse_params(params)
    except ValueError as exc:
        raise ConfigError(f"{spec!r}: {exc}") from None
    pi: dict[str, Any] = {k: p.pop(k) for k in ("kp", "ki") if k in p}
    delay = _pop_delay(spec, p) if compensated else None
    stanley_sig = inspect.signature(Stanley.__init__)
    try:  # unknown parameters fail now, not in a worker
        stanley_sig.bind(None, None, wheelbase=1, cg_to_front=1, max_steer=1, **p)
        inspect.signature(PISpeed.__init__).bind(None, None, dt=1, **pi)
    except TypeError as exc:
        tunable = [k for k, q in stanley_sig.parameters.items() if q.default is not q.empty]
        extra = ", delay (s; default: the env's loop delay)" if compensated else ""
        raise ConfigError(f"{spec!r}: {exc}; Stanley takes {', '.join(tunable)}, the PI "
                          f"speed loop kp, ki{extra}") from None
    if compensated:
        return functools.partial(stanley_dc_pi, delay=delay, stanley=p or None, pi=pi or None)
    return functools.partial(stanley_pi, stanley=p or None, pi=pi or None)


def _sb3_model(spec: str, algo: str | None) -> tuple[str, Any]:
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
        policy = load_policy(path)
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
    names = [_check_algo(algo)] if algo else sorted(_SB3_ALGOS, key=lambda n: n != guess)
    errors = []
    for n in names:
        try:
            cls = algo_class(n)
        except ImportError:
            if algo:
                raise
            continue  # sb3-contrib not installed: its algorithms are not tried
        try:
            return path.stem, cls.load(path, device="cpu")
        except Exception as exc:  # noqa: BLE001  (try the next algorithm)
            errors.append(f"{n}: {type(exc).__name__}: {exc}")
    raise ConfigError(f"{spec!r}: could not load {path} as an SB3 model ({'; '.join(errors)}); "
                      f"pass --algo ({', '.join(_SB3_ALGOS)}) if it is one")


def _algo_of_file(path: Path) -> str | None:
    """The algorithm a saved model names through its policy's module
    ("sb3_contrib.tqc.policies": TQC), or None (PPO and A2C share theirs; an unreadable
    file). Another class's ``load`` can read a file without an error (SAC reads TQC's),
    so the named one is tried first."""
    import json
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data"))
        parts = str(data["policy_class"]["__module__"]).split(".")
    except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile):
        return None
    name = parts[-2].upper() if len(parts) >= 3 and parts[-1] == "policies" else None
    return name if name in _MODEL_CLASSES else None


def _check_algo(algo: str) -> str:
    if not isinstance(algo, str) or algo.upper() not in _SB3_ALGOS:
        raise ConfigError(f"--algo {algo!r}: not an SB3 algorithm; use one of "
                          f"{', '.join(_SB3_ALGOS)}")
    return algo.upper()


def load_controller(spec: str, algo: str | None = None) -> tuple[str, Any]:
    """(name, policy) from "stanley", "stanley:gain=2,kp=0.3" (kp, ki go to the PI speed
    loop, the rest to Stanley), "stanley_dc[:delay=S,...]" (Stanley on the state predicted
    across the loop delay: the cell's own unless ``delay`` is given), "acc_pid_dc[:...]" and
    "idm_dc[:...]" (the same for car following), "mpc[:...]" (linear
    MPC steering with OSQP, the same delay rule; the ``mpc`` extra), "acc_pid[:...]",
    "idm[:...]" (VDSim-ACC-v0's baselines), "cycle_follower[:...]" (VDSim-Dyno-v0's) or the
    path of a saved SB3 model (``algo`` or each of PPO, SAC, TD3, A2C, DDPG is tried), or an
    agents/train.py run folder or model in one (its vecnormalize.pkl normalizes the
    observations; named after the folder). Errors start with the quoted spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{spec!r} is not a controller; pass stanley, stanley:key=value,... "
                          "or the path of a saved SB3 model")
    name, _, params = spec.partition(":")
    if name in ("stanley", "stanley_dc"):
        return spec, _baseline(spec, params, compensated=name == "stanley_dc")
    if name == "mpc":
        return spec, _mpc(spec, params)
    if name in ("acc_pid", "idm"):
        return spec, _car_following(spec, name, params)
    if name in ("acc_pid_dc", "idm_dc"):
        return spec, _car_following_dc(spec, name, params)
    if name == "cycle_follower":
        return spec, _cycle_follower(spec, params)
    return _sb3_model(spec, algo)


def _mpc(spec: str, params: str) -> Any:
    """The MPC steering + PI speed baseline: "mpc[:delay=S,horizon=N,q_y=..,...,kp=..]"."""
    from vdsim_gym.controllers.mpc import MPCSteer, mpc_pi

    try:
        p = _parse_params(params)
    except ValueError as exc:
        raise ConfigError(f"{spec!r}: {exc}") from None
    pi: dict[str, Any] = {k: p.pop(k) for k in ("kp", "ki") if k in p}
    delay = _pop_delay(spec, p)
    sig = inspect.signature(MPCSteer.__init__)
    tunable = [k for k, q in sig.parameters.items() if q.kind == q.KEYWORD_ONLY
               and k != "delay"]
    unknown = sorted(set(p) - set(tunable))
    if unknown:
        raise ConfigError(f"{spec!r}: unknown parameter {unknown[0]!r}; mpc takes "
                          f"{', '.join(tunable)}, delay (s; default: the env's loop delay), "
                          "the PI speed loop kp, ki")
    if "horizon" in p:
        if p["horizon"] != int(p["horizon"]) or p["horizon"] < 1:
            raise ConfigError(f"{spec!r}: horizon must be a whole number of steps >= 1")
        p["horizon"] = int(p["horizon"])
    return functools.partial(mpc_pi, delay=delay, mpc=p or None, pi=pi or None)


def _cycle_follower(spec: str, params: str) -> Any:
    """VDSim-Dyno-v0's baseline: "cycle_follower[:lookahead_s=..,horizon_s=..]"."""
    from vdsim_gym.controllers import cycle_follower

    raw = _key_values(spec, params)
    unknown = sorted(set(raw) - {"lookahead_s", "horizon_s"})
    if unknown:
        raise ConfigError(f"{spec!r}: unknown parameter {unknown[0]!r}; cycle_follower takes "
                          "lookahead_s, horizon_s")
    return functools.partial(cycle_follower, **{k: _param_number(spec, v)
                                                for k, v in raw.items()})


def _car_following_dc(spec: str, name: str, params: str) -> Any:
    """"acc_pid_dc[:delay=S,...]", "idm_dc[:delay=S,...]": the car-following baseline on
    the gap predicted across the loop delay (the cell's own unless ``delay`` is given);
    the other parameters are acc_pid's or idm's."""
    raw: dict[str, Any] = _key_values(spec, params)
    if "delay" in raw:
        raw["delay"] = _param_number(spec, raw["delay"])
    delay = _pop_delay(spec, raw)
    inner = _car_following(spec, name[:-3], ",".join(f"{k}={v}" for k, v in raw.items()))
    return functools.partial(_dc_factory, inner, delay)


def _pop_delay(spec: str, params: dict[str, Any]) -> float | None:
    """A compensating baseline's ``delay=`` taken out of its parameters (None: the env's
    loop delay); a negative or NaN one is an error quoting the spec."""
    delay = params.pop("delay", None)
    if delay is not None and not delay >= 0.0:
        raise ConfigError(f"{spec!r}: delay must be >= 0 s, got {delay!r}")
    return delay


def _dc_factory(inner: Any, delay: float | None, env: Any) -> Any:
    from vdsim_gym.controllers.acc_dc import _compensated

    return _compensated(env, inner(env), delay)


def _car_following(spec: str, name: str, params: str) -> Any:
    """The car-following baselines (VDSim-ACC-v0): "acc_pid[:gains=FILE,
    emergency_ttc_threshold=S,emergency_hysteresis=S]" and "idm[:v0=..,time_headway=..,
    min_gap=..,a_max=..,b_comfort=..,delta=..]"."""
    from vdsim_gym.controllers import IDM, acc_pid, idm_follower, load_gains

    raw = _key_values(spec, params)
    if name == "acc_pid":
        unknown = sorted(set(raw) - {"gains", "emergency_ttc_threshold",
                                     "emergency_hysteresis"})
        if unknown:
            raise ConfigError(f"{spec!r}: unknown parameter {unknown[0]!r}; acc_pid takes "
                              "gains (a tuning_results.yaml file), emergency_ttc_threshold, "
                              "emergency_hysteresis")
        kw: dict[str, Any] = {}
        if "gains" in raw:
            try:
                kw["gains"] = load_gains(raw["gains"])
            except ValueError as exc:
                raise ConfigError(f"{spec!r}: {exc}") from None
        if "emergency_ttc_threshold" in raw:
            kw["emergency_ttc_threshold"] = _param_number(spec, raw["emergency_ttc_threshold"])
        if "emergency_hysteresis" in raw:
            kw["emergency_hysteresis"] = _param_number(spec, raw["emergency_hysteresis"])
            if kw["emergency_hysteresis"] < 0:
                raise ConfigError(f"{spec!r}: emergency_hysteresis must be >= 0 s")
        return functools.partial(acc_pid, **kw)
    fields = set(inspect.signature(IDM).parameters) - {"max_acceleration", "max_deceleration"}
    unknown = sorted(set(raw) - fields)
    if unknown:
        raise ConfigError(f"{spec!r}: unknown parameter {unknown[0]!r}; idm takes "
                          f"{', '.join(sorted(fields))}")
    kw = {k: _param_number(spec, v) for k, v in raw.items()}
    try:
        IDM(**kw)  # bad values now, not in a worker
    except ValueError as exc:
        raise ConfigError(f"{spec!r}: {exc}") from None
    return functools.partial(idm_follower, **kw)


def _key_values(spec: str, params: str) -> dict[str, str]:
    """A baseline's parameters after the spec's colon, "key=value,...", as text by key
    (cycle_follower, acc_pid, idm): empty parts are skipped; a part without "=" or a key
    given twice is an error quoting the spec."""
    raw = dict(item.split("=", 1) for item in params.split(",") if "=" in item) \
        if params else {}
    if params and len(raw) != len([i for i in params.split(",") if i]):
        raise ConfigError(f"{spec!r}: parameters are key=value, comma-separated")
    return raw


def _param_number(spec: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"{spec!r}: {text!r} is not a number") from None


__all__ = ["ALGOS", "ResidualFactory", "ResidualPolicy", "TrainedPolicy", "TrainingError",
           "base_controller", "check_algo", "load_controller", "load_policy",
           "required_env_kwargs", "shipped_model", "shipped_models"]
