"""Domain randomization: vehicle, actuator and latency parameters drawn per episode.

``gym.make(id, randomize={...})`` (docs/ENVS.md, "Domain randomization"): a dict of named
ranges, each drawn uniformly at every ``reset()`` from the env's ``np_random`` (after the
task's own draws, in the fixed order of ``NAMES``), so ``reset(seed=s)`` reproduces the
episode bit for bit and the same seed gives the same course and start with or without
randomization.

Names, what their range is of, and how a draw is applied:

- ``mass`` (a scale [-]): mass and yaw inertia times the scale (the same radius of
  gyration: the load spread like the car's own mass).
- ``cg_x`` (a shift [m], + forward): cg_to_front - d, cg_to_rear + d; the wheelbase, the
  body (bumpers, overhangs) and the axles stay, so the footprint around the CG moves.
- ``friction`` (a scale [-]): the tire's peak friction (tire.mu) times the scale with
  both slip stiffnesses kept (the curves' B divided by it): peak forces scale.
- ``cornering_stiffness`` (a scale [-]): the tire's lateral stiffness at zero slip
  (lateral.B) times the scale, the force peak kept; an axle's compliance steer still
  acts in series (1 / C_eff = 1 / (s C) + c).
- ``actuator_lag`` (a time constant [s]): the steering actuator's first-order lag
  (needs ``actuator=``; its dead time, rate limit and saturation stay).
- ``latency`` (``{"mean": [lo, hi] s, "jitter": [lo, hi] in [0, 1]}``, or a plain
  ``[lo, hi]``: the mean, no jitter): per episode c and j, then
  ``LatencyModel.uniform(c (1 - j), c (1 + j))``, or ``fixed(c)`` when j == 0, under the
  env's ``overrun`` policy.
- ``steer_delay``, ``longitudinal_delay`` (a dead time [s], in [0, 1]): the actuation
  channel's dead time (``channel_delays``; vehicle envs), the draw taken to the nearest
  whole substep (half to even: ``timing.nearest_ticks``); the other channel keeps the
  env's own. The applied (snapped) value is what ``info["randomization"]`` reports.
- ``loss`` (a probability in [0, 1]): the network's loss per command (``network=``'s
  ``drop``; its burst chain and delay stay), or ``NetworkModel(drop=p)`` when the env has
  no network.
- ``obs_delay`` (an age [s]): the sensor delay, ``obs_delay=LatencyModel.fixed(d)`` for
  the episode (every env).
- ``driver_delay`` (a transport delay [s]): the robot driver's ``delay_s``
  (VDSim-Dyno-v0 with a driver), the draw taken to the nearest whole driver step
  (``substep_dt``, half to even) like the driver's own; the applied value is what
  ``info["randomization"]`` reports.

The drawn values are ``info["randomization"]`` at reset (``latency`` as
``latency_mean`` and ``latency_jitter``) and ``env.unwrapped.episode_params``
(``EpisodeParams``: the values, the episode's vehicle, actuator and latency model).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._checks import is_real
from vdsim_gym.config.latency import MAX_DELAY_S, LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.config.vehicle import (
    MAX_ACTUATOR_DEAD_TIME_S,
    ActuatorConfig,
    ConfigError,
    VehicleConfig,
    load_vehicle,
)

# Randomizable names in draw order, with what they are (for messages and docs).
NAMES: dict[str, str] = {
    "mass": "a scale of the mass and yaw inertia, e.g. [0.9, 1.15]",
    "cg_x": "a shift of the CG toward the front axle [m], e.g. [-0.1, 0.1]",
    "friction": "a scale of the tire's peak friction, e.g. [0.8, 1.0]",
    "cornering_stiffness": "a scale of the tire's cornering stiffness, e.g. [0.85, 1.15]",
    "actuator_lag": "the steering actuator's time constant [s], e.g. [0.02, 0.08]",
    "latency": "the delay distribution, e.g. {'mean': [0.0, 0.04], 'jitter': [0.0, 0.5]}",
    "steer_delay": "the steering channel's dead time [s], e.g. [0.0, 0.03]",
    "longitudinal_delay": "the longitudinal channel's dead time [s], e.g. [0.02, 0.08]",
    "loss": "the network's loss probability per command, e.g. [0.0, 0.1]",
    "obs_delay": "the sensor delay (the observation's age) [s], e.g. [0.0, 0.05]",
    "driver_delay": "the robot driver's transport delay [s] (VDSim-Dyno-v0), e.g. [0.3, 0.5]",
}
CHANNEL_NAMES = ("steer_delay", "longitudinal_delay")
VEHICLE_NAMES = ("mass", "cg_x", "friction", "cornering_stiffness")
# The keys of the draws (info["randomization"]), in draw order.
DRAW_KEYS = ("mass", "cg_x", "friction", "cornering_stiffness", "actuator_lag",
             "latency_mean", "latency_jitter", "steer_delay", "longitudinal_delay", "loss",
             "obs_delay", "driver_delay")
MAX_ACTUATOR_LAG_S = 10.0  # [s]: longer steering lags are a unit slip (ms for s)
# Smallest value of the scale names (mass, friction, cornering_stiffness) [-]: a car at a
# tenth of its own mass, grip or stiffness is another vehicle, not a variation of this
# one (and 1e-9 is a typo); give that vehicle (vehicle=...) instead. Large scales are
# bounded by the vehicle's own ranges (check_vehicle: e.g. mass <= 1e5 kg at the corner).
MIN_SCALE = 0.1
_LATENCY_KEYS = ("mean", "jitter")


def _err(key: str, msg: str) -> ConfigError:
    return ConfigError(f"randomize[{key!r}]: {msg}")


def _pair(value: Any, key: str) -> tuple[float, float]:
    """[lo, hi] as two finite floats with lo <= hi."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise _err(key, f"must be a range [lo, hi] of two numbers, got {value!r}"
                   + ("; for a fixed value write [v, v]"
                      if is_real(value) else ""))
    items = list(value)
    if len(items) != 2:
        raise _err(key, f"must be a range [lo, hi] of two numbers, got {value!r}")
    out = []
    for v in items:
        if not is_real(v) or not math.isfinite(v):
            raise _err(key, f"bounds must be finite numbers, got {value!r}")
        out.append(float(v))
    lo, hi = out
    if lo > hi:
        raise _err(key, f"lo = {lo!r} > hi = {hi!r}; write [{hi!r}, {lo!r}]")
    return lo, hi


