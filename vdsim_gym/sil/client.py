"""A controller in its own process, in Python (docs/SIL.md): says hello to a SIL server,
then answers every observation with ``controller(obs)`` until the server ends the run.
The observation comes as f64 values of the env's float32 observation (exact), and is
handed to the controller as float32, as the env gives it in process."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import numpy as np

from vdsim_gym.sil import protocol as wire


def run_controller(address: tuple[str, int], controller: Callable[[np.ndarray], Any], *,
                   timeout: float = 10.0) -> tuple[int, wire.EndReason]:
    """Answers the server at ``address`` until its end message; returns the number of
    observations answered and the end's reason. ``timeout`` [s]: how long to wait for
    the server's next message (a server gone raises ``TimeoutError``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(timeout)
    try:
        sock.connect(address)  # datagrams from anyone else are not ours
        sock.send(wire.hello())
        answered = 0
        while True:
            data = sock.recv(65536)
            if data[:4] == wire.END_MAGIC:
                return answered, wire.parse_end(data)
            seq, _, _, values = wire.parse_observation(data)
            action = np.asarray(controller(values.astype(np.float32)), dtype=float).reshape(-1)
            sock.send(wire.command(seq, action))
            answered += 1
    finally:
        sock.close()


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
