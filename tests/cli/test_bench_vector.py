"""The vector benchmark's measurements run (small sizes); figures are not asserted."""

from __future__ import annotations

import numpy as np
import pytest

from vdsim_gym.bench.vector import vector_rows
from vdsim_gym.cli import main
from vdsim_gym.envs.vector import VDSimVectorEnv


def test_bench_vector_rows_measure_the_same_work():
    env, core, phys = vector_rows(num_envs=3, threads=1, steps=5, repeats=1)
    assert env.num_envs == core.num_envs == phys.num_envs == 3
    # Every row counts the same work: 40 substeps (20 ms of 0.5 ms) per agent step.
    for r in (env, core, phys):
        assert r.substeps_per_s == pytest.approx(40 * r.agent_steps_per_s, rel=1e-12)


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


def test_bench_vector_shows_progress_on_stderr(capsys):
    """~30 s at full size: a line per configuration on stderr; stdout is the table."""
    assert main(["bench", "--vector", "--steps", "1", "--repeats", "1", "--no-ppo"]) == 0
    out, err = capsys.readouterr()
    assert "[bench --vector 1/8] make_vec VDSim-DLC-v0 N=1 threads=1" in err
    assert "[bench --vector 8/8] references" in err and "[bench --vector] done in" in err
    assert out.startswith("case") and "[bench" not in out


def test_bench_shows_progress_on_stderr(capsys, monkeypatch):
    from vdsim_gym.bench import throughput

    # the load warning, when the machine is busy, heads the table: not under test here
    monkeypatch.setattr(throughput, "load_warning", lambda: None)
    assert main(["bench", "--repeats", "1", "--no-highway", "--no-sac"]) == 0
    out, err = capsys.readouterr()
    assert "[bench 1/2] L2: env, C++ core and physics" in err and "[bench 2/2] L1" in err
    # each stage's answer on stdout as it finishes, then the whole table
    assert out.startswith("[bench 1/2] gym.make(VDSim-DLC-v0) L2 step: ")
    assert "[bench 2/2] gym.make(VDSim-DLC-v0) L1 step: " in out
    table = out[out.index("\ncase") + 1:]
    assert table.startswith("case") and "[bench" not in table
