"""The computation-latency configuration of an env (a part of ``CoreEnv``, split from
core_env.py by job): ``configure_latency`` (what the ``latency`` / ``overrun`` keywords and
``LatencyWrapper`` call) and ``set_next_delay`` (``LatencyModel.measured()``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vdsim_gym import _core
from vdsim_gym._checks import check_measured_delay
from vdsim_gym.config.latency import (
    MAX_DELAY_S,
    LatencyModel,
    check_delay_fits,
    check_latency,
    check_obs_delay,
    check_overrun,
)
from vdsim_gym.config.network import NetworkModel, check_network
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.randomization import Randomization


class EnvLatency:
    """The latency part of ``CoreEnv`` (its base): the attributes below are the env's,
    set by ``CoreEnv.__init__``."""

    _core: Any
    _stepper: Any
    randomize: Randomization | None
    time_limit: float | None
    latency: LatencyModel | None
    network: NetworkModel | None
    obs_delay: LatencyModel | None
    overrun: str
    _measured: bool
    _next_delay: float | None
    _needs_reset: bool
    _reset_reason: str

    if TYPE_CHECKING:
        def _set_randomization(self) -> None:
            """The core's randomization ranges (EnvRandomization's)."""

    def configure_latency(self, latency: LatencyModel | None, overrun: str = "skip") -> None:
        """Sets the computation-delay model and overrun policy (None: no latency).

        Takes effect at the next ``reset()``, which is then required before ``step()``.
        The one implementation behind the ``latency``/``overrun`` kwargs and
        ``vdsim_gym.wrappers.LatencyWrapper``. Refused when ``randomize`` draws the
        latency model per episode.
        """
        if self.randomize is not None and self.randomize.changes_latency:
            raise ConfigError(
                "this env draws its latency model per episode (randomize['latency'] = "
                f"{self.randomize.as_dict()['latency']}); build it without the latency range "
                "to configure a latency model")
        self._configure_latency(latency, overrun)

    def _configure_latency(self, latency: LatencyModel | None, overrun: str) -> None:
        overrun = check_overrun(overrun)
        if latency is not None:
            latency = check_latency(latency)
            self._check_fits(latency, "latency", "latency")
            self._core.set_latency(latency.spec(), getattr(_core.OverrunPolicy, overrun))
        else:
            self._core.clear_latency()
        self.latency = latency
        self._stepper.timing = self.reports_timing
        self.latency, self.overrun = latency, overrun
        self._measured = latency is not None and latency.kind == "measured"
        self._next_delay = None
        self._needs_reset = True
        self._reset_reason = "the latency model changed; call reset() before step()"
        self._set_randomization()  # its network draws apply under this overrun policy

    def configure_network(self, network: NetworkModel | None) -> None:
        """A network between the controller and the plant (``NetworkModel``: losses,
        bursts, delay; None: none). Takes effect at the next ``reset()``, then required.
        Without a latency model the commands take the latency path with no computation
        delay (bit for bit the run without latency), so the timing keys are in info."""
        network = check_network(network)
        if network is not None and network.jitter is not None:
            self._check_fits(network.jitter, "network delay NetworkModel(jitter=", "loss")
        if network is not None:
            self._core.set_network(network.spec(), getattr(_core.OverrunPolicy, self.overrun))
        else:
            self._core.clear_network()
        self.network = network
        self._stepper.timing = self.reports_timing
        self._needs_reset = True
        self._reset_reason = "the network changed; call reset() before step()"

    def configure_obs_delay(self, obs_delay: LatencyModel | None) -> None:
        """A sensor delay (``LatencyModel``; None: none): each step's observation is the
        task's observation of the plant ``d`` earlier, on the substep grid, ``d`` drawn
        per grid sample with the causal rule (docs/ENVS.md, "Sensor delay"); reward and
        termination stay on the true state, the action history stays current, and info
        reports ``obs_age`` [s] and ``obs_tick``. Takes effect at the next ``reset()``,
        then required. Refused when ``randomize`` draws it per episode."""
        if self.randomize is not None and self.randomize.changes_obs_delay:
            raise ConfigError(
                "this env draws its sensor delay per episode (randomize['obs_delay'] = "
                f"{self.randomize.as_dict()['obs_delay']}); build it without that range to "
                "configure a sensor delay")
        self._configure_obs_delay(check_obs_delay(obs_delay))

    def _configure_obs_delay(self, obs_delay: LatencyModel | None) -> None:
        if obs_delay is not None:
            self._check_fits(obs_delay, "sensor delay obs_delay=", "obs_delay")
            self._core.set_obs_delay(obs_delay.spec())
        else:
            self._core.clear_obs_delay()
        self.obs_delay = obs_delay
        self._stepper.timing = self.reports_timing
        self._needs_reset = True
        self._reset_reason = "the sensor delay changed; call reset() before step()"

    def _check_fits(self, model: LatencyModel, what: str, key: str) -> None:
        """``check_delay_fits`` of ``model``'s mean delay (measured: nothing to check in
        advance) and, when ``randomize`` draws ``key`` per episode, of the top of its
        range (``latency``: the mean's), against this env's time limit. ``what`` names the
        argument ("latency", "sensor delay obs_delay=")."""
        limit = getattr(self, "time_limit", None)
        r = self.randomize
        ranged = {"latency": "latency_mean", "obs_delay": "obs_delay"}.get(key)
        hi = None if r is None or ranged is None else r.range(ranged)
        if hi is not None:
            check_delay_fits(f"randomize[{key!r}]'s upper bound", hi[1], limit,
                             f"randomize={{{key!r}: [0.0, 0.02]}}")
            return  # the model is the range's midpoint until the first reset
        if model.kind == "measured":
            return
        fix = {"latency": "latency=LatencyModel.fixed(0.02)",
               "obs_delay": "obs_delay=LatencyModel.fixed(0.02)",
               "loss": "NetworkModel(jitter=LatencyModel.fixed(0.02))"}[key]
        label = f"{what}{model!r})" if what.endswith("(jitter=") else \
            f"{what}{model!r}" if what.endswith("=") else f"{what} {model!r}"
        check_delay_fits(f"the mean delay of {label}", model.mean_delay, limit, fix)

    @property
    def reports_timing(self) -> bool:
        """Whether step infos carry the timing keys (``TIMING_KEYS``): with a latency
        model, a network or a sensor delay."""
        return (getattr(self, "latency", None) is not None
                or getattr(self, "network", None) is not None
                or getattr(self, "obs_delay", None) is not None)

    def set_next_delay(self, c: float) -> None:
        """The computation delay [s] of the next step's action (``LatencyModel.measured()``).

        The env cannot time the agent: whoever does (e.g. ClosedLoopEval) passes the
        measured compute time here before every ``step()``.
        """
        if not self._measured:
            raise ConfigError(
                "set_next_delay() applies to latency=LatencyModel.measured() only; this env "
                f"has latency={self.latency!r} (its delays come from the model)"
            )
        self._next_delay = check_measured_delay(c, MAX_DELAY_S)


__all__ = ["EnvLatency"]
