"""The network between the controller and the plant: ``NetworkModel`` (loss, bursts,
a delay per delivered command), drawn in the core's ``NetworkChannel``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.config.latency import LatencyModel, check_latency, check_seed
from vdsim_gym.errors import ConfigError


@dataclass(frozen=True)
class NetworkModel:
    """A network between the controller and the plant: ``NetworkModel(drop=p,
    burst=(p_good_to_bad, p_bad_to_good), jitter=LatencyModel..., seed=0)``.

    - ``drop``: each command is lost with probability p (Bernoulli).
    - ``burst``: a Gilbert-Elliott chain stepped once per command: good -> bad with the
      first probability, bad -> good with the second, before each command; in the bad
      state every command is lost, in the good one with probability ``drop``. Long-run
      loss pi_B + (1 - pi_B) drop with pi_B = p_gb / (p_gb + p_bg); a bad run lasts
      1 / p_bg commands on average.
    - ``jitter``: a ``LatencyModel`` of the network delay a delivered command takes on
      top of its computation (its apply tick is ``ceil((t_start + c_k + n_k) / dt)``).

    A lost command never applies: the previous one stays in force, as a hold-last
    actuator does. A command that arrives after a newer one (a long delay overtaken) is
    discarded. Each loss and discard is counted (``info["lost"]``, ``n_lost``,
    ``n_discarded``). Seeded per episode from the env's reset seed, like the latency.
    """

    drop: float = 0.0
    burst: tuple[float, float] | None = None
    jitter: LatencyModel | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if not is_real(self.drop) or not 0.0 <= self.drop <= 1.0:
            raise ConfigError(f"network drop is a probability in [0, 1], got {self.drop!r}")
        object.__setattr__(self, "drop", float(self.drop))
        if self.burst is not None:
            b = tuple(self.burst) if isinstance(self.burst, (list, tuple)) else None
            if b is None or len(b) != 2 or not all(
                    is_real(x) and 0.0 <= x <= 1.0 for x in b):
                raise ConfigError(f"network burst is (p_good_to_bad, p_bad_to_good), two "
                                  f"probabilities in [0, 1], got {self.burst!r}")
            if b[1] == 0.0 and b[0] > 0.0:
                raise ConfigError("network burst p_bad_to_good = 0 never leaves the bad "
                                  "state (every command lost from the first burst on); give "
                                  "it a probability > 0")
            object.__setattr__(self, "burst", (float(b[0]), float(b[1])))
        if self.jitter is not None:
            object.__setattr__(self, "jitter",
                               check_latency(self.jitter, "jitter", measured=False))
        object.__setattr__(self, "seed", check_seed(self.seed))

    def __str__(self) -> str:
        """A short label (sweep scenario keys): "network(drop 0.05)"."""
        parts = [f"drop {self.drop:g}"] if self.drop else []
        if self.burst is not None:
            parts.append(f"burst {self.burst[0]:g}/{self.burst[1]:g}")
        if self.jitter is not None:
            parts.append(f"jitter {self.jitter.kind} {1e3 * self.jitter.mean_delay:g} ms")
        return f"network({', '.join(parts) or 'lossless'})"

    @property
    def loss_rate(self) -> float:
        """The long-run fraction of commands lost (closed form)."""
        if self.burst is None:
            return self.drop
        p_gb, p_bg = self.burst
        pi_b = p_gb / (p_gb + p_bg) if p_gb + p_bg > 0 else 0.0
        return pi_b + (1.0 - pi_b) * self.drop

    def spec(self) -> _core.NetworkSpec:
        s = _core.NetworkSpec()
        s.drop = self.drop
        if self.burst is not None:
            s.burst, (s.p_gb, s.p_bg) = True, self.burst
        s.jitter = (self.jitter or LatencyModel.fixed(0.0)).spec()
        s.seed = self.seed
        return s

    def channel(self, seed: int = 0) -> _core.NetworkChannel:
        """A fresh channel (its losses and delays) seeded as an env core seeds its own for
        an episode with latency seed ``seed`` (a replay of the rule in Python)."""
        ch = _core.NetworkChannel(self.spec())
        ch.reseed(seed)
        return ch

    def describe(self) -> dict[str, Any]:
        return {"drop": self.drop, "burst": None if self.burst is None else list(self.burst),
                "jitter": None if self.jitter is None else self.jitter.describe(),
                "loss_rate": self.loss_rate, "seed": self.seed}


def check_network(network: Any) -> NetworkModel | None:
    if network is None or isinstance(network, NetworkModel):
        return network
    raise ConfigError(f"network must be None or a NetworkModel(drop=..., burst=..., "
                      f"jitter=...), got {network!r} (from vdsim_gym import NetworkModel)")
