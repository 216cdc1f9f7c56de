"""The simulation's Python face: the vehicle and actuator configurations (``config``),
the plant on its own (``plant``: ``Plant``, ``PhysicsSpec``), the integer substep clock
(``timing``), latency models and the delay grammar (``latency``) and domain randomization
(``randomization``). The chassis dyno is ``vdsim_gym.dyno``. This package imports nothing
itself.
"""
