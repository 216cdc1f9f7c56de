"""Software in the loop with the reference C client (examples/sil/zero_client.c, built here
with the system compiler), measured side by side in one run, blocks interleaved, median
(min, max) over the repeats; wall time (two processes on two cores: the server pinned to
CPU 0, the client to CPU 1 unless --no-pin). The targets:

- lockstep: samples/s over UDP (target >= 20,000) and shared memory, against the same env
  stepped in process with the same action;
- wall clock at Tc = 1 ms (VDSim-DLC-v0, substep 0.5 ms): p99 of (apply - sample) in
  substeps above the client's compute (the zero client's is ~0; target <= 2), samples lost
  (fail-safe; target 0), the server's round trip (from the wake at the sample's slot to
  the command latched: everything the server adds) against a raw C UDP ping-pong at the
  same period (benchmarks/sil_pingpong.c with the same client, waiting for each period
  by sleeping as the server does, and by spinning; target <= 1.5x), and the
  shared memory's round trip against UDP's (send to answer; target <= 0.25x).

    python benchmarks/bench_sil.py [--repeats 5] [--seconds 3] [--envs ...] [--no-pin]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.sil import ShmTransport, UdpTransport, serve_lockstep, serve_wallclock

ROOT = Path(__file__).resolve().parents[1]
LOCKSTEP_DURATION = {"VDSim-Dyno-v0": 200.0, "VDSim-DLC-v0": 15.0}
TC = 1e-3


def _stats(xs: list[float], fmt: str = ".0f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}, {max(xs):{fmt}})"


class Pins:
    def __init__(self, enabled: bool) -> None:
        n = os.cpu_count() or 1
        self.enabled = enabled and n >= 2 and hasattr(os, "sched_setaffinity")
        if self.enabled:
            os.sched_setaffinity(0, {0})  # this process (its threads start after)

    def client(self, argv: list[str], cpu: int = 1) -> list[str]:
        taskset = shutil.which("taskset")
        return [taskset, "-c", str(cpu), *argv] if self.enabled and taskset else argv


def _transport(kind: str, tag: str) -> tuple[object, str]:
    if kind == "udp":
        t = UdpTransport()
        return t, f"udp:127.0.0.1:{t.address[1]}"
    t = ShmTransport(f"vdsim_bench_{os.getpid()}_{tag}")
    return t, t.address


def _lockstep(exe: Path, pins: Pins, env_id: str, kind: str) -> tuple[int, float]:
    env = gym.make(env_id, latency=LatencyModel.fixed(0.0))
    transport, where = _transport(kind, "ls")
    n_act = str(len(env.unwrapped.action_names))
    proc = subprocess.Popen(pins.client([str(exe), where, n_act]), stdout=subprocess.DEVNULL)
    try:
        stats = serve_lockstep(env, transport, duration=LOCKSTEP_DURATION[env_id])
    finally:
        proc.wait(timeout=60)
        transport.close()
    return stats.n_samples, stats.n_samples / stats.wall_s


def _in_process(env_id: str, n: int) -> float:
    env = gym.make(env_id, latency=LatencyModel.fixed(0.0))
    env.reset(seed=0)
    action = np.zeros(len(env.unwrapped.action_names))
    t0 = time.perf_counter()
    for _ in range(n):
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset(seed=0)
    return n / (time.perf_counter() - t0)


def _wallclock(exe: Path, pins: Pins, kind: str, seconds: float, out: Path) -> dict:
    env = gym.make("VDSim-DLC-v0", control_period=TC)
    transport, where = _transport(kind, "wc")
    proc = subprocess.Popen(pins.client([str(exe), where, "2"]), stdout=subprocess.DEVNULL)
    try:
        stats = serve_wallclock(env, transport, duration=seconds, out=out)
    finally:
        proc.wait(timeout=60)
        transport.close()
    dt = env.unwrapped.substep_dt
    with open(out / "samples.csv", newline="") as f:
        rtt = [float(r["wall_s"]) for r in csv.DictReader(f)]
    return {"p99_substeps": stats.latency["p99"] / dt, "lost": stats.n_failsafe,
            "server_rt_us": 1e6 * stats.wallclock["sample_to_apply_s"]["p50"],
            "server_rt_p99_us": 1e6 * stats.wallclock["sample_to_apply_s"]["p99"],
            "rtt_us": 1e6 * float(np.median(rtt)), "samples": stats.n_samples}


def _pingpong(pp: Path, exe: Path, pins: Pins, kind: str, n: int, wait: str) -> float:
    """The raw C round trip's median [us] at the same period, the period waited for by
    sleeping (as the server) or spinning."""
    name = f"vdsim_bench_{os.getpid()}_pp"
    argv = [str(pp), "udp" if kind == "udp" else f"shm:{name}", str(n), "16", str(TC), wait]
    server = subprocess.Popen(pins.client(argv, cpu=0), stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    if kind == "udp":
        where = f"udp:127.0.0.1:{server.stdout.readline().split()[1]}"
    else:
        where = f"shm:{name}"
    client = subprocess.run(pins.client([str(exe), where, "2"]), stdout=subprocess.DEVNULL,
                            timeout=120)
    out, _ = server.communicate(timeout=120)
    if client.returncode != 0 or server.returncode != 0:
        raise SystemExit(f"bench_sil: the {kind} ping-pong failed")
    return float(out.split()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="simulated (= wall) seconds of each wall-clock run")
    ap.add_argument("--envs", default=",".join(LOCKSTEP_DURATION),
                    help="the lockstep runs' envs (of " + ", ".join(LOCKSTEP_DURATION) + ")")
    ap.add_argument("--no-pin", action="store_true", help="leave the CPUs to the scheduler")
    args = ap.parse_args()
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        raise SystemExit("bench_sil: no C compiler (cc, gcc or clang) on PATH")
    pins = Pins(not args.no_pin)
    print(f"CPU pinning: {'server 0, client 1' if pins.enabled else 'none'}; "
          f"{args.repeats} repeats")
    with tempfile.TemporaryDirectory() as tmp:
        exe, pp = Path(tmp) / "zero_client", Path(tmp) / "sil_pingpong"
        subprocess.run([cc, "-O2", "-o", str(exe), str(ROOT / "examples/sil/zero_client.c")],
                       check=True)
        subprocess.run([cc, "-O2", "-I", str(ROOT / "examples/sil"), "-o", str(pp),
                        str(ROOT / "benchmarks/sil_pingpong.c")], check=True)
        for env_id in args.envs.split(","):
            if env_id not in LOCKSTEP_DURATION:
                raise SystemExit(f"bench_sil: --envs takes {', '.join(LOCKSTEP_DURATION)}")
            rates: dict[str, list[float]] = {"udp": [], "shm": [], "local": []}
            for _ in range(args.repeats):
                for kind in ("udp", "shm"):
                    n, rate = _lockstep(exe, pins, env_id, kind)
                    rates[kind].append(rate)
                rates["local"].append(_in_process(env_id, n))
            print(f"lockstep {env_id}: UDP {_stats(rates['udp'])} samples/s, shared memory "
                  f"{_stats(rates['shm'])}; in process {_stats(rates['local'])} steps/s")
        runs: dict[str, list[dict]] = {"udp": [], "shm": []}
        raw: dict[str, list[float]] = {"udp": [], "shm": [], "udp_spin": []}
        n_pp = int(args.seconds / TC)
        for r in range(args.repeats):
            for kind in ("udp", "shm"):
                runs[kind].append(_wallclock(exe, pins, kind, args.seconds,
                                             Path(tmp) / f"wc_{kind}_{r}"))
                raw[kind].append(_pingpong(pp, exe, pins, kind, n_pp, "sleep"))
            raw["udp_spin"].append(_pingpong(pp, exe, pins, "udp", n_pp, "spin"))
        for kind in ("udp", "shm"):
            rs = runs[kind]
            print(f"wall clock Tc = 1 ms, {kind}: p99 (apply - sample) "
                  f"{_stats([x['p99_substeps'] for x in rs], '.1f')} substeps; lost "
                  f"{_stats([x['lost'] for x in rs])}; samples "
                  f"{_stats([x['samples'] for x in rs])}; "
                  f"server round trip p50 {_stats([x['server_rt_us'] for x in rs], '.1f')} us "
                  f"(p99 {_stats([x['server_rt_p99_us'] for x in rs], '.0f')}); transport "
                  f"round trip p50 {_stats([x['rtt_us'] for x in rs], '.2f')} us; raw C "
                  f"ping-pong p50 {_stats(raw[kind], '.2f')} us (sleeping between samples)")
        print(f"raw C UDP ping-pong spinning between samples: p50 "
              f"{_stats(raw['udp_spin'], '.2f')} us")
        server_vs_raw = [u["server_rt_us"] / p for u, p in zip(runs["udp"], raw["udp"],
                                                                 strict=True)]
        server_vs_spin = [u["server_rt_us"] / p for u, p in zip(runs["udp"], raw["udp_spin"],
                                                                  strict=True)]
        shm_vs_udp = [s["rtt_us"] / u["rtt_us"] for s, u in zip(runs["shm"], runs["udp"],
                                                               strict=True)]
        raw_shm_vs_udp = [s / u for s, u in zip(raw["shm"], raw["udp"], strict=True)]
        print(f"server round trip (UDP) / raw C UDP ping-pong: {_stats(server_vs_raw, '.2f')} "
              f"sleeping, {_stats(server_vs_spin, '.2f')} spinning (target <= 1.5)")
        print(f"shared memory / UDP round trip: {_stats(shm_vs_udp, '.3f')} (target <= 0.25); "
              f"raw C: {_stats(raw_shm_vs_udp, '.3f')}")


if __name__ == "__main__":
    main()
