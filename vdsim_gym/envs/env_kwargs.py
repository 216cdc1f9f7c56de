"""The keyword arguments of an env (a part of ``CoreEnv``, split from core_env.py by job):
the physics keywords (``physics_keys``), every keyword an env takes (``kwarg_names``), the
check of ``time_limit`` and the merge of a task's ``reward_weights``
(``merge_reward_weights``)."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, cast

from vdsim_gym._checks import is_real
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.plant import PhysicsSpec

MAX_TIME_LIMIT_S = 3600.0  # [s]: longer episodes are a mistake (seconds, not steps)
PHYSICS_KEYS: tuple[str, ...] = tuple(
    name for name in inspect.signature(PhysicsSpec.build).parameters if name != "cls")


@functools.lru_cache(maxsize=256)
def _keyword_only(fn: Any) -> tuple[str, ...]:
    return tuple(n for n, q in inspect.signature(fn).parameters.items()
                 if q.kind == q.KEYWORD_ONLY)


@functools.lru_cache(maxsize=64)
def constructor_keywords(cls: Any) -> tuple[str, ...]:
    """The keyword-only arguments of an env class's constructors, in order: its own
    __init__'s, then its bases' while each passes **kwargs on."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters.values()
        names += [q.name for q in params if q.kind == q.KEYWORD_ONLY and q.name not in names]
        if not any(q.kind == q.VAR_KEYWORD for q in params):
            break
    return tuple(names)


def merge_reward_weights(defaults: Mapping[str, float],
                         given: Mapping[str, float] | None) -> dict[str, float]:
    """``defaults`` with the weights ``given`` replaced; unknown names and non-finite
    values are refused naming the valid terms."""
    weights = dict(defaults)
    for k, v in (given or {}).items():
        if k not in weights:
            raise ConfigError(f"unknown reward weight {k!r}; valid: {', '.join(weights)}")
        if not is_real(v) or not math.isfinite(v):
            raise ConfigError(f"reward weight {k!r} must be a finite number, got {v!r}")
        weights[k] = float(v)
    return weights


class EnvKwargs:
    """The keyword-argument part of ``CoreEnv`` (its base): ``PHYSICS`` and ``_make_core``
    are the env's (``CoreEnv``'s and its task's)."""

    PHYSICS: Any
    _make_core: Callable[..., Any]

    @classmethod
    def kwarg_names(cls) -> set[str]:
        """Every keyword argument the env takes (its class's and its bases' __init__
        while they pass **kwargs on, the physics keywords, the task core's)."""
        return set(cls.physics_keys()) | set(_keyword_only(cls._make_core)) \
            | set(constructor_keywords(cast(Any, cls)))

    @classmethod
    def physics_keys(cls) -> tuple[str, ...]:
        """The physics keywords: the parameters of ``PHYSICS.build``."""
        if cls.PHYSICS is PhysicsSpec:
            return PHYSICS_KEYS
        return tuple(n for n in inspect.signature(cls.PHYSICS.build).parameters if n != "cls")

    @staticmethod
    def _check_time_limit(value: Any) -> float | None:
        if value is None:
            return None
        if not is_real(value) \
                or not math.isfinite(value) or not 0 < value <= MAX_TIME_LIMIT_S:
            raise ConfigError(f"time_limit must be None or seconds in (0, {MAX_TIME_LIMIT_S:g}]"
                              f", got {value!r} (it is simulated time, not a step count)")
        return float(value)


__all__ = ["MAX_TIME_LIMIT_S", "PHYSICS_KEYS", "EnvKwargs", "constructor_keywords",
           "merge_reward_weights"]
