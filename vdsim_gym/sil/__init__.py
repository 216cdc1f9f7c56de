"""Software in the loop: the env driven by a controller in its own process over UDP or
shared memory (docs/SIL.md). ``serve_lockstep`` and ``serve_wallclock`` run the server
side, ``run_controller`` a Python controller; ``protocol`` is the wire format."""

from vdsim_gym.sil.client import run_controller, stanley_pi_args
from vdsim_gym.sil.protocol import EndReason, Malformed
from vdsim_gym.sil.server import (
    ShmTransport,
    SilStats,
    UdpTransport,
    serve_lockstep,
    serve_wallclock,
)

__all__ = ["EndReason", "Malformed", "ShmTransport", "SilStats", "UdpTransport",
           "run_controller", "serve_lockstep", "serve_wallclock", "stanley_pi_args"]
