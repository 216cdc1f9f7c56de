"""Software in the loop: the env driven by a controller in its own process over UDP
(docs/SIL.md). ``serve_lockstep`` runs the server side, ``run_controller`` a Python
controller; ``protocol`` is the wire format."""

from vdsim_gym.sil.client import run_controller, stanley_pi_args
from vdsim_gym.sil.protocol import EndReason, Malformed
from vdsim_gym.sil.server import SilStats, UdpTransport, serve_lockstep

__all__ = ["EndReason", "Malformed", "SilStats", "UdpTransport", "run_controller",
           "serve_lockstep", "stanley_pi_args"]
