"""The simulation's Python face: the plant on its own (``plant``: ``Plant``,
``PhysicsSpec``; ``physics_options``: the options' checks and ``make_session``;
``realtime``: mode C's runner), domain randomization (``randomization``), the baselines'
C++ kernels (``baselines``) and the SIL transports over the core (``links``). The configurations
are ``vdsim_gym.config``, the clock ``vdsim_gym.timing``, the chassis dyno
``vdsim_gym.dyno``.
This package imports nothing itself.
"""
