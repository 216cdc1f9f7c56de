"""The simulation's Python face: the plant on its own (``plant``: ``Plant``,
``PhysicsSpec``; ``physics_options``: the options' checks and ``make_session``;
``realtime``: mode C's runner and sensor hook), domain randomization (``randomization``),
the baselines' C++ kernels (``baselines``), the SIL transports over the core (``links``)
and the core's timing objects the callback form drives (``timeline``). The configurations
are ``vdsim_gym.config``, the clock ``vdsim_gym.timing``, the chassis dyno
``vdsim_gym.dyno``.
This package imports nothing itself.
"""