def _check_bounds(key: str, lo: float, hi: float) -> None:
    if key in ("mass", "friction", "cornering_stiffness"):
        if not lo > 0:
            raise _err(key, f"a scale must be > 0, got [{lo!r}, {hi!r}] ({NAMES[key]}; 1 is "
                       "the vehicle's own value)")
        if lo < MIN_SCALE:
            raise _err(key, f"a scale must be >= {MIN_SCALE:g}, got [{lo!r}, {hi!r}] "
                       f"({NAMES[key]}; 1 is the vehicle's own value); below that it is "
                       "another vehicle, not a variation of this one: load that vehicle "
                       "(vehicle=...) and randomize around it")
    if key == "actuator_lag":
        if lo < 0:
            raise _err(key, f"a time constant must be >= 0 s, got [{lo!r}, {hi!r}]")
        if hi > MAX_ACTUATOR_LAG_S:
            raise _err(key, f"hi = {hi!r} s exceeds {MAX_ACTUATOR_LAG_S:g} s; time constants "
                       "are seconds, not milliseconds: 50 ms is 0.05")
    if key == "latency_mean":
        if lo < 0:
            raise _err("latency", f"mean must be >= 0 s, got [{lo!r}, {hi!r}]")
        if hi > MAX_DELAY_S:
            raise _err("latency", f"mean hi = {hi!r} s exceeds MAX_DELAY_S = {MAX_DELAY_S:g} "
                       "s; delays are seconds, not milliseconds: 20 ms is 0.02")
    if key in CHANNEL_NAMES and not (lo >= 0 and hi <= MAX_ACTUATOR_DEAD_TIME_S):
        raise _err(key, f"a dead time in [0, {MAX_ACTUATOR_DEAD_TIME_S:g}] s, got "
                   f"[{lo!r}, {hi!r}] (seconds: 60 ms is 0.06)")
    if key == "obs_delay" and not (lo >= 0 and hi <= MAX_DELAY_S):
        raise _err(key, f"a sensor age in [0, MAX_DELAY_S = {MAX_DELAY_S:g}] s, got "
                   f"[{lo!r}, {hi!r}] (seconds: 30 ms is 0.03)")
    if key == "driver_delay" and not (lo >= 0 and hi <= MAX_DELAY_S):
        raise _err(key, f"a transport delay in [0, MAX_DELAY_S = {MAX_DELAY_S:g}] s, got "
                   f"[{lo!r}, {hi!r}] (seconds: 300 ms is 0.3)")
    if key == "loss" and not (lo >= 0 and hi <= 1):
        raise _err(key, f"a probability in [0, 1], got [{lo!r}, {hi!r}]")
    if key == "latency_jitter" and not (lo >= 0 and hi <= 1):
        raise _err("latency", f"jitter is a fraction of the mean in [0, 1] (delays "
                   f"within c (1 - j) .. c (1 + j)), got [{lo!r}, {hi!r}]")


