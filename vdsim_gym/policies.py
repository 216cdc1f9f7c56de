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
import io
import math
import pickle
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._files import read_user_bytes
from vdsim_gym.errors import ConfigError, TrainingError

# Every model class by its upper-case name: (module, class). The training algorithms are
# the lower-case ALGOS; TQC and CrossQ come from sb3-contrib (the train extra).
_MODEL_CLASSES: dict[str, tuple[str, str]] = {
    "PPO": ("stable_baselines3", "PPO"), "SAC": ("stable_baselines3", "SAC"),
    "TD3": ("stable_baselines3", "TD3"), "TQC": ("sb3_contrib", "TQC"),
    "CROSSQ": ("sb3_contrib", "CrossQ"), "A2C": ("stable_baselines3", "A2C"),
    "DDPG": ("stable_baselines3", "DDPG")}
ALGOS = ("ppo", "sac", "td3", "tqc", "crossq")


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
        if shape is not None and tuple(shape) != (n_obs + rule.m,):
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
    policy = TrainedPolicy(model, obs_rms, clip, eps, name=str(zip_path),
                           required_env_kwargs=required or None, env_kwargs=env_kwargs)
    if residual:
        out = ResidualPolicy(policy, residual["env_id"], residual["base"], residual["scale"])
        return out.bind(env) if env is not None else out
    return policy


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


def check_algo_in(algo: Any, where: Path) -> str:
    """``check_algo`` for a run's config.yml: the error names the file."""
    try:
        return check_algo(algo)
    except TrainingError as exc:
        raise TrainingError(f"{where}: {exc}") from None


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


# ------------------------------------------------------------------ loading safely

# A model.zip is read whole (its pickled entries and the weights come from the same
# bytes, checked once); larger is not a policy of this package.
MODEL_MAX_BYTES = 2**30
# vecnormalize.pkl: a few KiB (the running mean and variance of the observation).
STATS_MAX_BYTES = 64 * 2**20

