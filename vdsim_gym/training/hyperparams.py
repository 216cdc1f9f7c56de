"""rl-zoo3's hyperparameter files: ``load_hyperparams`` reads one env id's block of
``agents/hyperparams/<algo>.yml`` (or another file) and checks it; ``policy_kwargs`` and
``normalize`` are read as rl-zoo3 writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vdsim_gym._files import read_yaml
from vdsim_gym.errors import TrainingError
from vdsim_gym.policies.algos import check_algo

# rl-zoo3 keys this trainer does not support (rl_zoo3 itself does).
_UNSUPPORTED_ZOO_KEYS = ("env_wrapper", "frame_stack", "callback", "vec_env_wrapper",
                         "normalize_kwargs", "replay_buffer_class",
                         "replay_buffer_kwargs")


def _eval_policy_kwargs(text: str, where: str) -> dict[str, Any]:
    """rl-zoo3 writes policy_kwargs as a Python expression ("dict(net_arch=[64, 64])");
    evaluated with only dict, list, tuple and torch.nn in scope."""
    import torch

    try:
        value = eval(text, {"__builtins__": {}}, {"dict": dict, "list": list,  # noqa: S307
                                                 "tuple": tuple, "nn": torch.nn})
    except Exception as exc:
        raise TrainingError(f"{where}: policy_kwargs {text!r} is not a valid expression "
                            f"({exc})") from None
    if not isinstance(value, dict):
        raise TrainingError(f"{where}: policy_kwargs must be a dict, got {value!r}")
    return value


def load_hyperparams(algo: str, env_id: str, path: str | Path | None = None
                     ) -> dict[str, Any]:
    """The ``env_id`` block of ``agents/hyperparams/<algo>.yml`` (or ``path``), rl-zoo3's
    format. Unknown env ids and keys this trainer does not support are errors."""
    algo = check_algo(algo)
    from vdsim_gym._data import hyperparams_dir

    file = Path(path) if path is not None else hyperparams_dir() / f"{algo}.yml"
    data = read_yaml(file, "the hyperparameter file")
    if not isinstance(data, dict) or env_id not in data:
        known = ", ".join(sorted(data)) if isinstance(data, dict) else "none"
        raise TrainingError(f"{file}: no block for {env_id!r} (blocks: {known}); add one in "
                            "rl-zoo3's format")
    block = dict(data[env_id] or {})
    bad = [k for k in block if k in _UNSUPPORTED_ZOO_KEYS]
    if bad:
        raise TrainingError(f"{file} [{env_id}]: {', '.join(bad)} not supported by "
                            "agents/train.py (use rl_zoo3 itself for them)")
    if isinstance(block.get("policy_kwargs"), str):
        block["policy_kwargs"] = _eval_policy_kwargs(block["policy_kwargs"],
                                                     f"{file} [{env_id}]")
    return block


def _normalize_kwargs(value: Any) -> dict[str, Any] | None:
    """rl-zoo3's ``normalize``: false, true, or a dict (or its string) of VecNormalize
    keywords."""
    if value in (None, False):
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        import ast

        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise TrainingError(f"normalize {value!r}: expected true, false or a dict") from None
    if not isinstance(value, dict):
        raise TrainingError(f"normalize {value!r}: expected true, false or a dict")
    return dict(value)