@dataclass(frozen=True)
class EpisodeParams:
    """The physical parameters of one episode: ``values`` (the draws by name, what
    ``info["randomization"]`` reports; empty without randomization), the episode's
    ``vehicle``, ``actuator`` (None: no steering chain) and ``latency`` model."""

    values: dict[str, float]
    vehicle: VehicleConfig
    actuator: ActuatorConfig | None
    latency: LatencyModel | None
    # the actuation channels' dead times [s] (steer, longitudinal)
    channel_delays: tuple[float, float] = (0.0, 0.0)
    network: NetworkModel | None = None
    obs_delay: LatencyModel | None = None  # the sensor delay
    driver_delay: float | None = None  # the robot driver's transport delay [s] (the dyno)


@dataclass(frozen=True)
class Randomization:
    """Validated ranges (``ranges``: draw key -> (lo, hi), in draw order); build it with
    ``Randomization.parse`` (what ``randomize=`` takes)."""

    ranges: tuple[tuple[str, float, float], ...]

    # ------------------------------------------------------------ building

    @classmethod
    def parse(cls, value: Any) -> Randomization | None:
        """None (or ``{}``) -> None; a ``Randomization``; or a mapping of ``NAMES`` to
        ranges (see the module doc). Unknown names and bad ranges are a ValueError
        naming the key and the fix."""
        if value is None or isinstance(value, Randomization):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"randomize must be a dict of named ranges, e.g. {{'mass': [0.9, "
                              f"1.15], 'friction': [0.8, 1.0]}}, got {value!r}")
        unknown = [k for k in value if k not in NAMES]
        if unknown:
            what = "; ".join(f"{k}: {v}" for k, v in NAMES.items())
            raise ConfigError(f"randomize: unknown name {unknown[0]!r}; valid names: "
                              f"{', '.join(NAMES)} ({what})")
        got: dict[str, tuple[float, float]] = {}
        for key in NAMES:
            if key not in value:
                continue
            spec = value[key]
            if key != "latency":
                got[key] = _pair(spec, key)
                _check_bounds(key, *got[key])
                continue
            if isinstance(spec, Mapping):
                bad = [k for k in spec if k not in _LATENCY_KEYS]
                if bad or "mean" not in spec:
                    raise _err(key, f"takes 'mean' (a range [s]) and optionally 'jitter' (a "
                               f"range of fractions in [0, 1]), got {dict(spec)!r}")
                mean = _pair(spec["mean"], "latency")
                jitter = _pair(spec.get("jitter", (0.0, 0.0)), "latency")
            else:
                mean, jitter = _pair(spec, "latency"), (0.0, 0.0)
            _check_bounds("latency_mean", *mean)
            _check_bounds("latency_jitter", *jitter)
            if mean[1] * (1.0 + jitter[1]) > MAX_DELAY_S:
                raise _err(key, f"mean hi (1 + jitter hi) = {mean[1] * (1 + jitter[1]):g} s "
                           f"exceeds MAX_DELAY_S = {MAX_DELAY_S:g} s")
            got["latency_mean"], got["latency_jitter"] = mean, jitter
        if not got:
            return None
        return cls(tuple((k, *got[k]) for k in DRAW_KEYS if k in got))

    # ------------------------------------------------------------ queries

    def range(self, key: str) -> tuple[float, float] | None:
        for k, lo, hi in self.ranges:
            if k == key:
                return lo, hi
        return None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _, _ in self.ranges)

    @property
    def changes_vehicle(self) -> bool:
        return any(k in VEHICLE_NAMES for k in self.keys)

    @property
    def changes_actuator(self) -> bool:
        return "actuator_lag" in self.keys

    @property
    def changes_latency(self) -> bool:
        return "latency_mean" in self.keys

    @property
    def changes_network(self) -> bool:
        return "loss" in self.keys

    @property
    def changes_obs_delay(self) -> bool:
        return "obs_delay" in self.keys

    @property
    def changes_driver(self) -> bool:
        return "driver_delay" in self.keys

    @property
    def changes_channels(self) -> bool:
        return any(k in CHANNEL_NAMES for k in self.keys)

    def as_dict(self) -> dict[str, Any]:
        """The ranges in ``randomize=``'s own form (for run configs; parses back)."""
        out: dict[str, Any] = {}
        for k, lo, hi in self.ranges:
            if k == "latency_mean":
                out.setdefault("latency", {})["mean"] = [lo, hi]
            elif k == "latency_jitter":
                out.setdefault("latency", {})["jitter"] = [lo, hi]
            else:
                out[k] = [lo, hi]
        return out

    # ------------------------------------------------------------ per episode

    def draw(self, rng: np.random.Generator) -> dict[str, float]:
        """One uniform draw per range, in draw order (every range draws, even lo == hi, so
        a range's draw never shifts another's). The env cores draw the same in C++
        (``core_spec``; vdsim/randomization.hpp); this is the tests' reference."""
        return {k: float(rng.uniform(lo, hi)) for k, lo, hi in self.ranges}

    def core_spec(self, env: Any) -> Any:
        """The env core's description of these ranges (``_core.RandomizationSpec``): the
        draw keys and bounds in draw order, and what the draws apply to: ``env``'s nominal
        vehicle, steering chain, channel dead times, network and overrun policy."""
        from vdsim_gym import _core
        from vdsim_gym.sim.physics_options import actuator_params
        from vdsim_gym.timing import whole_ticks

        spec = _core.RandomizationSpec()
        spec.keys = [DRAW_KEYS.index(k) for k in self.keys]
        spec.lo = [lo for _, lo, _ in self.ranges]
        spec.hi = [hi for _, _, hi in self.ranges]
        if self.changes_vehicle:
            spec.vehicle = env.vehicle.core_params()  # copied into the spec
        if self.changes_actuator:
            spec.actuator, spec.actuator_dead_ticks = actuator_params(env.actuator,
                                                                       env.substep_dt)
        if self.changes_channels:
            nominal = getattr(env.physics, "channel_delays", (0.0, 0.0))
            spec.steer_dead_ticks, spec.longitudinal_dead_ticks = (
                whole_ticks(t, env.substep_dt, name, allow_zero=True)
                for t, name in zip(nominal, CHANNEL_NAMES, strict=True))
        if self.changes_network:
            spec.network = (env._nominal_network or NetworkModel()).spec()
        spec.overrun = getattr(_core.OverrunPolicy, env.overrun)
        return spec

    def values_of(self, draws: Any) -> dict[str, float]:
        """The draws by name (``info["randomization"]``) from a core's ``episode_draws``
        (DRAW_KEYS' order)."""
        return {k: float(draws[DRAW_KEYS.index(k)]) for k in self.keys}

    @staticmethod
    def vehicle(nominal: VehicleConfig, values: Mapping[str, float]) -> VehicleConfig:
        """``nominal`` with the drawn vehicle values applied (module doc); unchecked."""
        changes: dict[str, Any] = {}
        if "mass" in values:
            s = values["mass"]
            changes["mass"] = nominal.mass * s
            changes["yaw_inertia"] = nominal.yaw_inertia * s
        if "cg_x" in values:
            d = values["cg_x"]
            changes["cg_to_front"] = nominal.cg_to_front - d
            changes["cg_to_rear"] = nominal.cg_to_rear + d
        tire = nominal.tire
        if "friction" in values:
            s = values["friction"]
            tire = dataclasses.replace(
                tire, mu=tire.mu * s,
                lateral=dataclasses.replace(tire.lateral, B=tire.lateral.B / s),
                longitudinal=dataclasses.replace(tire.longitudinal,
                                                 B=tire.longitudinal.B / s))
        if "cornering_stiffness" in values:
            s = values["cornering_stiffness"]
            tire = dataclasses.replace(tire, lateral=dataclasses.replace(
                tire.lateral, B=tire.lateral.B * s))
        if tire is not nominal.tire:
            changes["tire"] = tire
        return dataclasses.replace(nominal, **changes) if changes else nominal

    @staticmethod
    def actuator(nominal: ActuatorConfig | None, values: Mapping[str, float]
                 ) -> ActuatorConfig | None:
        if nominal is None or "actuator_lag" not in values:
            return nominal
        return dataclasses.replace(nominal, time_constant=values["actuator_lag"])

    @staticmethod
    def latency(values: Mapping[str, float]) -> LatencyModel | None:
        """The episode's delay model: ``fixed(c)`` for jitter 0, else
        ``uniform(c (1 - j), c (1 + j))`` (its seed comes from the reset seed)."""
        if "latency_mean" not in values:
            return None
        c, j = values["latency_mean"], values.get("latency_jitter", 0.0)
        return LatencyModel.fixed(c) if j == 0.0 else \
            LatencyModel.uniform(c * (1.0 - j), c * (1.0 + j))

    @staticmethod
    def network(nominal: NetworkModel | None, values: Mapping[str, float]
                ) -> NetworkModel | None:
        """The episode's network: the env's with the drawn loss as its ``drop``."""
        if "loss" not in values:
            return nominal
        return dataclasses.replace(nominal or NetworkModel(), drop=values["loss"])

    @staticmethod
    def obs_delay(values: Mapping[str, float]) -> LatencyModel | None:
        """The episode's sensor delay: ``fixed(d)``, d the drawn age."""
        return LatencyModel.fixed(values["obs_delay"]) if "obs_delay" in values else None

    @staticmethod
    def channel_delays(nominal: tuple[float, float], values: dict[str, float],
                       substep_dt: float) -> tuple[int, int]:
        """The episode's channel dead times in ticks: each drawn one at the nearest whole
        substep (its value in ``values`` replaced by that snapped time), the other the
        env's own."""
        from vdsim_gym.timing import nearest_ticks, whole_ticks

        out = []
        for k, name in enumerate(CHANNEL_NAMES):
            if name in values:
                n = nearest_ticks(values[name], substep_dt)[0]
                values[name] = n * substep_dt
            else:
                n = whole_ticks(nominal[k], substep_dt, name, allow_zero=True)
            out.append(n)
        return out[0], out[1]

    @staticmethod
    def driver_delay(values: dict[str, float], substep_dt: float) -> int:
        """The episode's driver transport delay in driver steps (the nearest whole one,
        as the driver's own ``delay_s``); its value in ``values`` replaced by that
        snapped time."""
        from vdsim_gym.dyno.driver import delay_steps

        n = delay_steps(values["driver_delay"], substep_dt)[0]
        values["driver_delay"] = n * substep_dt
        return n

    def midpoint(self) -> dict[str, float]:
        return {k: 0.5 * (lo + hi) for k, lo, hi in self.ranges}

    # ------------------------------------------------------------ checks

    def check_vehicle(self, nominal: VehicleConfig) -> None:
        """Every corner of the vehicle ranges gives a valid vehicle (config.VEHICLE_RANGES
        and the compliance check); else a ValueError naming the corner and the field."""
        keys = [k for k in self.keys if k in VEHICLE_NAMES]
        if not keys:
            return
        bounds = [(lo, hi) for k, lo, hi in self.ranges if k in VEHICLE_NAMES]  # keys' order
        for corner in itertools.product(*bounds):
            values = dict(zip(keys, corner, strict=True))
            try:
                load_vehicle(self.vehicle(nominal, values))
            except ConfigError as exc:
                at = ", ".join(f"{k}={v:g}" for k, v in values.items())
                reason = str(exc).split(": ", 1)[-1]
                raise ConfigError(f"randomize: at {at} the vehicle {nominal.name!r} is invalid: "
                                  f"{reason}; narrow the range of "
                                  f"{' or '.join(repr(k) for k in keys)}") from None


