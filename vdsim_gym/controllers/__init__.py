"""Classical baselines with stable-baselines3's ``predict`` signature, batch-vectorized."""

from __future__ import annotations

from vdsim_gym.controllers.acc import PID, ACCConfig, ACCController, load_gains
from vdsim_gym.controllers.acc_dc import acc_pid_dc, idm_dc
from vdsim_gym.controllers.acc_policy import acc_pid, idm_follower
from vdsim_gym.controllers.base import ObsLayout
from vdsim_gym.controllers.composite import LateralLongitudinal, stanley_pi
from vdsim_gym.controllers.dyno_policy import CycleFollower, cycle_follower
from vdsim_gym.controllers.idm import IDM
from vdsim_gym.controllers.mpc import MPCSteer, mpc_pi
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.stanley import Stanley
from vdsim_gym.controllers.stanley_dc import DelayCompensatedStanley, stanley_dc_pi

__all__ = ["IDM", "PID", "ACCConfig", "ACCController", "CycleFollower",
           "DelayCompensatedStanley", "LateralLongitudinal", "MPCSteer", "ObsLayout", "PISpeed",
           "Stanley", "acc_pid", "acc_pid_dc", "cycle_follower", "idm_dc", "idm_follower",
           "load_gains", "mpc_pi", "stanley_dc_pi", "stanley_pi"]
