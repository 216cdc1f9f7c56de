"""Software in the loop: the env driven by a controller in its own process over UDP or
shared memory (docs/SIL.md). ``serve_lockstep`` and ``serve_wallclock`` run the server
side over a transport (``UdpTransport``, ``ShmTransport``: vdsim_gym.sim.links),
``run_controller`` a Python controller; ``protocol`` is the wire format; ``serve``
(``run_serve``) is the ``vdsim-gym serve`` command's work."""

from vdsim_gym.sil.client import run_controller, stanley_pi_args
from vdsim_gym.sil.protocol import EndReason, Malformed
from vdsim_gym.sil.server import SilStats, serve_lockstep, serve_wallclock
from vdsim_gym.sim.links import ShmTransport, UdpTransport

__all__ = ["EndReason", "Malformed", "ShmTransport", "SilStats", "UdpTransport",
           "run_controller", "serve_lockstep", "serve_wallclock", "stanley_pi_args"]
