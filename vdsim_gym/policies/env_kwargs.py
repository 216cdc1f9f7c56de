"""What a policy needs of its env's observation, merged into an env's kwargs
(``required_env_kwargs``: the sweep and ``ClosedLoopEval`` apply it without importing the
trainer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vdsim_gym.errors import ConfigError


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
