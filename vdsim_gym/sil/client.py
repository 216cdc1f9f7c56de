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
