"""A controller in its own process, in Python (docs/SIL.md): says hello to a SIL server
over UDP or shared memory, then answers every observation with ``controller(obs)`` until
the server ends the run. The observation comes as f64 values of the env's float32
observation (exact), and is handed to the controller as float32, as the env gives it in
process."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError
from vdsim_gym.sil import protocol as wire


def run_controller(link: tuple[str, int] | str, controller: Callable[[np.ndarray], Any], *,
                   timeout: float = 10.0) -> tuple[int, wire.EndReason]:
    """Answers the server at ``link`` until its end message; returns the number of
    observations answered and the end's reason. ``link``: a UDP address ``(host, port)``
    or ``"udp:HOST:PORT"``, or ``"shm:NAME"`` (the server's shared memory; waited for up
    to ``timeout``). ``timeout`` [s]: how long to wait for the server's next message (a
    server gone raises ``TimeoutError``)."""
    with _open(link, timeout) as (send, recv):
        send(wire.hello())
        answered = 0
        while True:
            data = recv(timeout)
            if data is None:
                raise TimeoutError(f"no message from the SIL server within {timeout:g} s")
            if data[:4] == wire.END_MAGIC:
                return answered, wire.parse_end(data)
            seq, _, _, values = wire.parse_observation(data)
            action = np.asarray(controller(values.astype(np.float32)), dtype=float).reshape(-1)
            send(wire.command(seq, action))
            answered += 1


@contextlib.contextmanager
def _open(link: tuple[str, int] | str, timeout: float) -> Iterator[tuple[Any, Any]]:
    """(send(data), recv(timeout) -> data or None) of a link, closed after."""
    if isinstance(link, str) and link.startswith("shm:"):
        shm = _open_shm(link[4:], timeout)
        try:
            yield shm.send, lambda t: (got[0] if (got := shm.recv(t, 0.02)) else None)
        finally:
            shm.close()
        return
    if isinstance(link, str):
        host, sep, port = link.removeprefix("udp:").rpartition(":")
        if not link.startswith("udp:") or not sep or not port.isdigit():
            raise ConfigError(f"link {link!r} is not (host, port), 'udp:HOST:PORT' or "
                              "'shm:NAME'")
        link = (host, int(port))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def recv(t: float) -> bytes | None:
        sock.settimeout(t)
        try:
            return sock.recv(65536)
        except TimeoutError:
            return None

    try:
        sock.connect(link)  # datagrams from anyone else are not ours
        yield sock.send, recv
    finally:
        sock.close()


def _open_shm(name: str, timeout: float) -> Any:
    """The server's region, waited for up to ``timeout`` seconds."""
    from vdsim_gym.sim.links import open_shm

    deadline = time.monotonic() + timeout
    while True:
        try:
            return open_shm(name)
        except ConfigError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def stanley_pi_args(env: Any, **kwargs: Any) -> list[str]:
    """The arguments of the reference C client (examples/sil/stanley_client.c) that make
    it ``controllers.stanley_pi(env, **kwargs)``: the observation's columns as
    ``name=index:scale`` and the gains as ``name=value``, each number written exactly
    (``repr``: the C ``strtod`` reads back the same double)."""
    from vdsim_gym.controllers import stanley_pi

    policy = stanley_pi(env, **kwargs)
    lat, lon = policy.lateral, policy.longitudinal
    layout = lat.layout
    args = [f"{name}={i}:{scale!r}" for name, (i, scale) in
            zip(("e_y", "e_psi", "vx", "kappa_ref", "r"),
                layout.columns("e_y", "e_psi", "vx", "kappa_ref", "r"), strict=True)]
    (i, scale), = layout.columns("v_ref")
    args.append(f"v_ref={i}:{scale!r}")
    for name in ("wheelbase", "cg_to_front", "max_steer", "gain", "soft_speed",
                 "yaw_damping", "accel_gain"):
        args.append(f"{name}={float(getattr(lat, name))!r}")
    args += [f"{name}={float(getattr(lon, name))!r}" for name in ("dt", "kp", "ki")]
    return args
