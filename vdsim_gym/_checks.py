"""One check per input: the ``check_*`` helpers every module validates its inputs with.

Each helper takes the value and the name the caller knows it by, returns the value in
its canonical type (``int``, ``float``, ``bool``, a list of floats) and raises an error
of ``vdsim_gym.errors`` that names the argument, the value, the bound and the fix:
``InvalidActionError`` for actions, ``ConfigError`` for everything else (both are
``ValueError``s, as before). A bound written here is the package's only copy of it.

Conventions shared by every helper:

- a boolean is never a number (``True`` is not 1 step, 1 s or a full steer);
- integers are Python's or numpy's (``np.int64(4)`` is 4 envs), never floats (4.0);
- real numbers are Python's or numpy's ints and floats (not strings, complex, bools).

The action check runs on every step that the C++ step does not take as it is (see
``check_action``); everything else runs once, when an object is built or configured.
This module sits below every other one (it imports numpy and ``errors`` only).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError, InvalidActionError

# Actions within this of [-1, 1] are clipped, beyond it rejected: float32 policies
# rounding 1.0 up pass. The C++ steps (GymStepper, VectorEnvCore.step_fast) take it as
# their action_tol argument, so the fast path and this check agree.
ACTION_TOL = 1.0 + 1e-6
MAX_ACTION_HISTORY = 1000  # actions kept in the observation (more is a units slip)
MAX_NUM_ENVS = 100_000  # envs in one vector env: each holds its C++ core and course (~60 KiB)

_INTEGER = (int, np.integer)
_REAL = (int, float, np.integer, np.floating)


def is_integer(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, _INTEGER) and not isinstance(value, bool)


def is_real(value: Any) -> bool:
    """A Python or numpy int or float, not a bool (numpy bools are not numbers either)."""
    return isinstance(value, _REAL) and not isinstance(value, bool)


# ---------------------------------------------------------------- actions


def check_action(action: Any, names: Sequence[str], _tol: float = ACTION_TOL) -> list[float]:
    """One env's action as floats within [-1, 1] (+ ``ACTION_TOL`` slack; the caller
    clips). ``names``: the env's ``action_names`` (their count is the action size).
    Accepts any real (int or float) array-like of that shape; refuses booleans, strings,
    complex numbers, other shapes, NaN, inf and values beyond the bound
    (``InvalidActionError``). Fast for a float ndarray of the right shape."""
    n = len(names)
    if action.__class__ is np.ndarray and action.shape == (n,) and action.dtype.kind == "f":
        a = action.tolist()
    else:
        a = coerce_action(action, names)
    # Chained comparisons catch out-of-range and NaN (NaN compares False); the common
    # two-action case without a generator.
    if n == 2:
        a0, a1 = a
        if not (-_tol <= a0 <= _tol and -_tol <= a1 <= _tol):
            reject_action(a)
    elif not all(-_tol <= v <= _tol for v in a):
        reject_action(a)
    return a


def coerce_action(action: Any, names: Sequence[str]) -> list[float]:
    """``action`` as ``len(names)`` floats (not range-checked); ``InvalidActionError`` for
    booleans, strings, complex numbers, objects and other shapes."""
    n = len(names)
    what = f"{n} real number{'s' if n > 1 else ''} ({', '.join(names)})"
    try:
        arr = np.asarray(action)
        # booleans, strings, complex, objects: not an action ([True, False] would read as
        # full steer, no pedal)
        if arr.dtype.kind not in "iuf":
            raise TypeError
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InvalidActionError(
            f"action must be {what} in [-1, 1], got {action!r}"
            + (f" (dtype {arr.dtype})" if isinstance(action, np.ndarray) else "")
        ) from None
    if arr.shape != (n,):
        raise InvalidActionError(
            f"action must have shape ({n},) = ({', '.join(names)}), got shape {arr.shape}; "
            "pass one action per step (for batches use a vector env)"
        )
    return arr.tolist()


def reject_action(a: Sequence[float]) -> None:
    """Raises the error for an action with NaN, inf or values beyond [-1, 1]."""
    shown = ", ".join(f"{v}" for v in a)
    if any(math.isnan(v) for v in a):
        raise InvalidActionError(
            f"action contains NaN ({shown}); the policy produced NaN, check its inputs "
            "and training (e.g. a diverged network or NaN observations)"
        )
    if any(math.isinf(v) for v in a):
        raise InvalidActionError(
            f"action contains inf ({shown}); actions must be finite in [-1, 1]")
    raise InvalidActionError(
        f"action ({shown}) out of range: actions must be in [-1, 1]; clip them "
        "(np.clip(action, -1, 1)) or use a squashed policy (SB3 clips Box actions, "
        "squash_output=True / tanh)"
    )


def check_actions(actions: Any, n: int, names: Sequence[str]) -> np.ndarray:
    """A batch of ``n`` actions as a C-contiguous (n, len(names)) float32 or float64
    array within [-1, 1] (+ slack), checked before anything is stepped; the error names
    the first bad row (``env i: actions[i] is invalid: ...``)."""
    m = len(names)
    a = actions if actions.__class__ is np.ndarray else _as_batch(actions, n, m)
    if a.shape != (n, m):
        raise InvalidActionError(
            f"actions must have shape (num_envs, {m}) = ({n}, {m}), got shape "
            f"{a.shape}; one ({', '.join(names)}) row per env"
        )
    if a.dtype != np.float32 and a.dtype != np.float64:
        a = _as_batch(a, n, m)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    # One comparison catches out-of-range and NaN (NaN compares False).
    ok = np.abs(a) <= ACTION_TOL
    if not ok.all():
        i = int(np.flatnonzero(~ok.all(axis=1))[0])
        try:
            reject_action(a[i].tolist())
        except InvalidActionError as e:
            raise InvalidActionError(f"env {i}: actions[{i}] is invalid: {e}") from None
    return a


def check_policy_action(raw: Any, n: int) -> np.ndarray:
    """A policy's ``predict`` output as ``n`` finite float64 values clipped to [-1, 1]
    (stable-baselines3's convention for Box actions: out of range is clipped, not
    refused; any shape with n values, e.g. (1, n)). ``InvalidActionError`` when it is not
    n real numbers or not finite; callers prefix the sample."""
    try:
        a = np.array(raw, dtype=float).reshape(n)  # a copy: the caller's array stays theirs
    except (TypeError, ValueError):
        raise InvalidActionError(f"expected {n} action values, got {raw!r}") from None
    # Python's min/max over the few values: cheaper than numpy's reductions on them (an
    # evaluation checks every sample); NaN fails both comparisons, inf the range one.
    values = a.tolist()
    if not all(math.isfinite(v) for v in values):
        raise InvalidActionError(f"action must be finite, got {values}")
    if min(values) < -1.0 or max(values) > 1.0:
        np.clip(a, -1.0, 1.0, out=a)
    return a


def _as_batch(actions: Any, n: int, m: int) -> np.ndarray:
    try:
        arr = np.asarray(actions)
        if arr.dtype.kind not in "iuf":  # booleans, strings, complex, objects: not actions
            raise TypeError
        return np.ascontiguousarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidActionError(
            f"actions must be a ({n}, {m}) array of real numbers in [-1, 1], got "
            f"{actions!r:.200}"
        ) from None


# ---------------------------------------------------------------- counts


def check_integer(value: Any, name: str, *, minimum: int = 0, maximum: int | None = None,
                  what: str = "an integer", note: str = "") -> int:
    """An integer (Python or numpy, not a bool) in [minimum, maximum]: ``{name} must be
    {what} >= {minimum}{note}, got ...`` (``in [minimum, maximum]`` with a maximum)."""
    if not is_integer(value) or value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ConfigError(f"{name} must be {what} {bound}{note}, got {value!r}")
    return int(value)


def check_num_envs(value: Any) -> int:
    """A vector env's size: an integer in [1, MAX_NUM_ENVS]."""
    if not is_integer(value) or value < 1:
        raise ConfigError(f"num_envs must be a positive integer, got {value!r}")
    if value > MAX_NUM_ENVS:
        raise ConfigError(f"num_envs = {value} is more than the bound of {MAX_NUM_ENVS} envs "
                          "in one vector env (about 60 KiB each); split the batch")
    return int(value)


