"""The domain randomization of an env (a part of ``CoreEnv``, split from core_env.py by
job): what ``randomize=`` asks of the env (``_check_randomization``), the core's ranges
(``_set_randomization``), each episode's draws made by the core (``_randomize_episode``,
``_episode_from_core``) and the episode's parameters (``episode_params``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.plant import PhysicsSpec
from vdsim_gym.sim.randomization import EpisodeParams, Randomization


class EnvRandomization:
    """The randomization part of ``CoreEnv`` (its base): the attributes below are the
    env's, set by ``CoreEnv.__init__``."""

    PHYSICS: Any
    _core: Any
    physics: Any
    substep_dt: float
    vehicle: Any
    actuator: Any
    action_names: tuple[str, ...]
    randomize: Randomization | None
    latency: LatencyModel | None
    network: NetworkModel | None
    _nominal_network: NetworkModel | None
    obs_delay: LatencyModel | None
    _episode_drawn: bool
    _reset_extra: dict[str, Any]

    if TYPE_CHECKING:  # CoreEnv's (Gymnasium's)
        @property
        def np_random(self) -> np.random.Generator: ...

    @property
    def episode_params(self) -> EpisodeParams:
        """This episode's parameters (``vdsim_gym.sim.randomization.EpisodeParams``): the
        randomization draws (``values``, empty without ``randomize``), the vehicle, the
        steering actuator and the latency model in use. Before the first reset, or
        without randomization: the nominal ones. ``self.vehicle`` and ``self.physics``
        stay the nominal (construction) parameters."""
        channels = getattr(self.physics, "channel_delays", (0.0, 0.0))
        driver_delay = getattr(self.physics, "delay_s", None)
        r = self.randomize
        if r is None or not self._episode_drawn:
            return EpisodeParams({}, self.vehicle, self.actuator, self.latency, channels,
                                 self.network, self.obs_delay, driver_delay)
        # from the core's draws (a vector env may have drawn this episode in C++)
        values = self._episode_from_core()
        if r.changes_channels:  # the drawn ones snapped to their ticks, the other nominal
            ticks = r.channel_delays(channels, dict(values), self.substep_dt)
            channels = (ticks[0] * self.substep_dt, ticks[1] * self.substep_dt)
        return EpisodeParams(
            values, r.vehicle(self.vehicle, values) if r.changes_vehicle else self.vehicle,
            r.actuator(self.actuator, values), self.latency, channels, self.network,
            self.obs_delay, values["driver_delay"] if r.changes_driver else driver_delay)

    def _check_randomization(self, latency: Any) -> None:
        """What ``randomize`` asks of this env, before any episode: a vehicle Session for
        the vehicle names, a steering actuator for actuator_lag, no latency= with a
        latency range, a valid vehicle at every corner of the ranges."""
        r = self.randomize
        assert r is not None
        name = type(self).__name__
        if (r.changes_vehicle or r.changes_actuator or r.changes_channels) \
                and self.PHYSICS is not PhysicsSpec:
            which = [k for k in r.keys if not k.startswith("latency")]
            raise ConfigError(f"randomize {which}: {name} does not run on the vehicle Session "
                              "(its plant has no such parameters); only 'latency' applies")
        if r.changes_driver and getattr(self.physics, "driver", None) is None:
            raise ConfigError(
                f"randomize['driver_delay'] draws the robot driver's transport delay; {name} "
                + ("has no robot driver (driver=None: the action is the pedal); pass driver="
                   "'speed' or {'mode': 'pedal', 'delay_s': 0.3}"
                   if hasattr(self._core, "set_driver_delay_steps")
                   else "has none (only VDSim-Dyno-v0 has a robot driver)"))
        if r.changes_actuator:
            if "steer" not in self.action_names:
                raise ConfigError(f"randomize['actuator_lag'] draws the steering actuator's lag; "
                                  f"{name} does not steer (actions: {self.action_names})")
            if self.actuator is None:
                raise ConfigError(
                    "randomize['actuator_lag'] draws the time constant of the steering "
                    "actuator, and this env has none: pass actuator={'time_constant': 0.05} "
                    "(the nominal chain; dead time, rate limit and saturation stay as given)")
        if r.changes_latency and latency is not None:
            raise ConfigError(
                "randomize['latency'] draws the latency model per episode; drop latency="
                f"{latency!r} (or drop the latency range to keep a fixed model)")
        r.check_vehicle(self.vehicle)

    def _randomize_episode(self) -> None:
        """This episode's draws from ``np_random`` (after the task's), drawn and applied by
        the core before its reset (``randomize_episode``, vdsim/randomization.hpp: the
        vehicle, steering actuator, latency, channels, network, sensor and driver delays),
        the same a vector env's reset in C++ makes."""
        self._core.randomize_episode(self.np_random.bit_generator)
        self._episode_from_core()

    def _set_randomization(self) -> None:
        """The core's ranges and nominal parameters (its per-episode draws); again after
        the overrun policy or the core changes."""
        if self.randomize is not None:
            self._core.set_randomization(self.randomize.core_spec(self))

    def _episode_from_core(self) -> dict[str, float]:
        """The core's last draws by name; the models in use from them (``latency``,
        ``network``, ``obs_delay``) and the reset info's ``randomization``."""
        r = self.randomize
        assert r is not None
        values = r.values_of(self._core.episode_draws)
        if r.changes_latency:
            self.latency = r.latency(values)
        if r.changes_network:
            self.network = r.network(self._nominal_network, values)
        if r.changes_obs_delay:
            self.obs_delay = r.obs_delay(values)
        self._reset_extra = {"randomization": dict(values)}
        return values


__all__ = ["EnvRandomization"]
