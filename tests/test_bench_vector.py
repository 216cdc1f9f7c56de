"""The vector benchmark's measurements run (small sizes); figures are not asserted."""

from __future__ import annotations

import numpy as np

from vdsim_gym.bench_vector import vector_rows
from vdsim_gym.envs.vector import VDSimVectorEnv


def test_bench_vector_rows_measure_the_same_work():
    env, core, phys = vector_rows(num_envs=3, threads=1, steps=5, repeats=1)
    assert env.num_envs == core.num_envs == phys.num_envs == 3
    assert all(r.agent_steps_per_s > 0 and r.substeps_per_s > 0 for r in (env, core, phys))


def test_bench_references_reach_the_same_states():
    """step_core and advance_physics drive the same physics as step (benchmark honesty)."""
    a = np.tile([[0.02, 0.1]], (2, 1))
    states = []
    for method in ("step", "step_core", "advance_physics"):
        v = VDSimVectorEnv("VDSim-DLC-v0", 2, threads=1, terminate_on_cone=False)
        v.reset(seed=0)
        for _ in range(10):
            getattr(v, method)(a)
        states.append(np.stack([e.state for e in v.envs]))
        v.close()
    np.testing.assert_array_equal(states[0], states[1])
    np.testing.assert_array_equal(states[0], states[2])