def check_threads(value: Any) -> int:
    """Worker threads of a C++ pool: an integer >= 0 (0: auto)."""
    return check_integer(value, "threads", note=" (0: auto)")


def check_max_episode_steps(value: Any) -> int | None:
    """A limit in env steps (TimeLimit's): a positive integer, or None for none."""
    if value is None:
        return None
    if not is_integer(value) or value < 1:
        raise ConfigError(f"max_episode_steps must be a positive integer or None, got "
                          f"{value!r}")
    return int(value)


def check_action_history(value: Any) -> int:
    """``action_history``: an integer k in [0, MAX_ACTION_HISTORY] (0: none)."""
    return check_integer(value, "action_history", maximum=MAX_ACTION_HISTORY,
                         note=" (the number of past actions in the observation; 0: none)")


def check_decimation(value: Any, name: str = "decimation") -> int:
    """A trace's decimation: a whole number of substeps >= 1 between rows."""
    return check_integer(value, name, minimum=1, what="a whole number of substeps")


# ---------------------------------------------------------------- flags and numbers


def check_flag(value: Any, name: str) -> bool:
    """A boolean option: True or False (numpy bools too), never a truthy string or number."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_finite(value: Any, name: str) -> float:
    """A finite real number."""
    if not is_real(value) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def check_number(value: Any, name: str, lo: float, hi: float, *, open_low: bool = False,
                 open_high: bool = False, what: str = "a number") -> float:
    """A real number in [lo, hi] (``open_low`` / ``open_high``: that end excluded); NaN
    and inf fail unless the bounds admit them. ``{name} must be {what} in (lo, hi], ...``."""
    ok = is_real(value) and (lo < value if open_low else lo <= value) \
        and (value < hi if open_high else value <= hi)
    if not ok:
        raise ConfigError(f"{name} must be {what} in {'(' if open_low else '['}{lo:g}, "
                          f"{hi:g}{')' if open_high else ']'}, got {value!r}")
    return float(value)


def check_seconds(value: Any, name: str, *, allow_zero: bool = False,
                  maximum: float | None = None, hint: str = "") -> float:
    """A duration: a finite number of seconds > 0 (>= 0 with ``allow_zero``), at most
    ``maximum`` when given. ``hint`` follows the value in the message."""
    ok = is_real(value) and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if ok and (maximum is None or value <= maximum):
        return float(value)
    if maximum is not None:
        low = ">= 0" if allow_zero else "> 0"
        raise ConfigError(f"{name} must be a number of seconds {low} and <= {maximum:g}, got "
                          f"{value!r}{hint}")
    if allow_zero:
        raise ConfigError(f"{name} must be a finite number of seconds >= 0, got "
                          f"{value!r}{hint}")
    raise ConfigError(f"{name} must be a positive number of seconds, got {value!r}{hint}")


def check_measured_delay(value: Any, max_delay: float) -> float:
    """A measured computation delay [s] (``set_next_delay``): finite, in [0, max_delay]
    (``latency.MAX_DELAY_S``; the C++ core checks only that it is finite and >= 0)."""
    if not is_real(value) or not math.isfinite(value) or not 0 <= value <= max_delay:
        raise ConfigError(f"delay must be a finite number of seconds in [0, MAX_DELAY_S = "
                          f"{max_delay:g}], got {value!r}")
    return float(value)


__all__ = ["ACTION_TOL", "MAX_ACTION_HISTORY", "MAX_NUM_ENVS", "check_action",
           "check_action_history", "check_actions", "check_decimation", "check_finite",
           "check_flag", "check_integer", "check_max_episode_steps", "check_measured_delay",
           "check_num_envs", "check_number", "check_policy_action", "check_seconds",
           "check_threads",
           "coerce_action", "is_integer", "is_real", "reject_action"]
