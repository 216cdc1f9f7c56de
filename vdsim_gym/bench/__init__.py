"""The benchmarks of ``vdsim-gym bench``, callable from Python: ``throughput``
(``run_bench``: agent steps through ``gym.make``, the env's C++ core step and the physics
alone, side by side; SB3 SAC's env share; highway-env), ``vector`` (``run_bench_vector``:
the vector session against its C++ batch step, reference envs, SB3 PPO's env share) and
``wallclock`` (``run_bench_wallclock``: mode C's jitter on this host and the DLC baseline
in mode C against mode A). Each returns the report's lines. This package imports nothing
itself.
"""
