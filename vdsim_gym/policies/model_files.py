"""A saved model (model.zip) and its normalization statistics (vecnormalize.pkl) read from
their files: bounded, each problem a TrainingError naming the file, and without ``trust``
unpickled as data only (``UnsafePickleError`` for anything else)."""

from __future__ import annotations

import io
import pickle
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vdsim_gym._files import read_user_bytes
from vdsim_gym.errors import TrainingError
from vdsim_gym.policies.algos import _MODEL_CLASSES, algo_class

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
# policy classes and this package's asymmetric ones (a privileged critic), torch's
# activation layers (policy_kwargs' activation_fn).
_SAFE_CLASS_MODULES = (
    (re.compile(r"(stable_baselines3|sb3_contrib)(\.\w+)*\.policies"
                r"|vdsim_gym\.policies\.asymmetric"),
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


def _asymmetric_of(policy_class: Any, cls: Any) -> bool:
    """Whether ``policy_class`` is an asymmetric policy (``vdsim_gym.policies.asymmetric``)
    built on one of ``cls``'s own policy classes."""
    return isinstance(policy_class, type) \
        and policy_class.__module__ == "vdsim_gym.policies.asymmetric" \
        and any(issubclass(policy_class, base) for base in cls.policy_aliases.values())


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
        if policy_class not in set(cls.policy_aliases.values()) \
                and not _asymmetric_of(policy_class, cls):
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
