"""The benchmark scripts run: each documented command of docs/BENCHMARKS.md, on tiny
settings, exits 0 and prints its table. No figure is checked (timings belong to the
scripts' own runs, never to a test); what breaks here is a script that no longer runs
against the package (a renamed attribute, a changed return value, a peer's warning under
the suite's warnings-as-errors)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _run(script: str, *args: str, timeout: float = 300) -> str:
    # Outside the repository (tmp's cwd is not needed): the installed package, as a user
    # runs the scripts; -W error: a warning is a failure, as in the suite.
    r = subprocess.run([sys.executable, "-W", "error", str(BENCH / script), *args],
                       capture_output=True, text=True, timeout=timeout, cwd=ROOT.parent)
    assert r.returncode == 0, f"{script} {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_bench_vector_ends(mode):
    out = _run("bench_vector_ends.py", "--repeats", "1", "--steps", "400",
               "--envs", "VDSim-DLC-v0,VDSim-Dyno-v0", "--sizes", "8", "--autoreset", mode)
    assert "raw / make_vec" in out
    assert sum(line.startswith("VDSim-") for line in out.splitlines()) == 2


@pytest.mark.parametrize("case", ["dlc", "acc"])
def test_bench_random_actions(case):
    out = _run("bench_random_actions.py", "--repeats", "1", "--steps", "30", "--case", case)
    assert ("VDSim-ACC-v0" if case == "acc" else "VDSim-DLC-v0") in out
    assert "etd3 tol 6e-4  random" in out and "random actions: etd3 / semi_implicit" in out
    assert "etd3           noise 0.3" in out and "etd3: noise 0.5 / baseline actions" in out
    assert "baseline: etd3 / etd2" in out and "random: etd3 / etd2" in out


def test_compare_builds_against_itself():
    out = _run("compare_builds.py", sys.executable, sys.executable, "--repeats", "1")
    rows = [line for line in out.splitlines() if "per 20 ms step" in line or "step" in line]
    assert any(line.startswith("L2 physics alone per 20 ms step") for line in rows), out


def test_bench_construction():
    out = _run("bench_construction.py", "--n", "50", "--repeats", "1")
    assert "make_vec N=50: build" in out


def test_bench_construction_resets():
    out = _run("bench_construction.py", "--n", "20", "--repeats", "1", "--resets")
    assert "VDSim-DLC-v0 randomized: one reset in C++" in out


def test_bench_sil():
    out = _run("bench_sil.py", "--repeats", "1", "--envs", "VDSim-Dyno-v0", "--seconds",
               "0.2")
    assert "lockstep VDSim-Dyno-v0: UDP" in out and "shared memory" in out
    assert "wall clock Tc = 1 ms, udp" in out and "wall clock Tc = 1 ms, shm" in out
    assert "server round trip (UDP) / raw C UDP ping-pong" in out
    assert "shared memory / UDP round trip" in out


def test_bench_offpolicy():
    pytest.importorskip("sb3_contrib")
    out = _run("bench_offpolicy.py", "--repeats", "1", "--steps", "5", "--warmup", "20")
    assert "tqc / sac:" in out and "crossq / sac:" in out


def test_bench_baselines():
    out = _run("bench_baselines.py", "--repeats", "1", "--calls", "128")
    assert "ratios, median (min, max) over the blocks:" in out
    out = _run("bench_baselines.py", "--repeats", "1", "--calls", "64",
               "--cases", "stanley_dc_pi,mpc_pi,acc_pid_dc")
    assert "mpc_pi: single predict / env step" in out and "acc_pid_dc predict" in out


def test_bench_eval_overhead():
    out = _run("bench_eval_overhead.py", "--repeats", "1", "--duration", "0.2")
    assert "ClosedLoopEval / plain loop rate" in out


@pytest.mark.skipif(importlib.util.find_spec("envpool") is None,
                    reason="needs EnvPool (pip install 'vdsim-gym[bench]')")
def test_bench_envpool():
    out = _run("bench_envpool.py", "--num-envs", "4", "--steps", "5", "--repeats", "1",
               "--construct", "20", "--construct-repeats", "1")
    assert "EnvPool LaneKeeping-v0, random actions" in out and "KiB per env" in out


def test_bench_compensated_sweep():
    out = _run("bench_compensated_sweep.py", "--repeats", "1", "--seeds", "2",
               "--delays", "0,40ms")
    assert "4 episodes a sweep" in out and "stanley_dc_pi / stanley_pi:" in out


def test_bench_mpc():
    pytest.importorskip("osqp")
    out = _run("bench_mpc.py", "--repeats", "1", "--passes", "1")
    assert "single predict / env step" in out and "batch-of-64 row / env step" in out
    assert "rows solved by OSQP" in out