# What the data unpickler may build: numpy arrays and random generators, Gymnasium
# spaces, collections, SB3's schedules, train frequency and statistics classes. Each is
# data or a constructor of data; nothing here runs code named by the file.
_SAFE_GLOBALS = frozenset({
    *((m, n) for m in ("numpy._core.multiarray", "numpy.core.multiarray")
      for n in ("_reconstruct", "scalar")),
    ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
    ("numpy", "dtype"), ("numpy", "ndarray"),
    *(("numpy.dtypes", n) for n in ("Float32DType", "Float64DType", "Int64DType",
                                    "Int32DType", "Int8DType", "UInt8DType", "BoolDType")),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random._pickle", "__randomstate_ctor"),
    ("numpy.random._pcg64", "PCG64"), ("numpy.random._pcg64", "PCG64DXSM"),
    ("numpy.random._mt19937", "MT19937"), ("numpy.random._philox", "Philox"),
    ("numpy.random._sfc64", "SFC64"), ("numpy.random.bit_generator", "SeedSequence"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    ("gymnasium.spaces.box", "Box"), ("gymnasium.spaces.discrete", "Discrete"),
    ("gymnasium.spaces.multi_discrete", "MultiDiscrete"),
    ("gymnasium.spaces.multi_binary", "MultiBinary"), ("gymnasium.spaces.dict", "Dict"),
    ("gymnasium.spaces.tuple", "Tuple"),
    ("collections", "OrderedDict"), ("collections", "deque"),
    ("stable_baselines3.common.utils", "FloatSchedule"),
    ("stable_baselines3.common.utils", "ConstantSchedule"),
    ("stable_baselines3.common.utils", "LinearSchedule"),
    ("stable_baselines3.common.type_aliases", "TrainFreq"),
    ("stable_baselines3.common.type_aliases", "TrainFrequencyUnit"),
    ("stable_baselines3.common.running_mean_std", "RunningMeanStd"),
    ("stable_baselines3.common.vec_env.vec_normalize", "VecNormalize"),
    *(("stable_baselines3.common.buffers", n) for n in (
        "RolloutBuffer", "DictRolloutBuffer", "ReplayBuffer", "DictReplayBuffer")),
    *(("stable_baselines3.common.torch_layers", n) for n in (
        "FlattenExtractor", "NatureCNN", "CombinedExtractor")),
    *(("torch.optim." + m, n) for m, n in (("adam", "Adam"), ("adamw", "AdamW"),
                                            ("rmsprop", "RMSprop"), ("sgd", "SGD"))),
})
# Module patterns whose classes of a given base are allowed: SB3's and sb3-contrib's
# policy classes, torch's activation layers (policy_kwargs' activation_fn).
_SAFE_CLASS_MODULES = (
    (re.compile(r"(stable_baselines3|sb3_contrib)(\.\w+)*\.policies"),
     "stable_baselines3.common.policies", "BasePolicy"),
    (re.compile(r"torch\.nn\.modules\.activation"), "torch.nn", "Module"),
)


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle names something other than data (``_SAFE_GLOBALS``): loading it would
    run code the file chose."""


class _DataUnpickler(pickle.Unpickler):
    """An unpickler that builds only the data classes of ``_SAFE_GLOBALS`` (Python's
    documented way, "Restricting Globals"); anything else is an UnsafePickleError."""

    def find_class(self, module: str, name: str) -> Any:
        import importlib

        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        for pattern, base_module, base_name in _SAFE_CLASS_MODULES:
            if pattern.fullmatch(module) and name.isidentifier():
                try:
                    obj = getattr(importlib.import_module(module), name)
                    base = getattr(importlib.import_module(base_module), base_name)
                except (ImportError, AttributeError):
                    break
                if isinstance(obj, type) and issubclass(obj, base):
                    return obj
                break
        raise UnsafePickleError(f"it names {module}.{name}, which is not data this "
                                "package reads without trust")


def _data_loads(raw: bytes) -> Any:
    return _DataUnpickler(io.BytesIO(raw)).load()


# Saved entries a prediction does not need, with a stand-in when they cannot be read as
# data (a schedule written as a function): a training state, not the policy.
_NOT_FOR_PREDICT: dict[str, Any] = {
    "learning_rate": 0.0, "lr_schedule": None, "clip_range": 0.0, "clip_range_vf": None,
    "train_freq": None, "_last_obs": None, "_last_episode_starts": None,
    "_last_original_obs": None, "ep_info_buffer": None, "ep_success_buffer": None,
    "rollout_buffer_class": None, "rollout_buffer_kwargs": {},
    "replay_buffer_class": None, "replay_buffer_kwargs": {}, "action_noise": None,
    "exploration_schedule": None, "sde_sample_freq": -1,
}


def _saved_algo(data: Mapping[str, Any]) -> str | None:
    """The algorithm a saved model names through its policy class's module
    ("stable_baselines3.sac.policies": SAC), read from the zip's json without
    unpickling; None when the module does not tell (PPO and A2C share theirs)."""
    entry = data.get("policy_class")
    module = entry.get("__module__") if isinstance(entry, Mapping) else None
    parts = str(module or "").split(".")
    name = parts[-2].upper() if len(parts) >= 3 and parts[-1] == "policies" else None
    return name if name in _MODEL_CLASSES else None


def load_sb3_model(zip_path: str | Path, algo: str | None = None, *, trust: bool = False,
                   where: str | None = None) -> Any:
    """The SB3 model saved in ``zip_path`` as ``algo`` (a model class name: "ppo",
    "SAC", ...; None: the one the file names, else PPO), on the CPU. The file is read
    once (a regular file: ``open_user_file``); without ``trust`` its pickled entries are
    read as data only (``load_policy``); a model of another algorithm is a TrainingError
    naming both (``where``: what chose ``algo``, e.g. "config.yml says algo: ppo" or
    "--algo ppo")."""
    import json
    import zipfile

    zip_path = Path(zip_path)
    raw = read_user_bytes(zip_path, "the model", MODEL_MAX_BYTES)
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            bad = zf.testzip()
            if bad is not None:
                raise zipfile.BadZipFile(f"entry {bad!r} is corrupt")
            if "data" not in zf.namelist():
                raise TrainingError(f"{zip_path}: not a readable SB3 model (a zip without "
                                    "SB3's 'data' entry); the file is truncated or not one "
                                    "SB3's save wrote: copy it again from the run")
            data = json.loads(zf.read("data"))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError) as exc:
        if isinstance(exc, TrainingError):
            raise
        raise TrainingError(f"{zip_path}: not a readable SB3 model ({exc}); the file is "
                            "truncated or corrupt: copy it again from the run (or save the "
                            "model again)") from None
    if not isinstance(data, dict):
        raise TrainingError(f"{zip_path}: its 'data' entry is not SB3's mapping; give the "
                            "model.zip that SB3's save wrote")
    saved = _saved_algo(data)
    cls = algo_class(algo if algo is not None else saved or "ppo")
    name = cls.__name__
    because = f" ({where})" if where else ""
    if saved is not None and saved != name.upper():
        raise TrainingError(f"{zip_path}: the model was saved by {_MODEL_CLASSES[saved][1]}, "
                            f"not {name}{because}; load it as {saved.lower()} (the run's "
                            "own algo), or put this run's own model back")
    custom: dict[str, Any] | None = None
    if not trust:
        custom = _data_entries(zip_path, data)
        policy_class = custom.get("policy_class", data.get("policy_class"))
        if policy_class not in set(cls.policy_aliases.values()):
            label = getattr(policy_class, "__name__", repr(policy_class))
            raise TrainingError(f"{zip_path}: its policy class {label} is not one of {name}'s "
                                f"({', '.join(sorted(cls.policy_aliases))}){because}; load "
                                "it with its own algorithm, or with trust=True (--trust) "
                                "if it is a custom policy of a folder you trust")
    try:
        return cls.load(io.BytesIO(raw), device="cpu", custom_objects=custom)
    except Exception as exc:  # noqa: BLE001  (SB3's many errors: one message)
        raise TrainingError(f"{zip_path}: cannot load as {name}{because} "
                            f"({type(exc).__name__}: {exc}); if the run used another "
                            "algorithm, load it with that one") from None


def _data_entries(zip_path: Path, data: Mapping[str, Any]) -> dict[str, Any]:
    """Every pickled entry of a saved model's data (``:serialized:``) read as data only
    (``_DataUnpickler``), for SB3's ``custom_objects`` so that SB3 unpickles none;
    an entry a prediction does not need gets a stand-in when it is not plain data, one
    it needs (the policy class, the spaces, policy_kwargs) is a TrainingError naming it
    and the way to load it anyway."""
    import base64

    out: dict[str, Any] = {}
    for key, item in data.items():
        if not (isinstance(item, Mapping) and ":serialized:" in item):
            continue
        try:
            out[key] = _data_loads(base64.b64decode(str(item[":serialized:"])))
        except Exception as exc:  # noqa: BLE001  (refused or unreadable: same answer)
            if key in _NOT_FOR_PREDICT:
                import warnings

                out[key] = _NOT_FOR_PREDICT[key]
                warnings.warn(f"{zip_path}: the saved entry {key!r} was left out, not "
                              f"unpickled ({exc}); a prediction does not need it. "
                              "load_policy(..., trust=True) reads it, only for a folder "
                              "you trust", UserWarning, stacklevel=4)
                continue
            why = str(exc) if isinstance(exc, UnsafePickleError) else \
                f"it cannot be read as data ({type(exc).__name__}: {exc})"
            raise TrainingError(f"{zip_path}: the saved entry {key!r} is pickled code: "
                                f"{why}. Load it with trust=True (--trust) only if you "
                                "trust the folder: unpickling runs what the file names") \
                from None
    return out


def load_vecnormalize(path: str | Path, *, trust: bool = False) -> Any:
    """The ``VecNormalize`` statistics pickled at ``path`` (a run's vecnormalize.pkl),
    read as data only unless ``trust`` (``load_policy``); an empty or truncated file, a
    pickle of another object or one naming code is a TrainingError naming the file."""
    from stable_baselines3.common.vec_env import VecNormalize

    path = Path(path)
    raw = read_user_bytes(path, "the normalization statistics", STATS_MAX_BYTES)
    if not raw:
        raise TrainingError(f"{path}: empty; it should hold the run's VecNormalize "
                            "statistics: copy it again from the run, or remove it to run "
                            "the model without normalization")
    try:
        vn = pickle.loads(raw) if trust else _data_loads(raw)  # noqa: S301  (trusted)
    except UnsafePickleError as exc:
        raise TrainingError(f"{path}: not the run's statistics: {exc}. Load it with "
                            "trust=True (--trust) only if you trust the folder: unpickling "
                            "runs what the file names") from None
    except Exception as exc:  # noqa: BLE001  (a damaged pickle raises many kinds)
        raise TrainingError(f"{path}: not a readable pickle ({type(exc).__name__}: {exc}); "
                            "the file is truncated or corrupt: copy it again from the "
                            "run") from None
    if not isinstance(vn, VecNormalize) or not hasattr(vn, "obs_rms"):
        raise TrainingError(f"{path}: holds a {type(vn).__name__}, not SB3's VecNormalize "
                            "statistics; put the run's own file back (VecNormalize.save "
                            "writes it)")
    return vn


def _check_stats_fit(stats: Path, obs_rms: Any, model: Any, zip_path: Path) -> None:
    shape = getattr(getattr(model, "observation_space", None), "shape", None)
    mean = np.asarray(getattr(obs_rms, "mean", None))
    if shape is not None and mean.shape != tuple(shape):
        raise TrainingError(f"{stats}: statistics of observations of shape {mean.shape}, but "
                            f"{zip_path.name} takes {tuple(shape)}; the two files come from "
                            "different runs: put the run's own statistics back")


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
    names = [_check_algo(algo)] if algo else sorted(_SB3_ALGOS, key=lambda n: n != guess)
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
                      f"pass --algo ({', '.join(_SB3_ALGOS)}) if it is one")


def _algo_of_file(path: Path) -> str | None:
    """The algorithm a saved model names through its policy's module
    ("sb3_contrib.tqc.policies": TQC), or None (PPO and A2C share theirs; an unreadable
    file). Another class's ``load`` can read a file without an error (SAC reads TQC's),
    so the named one is tried first."""
    import json
    import zipfile

    raw = read_user_bytes(path, "the model", MODEL_MAX_BYTES)  # a FIFO: refused, named
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            data = json.loads(zf.read("data"))
    except (OSError, KeyError, TypeError, ValueError, zipfile.BadZipFile):
        return None
    return _saved_algo(data) if isinstance(data, dict) else None


def _check_algo(algo: str) -> str:
    if not isinstance(algo, str) or algo.upper() not in _SB3_ALGOS:
        raise ConfigError(f"--algo {algo!r}: not an SB3 algorithm; use one of "
                          f"{', '.join(_SB3_ALGOS)}")
    return algo.upper()


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
        h = p["horizon"]
        if not math.isfinite(h) or h != int(h) or h < 1:
            raise ConfigError(f"{spec!r}: horizon must be a whole number of steps >= 1, got "
                              f"{h!r}; e.g. horizon=20")
        p["horizon"] = int(h)
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



# The baselines by name: factory(spec, params) -> the controller (a callable of the env),
# ``params`` the text after "name:". In the order ``vdsim-gym sweep`` tries them on an env.
BASELINES: dict[str, Callable[[str, str], Any]] = {
    "stanley": lambda spec, params: _baseline(spec, params),
    "stanley_dc": lambda spec, params: _baseline(spec, params, compensated=True),
    "mpc": _mpc,
    "acc_pid": lambda spec, params: _car_following(spec, "acc_pid", params),
    "acc_pid_dc": lambda spec, params: _car_following_dc(spec, "acc_pid_dc", params),
    "idm": lambda spec, params: _car_following(spec, "idm", params),
    "idm_dc": lambda spec, params: _car_following_dc(spec, "idm_dc", params),
    "cycle_follower": _cycle_follower,
}

__all__ = ["ALGOS", "BASELINES", "ResidualFactory", "ResidualPolicy", "TrainedPolicy",
           "UnsafePickleError", "base_controller", "check_algo", "load_controller",
           "load_policy", "load_sb3_model", "load_vecnormalize", "required_env_kwargs",
           "shipped_model", "shipped_models"]
