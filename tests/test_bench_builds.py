"""benchmarks/bench_builds.py reads the rows of both bench tables (and only them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location(
    "bench_builds", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_builds.py")
bench_builds = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_builds)

SINGLE = """\
[bench] done in 0.3 s
case                                              us/call      calls/s   substeps/s
gym.make(VDSim-DLC-v0) L2 step                       5.56       179978      7199121
  its C++ core step (L2)                             4.74       211090      8443616

L2: env step / its C++ core step = 1.173  (aim <= 1.5; reference physics: 1.020)
"""
VECTOR = """\
case                                            N threads  agent steps/s   substeps/s
make_vec VDSim-DLC-v0                           1       1         143361      5734438
  core vector step (C++ only)                  64       2         361447     14457863
gymnasium CartPole-v1 SyncVectorEnv            64       -         198965            -

N=64 threads=2: make_vec default / reference physics = 5.19x the agent steps/s
"""


def test_single_env_rows():
    assert bench_builds.rates(SINGLE, vector=False) == {
        "gym.make(VDSim-DLC-v0) L2 step": 179978.0, "  its C++ core step (L2)": 211090.0}


def test_vector_rows_are_keyed_by_n_and_threads():
    assert bench_builds.rates(VECTOR, vector=True) == {
        "make_vec VDSim-DLC-v0 N=1 threads=1": 143361.0,
        "  core vector step (C++ only) N=64 threads=2": 361447.0,
        "gymnasium CartPole-v1 SyncVectorEnv N=64 threads=-": 198965.0}