def parse_randomize_text(text: str | Path) -> dict[str, Any]:
    """The ``--randomize`` option's value: a YAML file (``.yml``/``.yaml``: a mapping in
    ``randomize=``'s form) or ``name=lo:hi,...`` (``latency=lo:hi`` sets the mean,
    ``latency.jitter=lo:hi`` the jitter; a trailing ``ms`` on the bounds of
    ``actuator_lag``, ``latency``, ``obs_delay``, ``driver_delay`` and the channel delays means
    milliseconds, and on the upper bound covers a bare lower one). Returns the mapping
    (validate it with ``Randomization.parse``)."""
    body = str(text).strip()
    if body.endswith((".yml", ".yaml")):
        import yaml  # noqa: F401  (its errors)

        from vdsim_gym._files import load_yaml, read_user_text

        path = Path(body)
        try:
            data = load_yaml(read_user_text(path, "the --randomize file"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"--randomize {body!r}: not valid YAML ({exc})") from None
        if not isinstance(data, dict):
            raise ConfigError(f"--randomize {body!r}: the file must hold a mapping of names to "
                              "ranges, e.g. 'mass: [0.9, 1.15]'")
        return data
    out: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in body.split(","))):
        key, sep, rng = item.partition("=")
        key = key.strip()
        lo, sep2, hi = rng.partition(":")
        if not sep or not sep2:
            raise ConfigError(f"--randomize item {item!r}: write name=lo:hi (e.g. "
                              "mass=0.9:1.15, latency=0:40ms), or give a .yml file")
        name, _, sub = key.partition(".")
        timed = name in ("actuator_lag", "latency", "obs_delay", "driver_delay",
                         *CHANNEL_NAMES) \
            and sub != "jitter"
        if timed and hi.strip().endswith("ms") and not lo.strip().endswith("ms"):
            lo = lo.strip() + "ms"  # 20:80ms is 20 to 80 ms, as in the delay lists
        bounds = [_number(v, item, timed) for v in (lo, hi)]
        if name == "latency":
            if sub not in ("", "mean", "jitter"):
                raise ConfigError(f"--randomize item {item!r}: latency takes latency=lo:hi "
                                  "(the mean), latency.mean=lo:hi or latency.jitter=lo:hi")
            out.setdefault("latency", {})["jitter" if sub == "jitter" else "mean"] = bounds
        elif sub:
            raise ConfigError(f"--randomize item {item!r}: {name!r} has no sub-keys")
        else:
            out[name] = bounds
    if "latency" in out and "mean" not in out["latency"]:
        raise ConfigError("--randomize: latency.jitter needs a mean range too (latency=lo:hi)")
    if not out:
        raise ConfigError(f"--randomize {body!r}: no ranges; e.g. mass=0.9:1.15,friction=0.8:1")
    return out


def _number(text: str, item: str, timed: bool) -> float:
    t = text.strip()
    scale = 1.0  # divisor: 40 / 1000 is 0.04 exactly, 40 * 1e-3 is not
    if t.endswith("ms"):
        if not timed:
            raise ConfigError(f"--randomize item {item!r}: 'ms' applies to actuator_lag, "
                              "latency, obs_delay, driver_delay and the channel delays only")
        t, scale = t[:-2], 1000.0
    elif t.endswith("s") and timed:
        t = t[:-1]
    try:
        return float(t) / scale
    except ValueError:
        raise ConfigError(f"--randomize item {item!r}: {text!r} is not a number") from None


__all__ = ["DRAW_KEYS", "NAMES", "EpisodeParams", "Randomization", "parse_randomize_text"]
