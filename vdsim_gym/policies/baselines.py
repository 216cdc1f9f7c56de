"""The baselines of the controller specs: ``BASELINES``, the registry behind ``vdsim-gym
sweep --controller`` and ``agents/compare.py`` ("stanley[:key=value,...]", "stanley_dc",
"mpc", "acc_pid", "acc_pid_dc", "idm", "idm_dc", "cycle_follower"), and the parsing and
checking of each one's ``key=value`` parameters."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

from vdsim_gym.errors import ConfigError


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
    from vdsim_gym.controllers.acc_dc import compensated_follower

    return compensated_follower(env, inner(env), delay)


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
