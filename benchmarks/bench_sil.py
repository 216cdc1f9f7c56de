"""Software in the loop, lockstep over loopback UDP: samples per second of
``serve_lockstep`` answered by the reference C client (examples/sil/zero_client.c, built
here with the system compiler), against the same env stepped in process with the same
(constant) action, blocks interleaved; wall time (two processes on two cores), median
(min, max) over the repeats. Issue 48's target: at least 20,000 samples/s.

    python benchmarks/bench_sil.py [--repeats 5] [--envs VDSim-Dyno-v0,VDSim-DLC-v0]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.sil import UdpTransport, serve_lockstep

CLIENT = Path(__file__).resolve().parents[1] / "examples" / "sil" / "zero_client.c"
DURATION = {"VDSim-Dyno-v0": 200.0, "VDSim-DLC-v0": 15.0}


def _stats(xs: list[float], fmt: str = ".0f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}, {max(xs):{fmt}})"


def _sil(exe: Path, env_id: str) -> tuple[int, float]:
    env = gym.make(env_id)
    transport = UdpTransport()
    n_act = str(len(env.unwrapped.action_names))
    proc = subprocess.Popen([str(exe), f"udp:127.0.0.1:{transport.address[1]}", n_act],
                            stdout=subprocess.DEVNULL)
    try:
        stats = serve_lockstep(env, transport, duration=DURATION[env_id])
    finally:
        proc.wait(timeout=60)
        transport.close()
    return stats.n_samples, stats.n_samples / stats.wall_s


def _in_process(env_id: str, n: int) -> float:
    env = gym.make(env_id)
    env.reset(seed=0)
    action = np.zeros(len(env.unwrapped.action_names))
    t0 = time.perf_counter()
    for _ in range(n):
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset(seed=0)
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--envs", default="VDSim-Dyno-v0,VDSim-DLC-v0")
    args = ap.parse_args()
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise SystemExit("bench_sil: no C compiler (cc, gcc or clang) on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "zero_client"
        subprocess.run([cc, "-O2", "-o", str(exe), str(CLIENT)], check=True)
        for env_id in args.envs.split(","):
            sil, local, ratio = [], [], []
            for _ in range(args.repeats):
                n, rate = _sil(exe, env_id)
                own = _in_process(env_id, n)
                sil.append(rate)
                local.append(own)
                ratio.append(rate / own)
            print(f"{env_id}: lockstep UDP with the C client {_stats(sil)} samples/s; in "
                  f"process {_stats(local)} steps/s; SIL / in process {_stats(ratio, '.3f')}")


if __name__ == "__main__":
    main()
