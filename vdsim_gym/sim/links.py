"""The SIL transports and exchange of the core (csrc/vdsim/sil_link.hpp,
sil_exchange.hpp; docs/SIL.md) for ``vdsim_gym.sil``: a UDP socket or a shared-memory
region as a transport, the exchange that talks to the controller over it, and one
wall-clock sample taken on a real-time runner."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

from vdsim_gym import _core
from vdsim_gym.errors import ConfigError

# SilExchange.ask's and sample()'s answers
COMMAND, FAILSAFE, STOPPED = (_core.SilExchange.COMMAND, _core.SilExchange.FAILSAFE,
                              _core.SilExchange.STOPPED)
ENDED, NOT_TAKEN = -1, -2  # sample(): the episode had ended; the runner had finished


class UdpTransport:
    """A UDP socket bound to ``host:port`` (port 0: a free one, see ``address``). Binds to
    loopback unless ``allow_remote``: a controller on another machine must be asked for."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 allow_remote: bool = False) -> None:
        try:
            ip = ipaddress.ip_address("127.0.0.1" if host == "localhost" else host)
        except ValueError:
            raise ConfigError(f"--udp {host}:{port}: {host!r} is not an IPv4 address (e.g. "
                              "127.0.0.1)") from None
        if not ip.is_loopback and not allow_remote:
            raise ConfigError(f"--udp {host}:{port} is not a loopback address: a SIL server "
                              "listens on this machine only unless told otherwise; pass "
                              "--allow-remote to accept controllers from the network")
        try:
            self.link = _core.UdpLink(str(ip), port)
        except (RuntimeError, ValueError) as e:
            raise ConfigError(f"{e}; choose another address or port (0: any free one)") \
                from None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.link.address
        return host, port

    def close(self) -> None:
        self.link.close()


class ShmTransport:
    """The shared-memory region ``name`` (``/dev/shm/name``, mode 0600), created here and
    removed on ``close``: a sequence-locked slot per direction holding one message of the
    wire format (docs/SIL.md, "Shared memory"). A message's address is its writer's pid,
    so a second controller's messages count as foreign as on UDP."""

    def __init__(self, name: str) -> None:
        try:
            self.link = _core.ShmLink(name, True)
        except (RuntimeError, ValueError) as e:
            raise ConfigError(f"--shm {name}: {e}") from None
        self.name = name

    @property
    def address(self) -> str:
        return f"shm:{self.name}"

    def close(self) -> None:
        self.link.close()


Transport = UdpTransport | ShmTransport


def exchange(transport: Transport, failsafe: Sequence[float], spin: float) -> Any:
    """The simulator's side of a run over ``transport`` (``_core.SilExchange``): waits
    poll for ``spin`` seconds before they sleep."""
    return _core.SilExchange(transport.link, list(failsafe), spin)


def open_shm(name: str) -> Any:
    """A controller's side of the server's shared-memory region ``name``."""
    try:
        return _core.ShmLink(name, False)
    except (RuntimeError, ValueError) as e:
        raise ConfigError(str(e)) from None


def sample(runner: Any, core: Any, ex: Any, k: int, slot: float, dt: float, timeout: float,
           terminal_mask: int, obs: Any, info: Any, action: Any, stopping: Any
           ) -> tuple[int, int, int, int, float, float, float]:
    """One wall-clock sample in one native call (``_core.sil_sample``): (answer, flags,
    sample_tick, latch_tick, wake, wall, latched)."""
    answer, flags, tick, latch_tick, wake, wall, latched = _core.sil_sample(
        runner, core, ex, k, slot, dt, timeout, terminal_mask, obs, info, action, stopping)
    return answer, flags, tick, latch_tick, wake, wall, latched


__all__ = ["COMMAND", "ENDED", "FAILSAFE", "NOT_TAKEN", "STOPPED", "ShmTransport",
           "Transport", "UdpTransport", "exchange", "open_shm", "sample"]
