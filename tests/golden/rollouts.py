"""Golden rollouts: digests of seeded rollouts that a refactor must leave bit-identical.

``python tests/golden/rollouts.py`` records ``rollouts.json`` beside this file (run it on
the commit before a refactor); ``tests/test_golden.py`` recomputes the digests and
compares. Results are bit-identical on one machine whatever the thread count, but not
across CPU models (numpy's SIMD sin/cos and libm can differ in the last bit), so the
file keeps one record per machine fingerprint (recording on a new machine adds its
record; recording again replaces it) and the test skips, visibly, where none matches.

Cases: DLC presets and PathFollow, L1 and L2, without latency and with fixed, uniform
(skip and queue) latency, single envs and vector envs on 1 and 2 threads; Stanley + PI
actions (row-wise numpy, so batch and single agree). ``random/...``: seeded uniform random
actions on L1 and L2 (the step-size rule, the brake, L1's one- and two-tire axles).
``eval/...``: ClosedLoopEval with a policy on an env (``env=``, ``policy=``) in mode A and
B (fixed, uniform skip/queue, normal): digests of the samples table (k, t_sample,
t_apply, c_k, overrun, command) and of the trace at the sampled times.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import stanley_pi

FILE = Path(__file__).with_name("rollouts.json")
STEPS = 120

LATENCIES: dict[str, dict[str, Any]] = {
    "none": {},
    "fixed10": {"latency": LatencyModel.fixed(0.01)},
    "uniform_skip": {"latency": LatencyModel.uniform(0.0, 0.03, seed=3), "overrun": "skip"},
    "uniform_queue": {"latency": LatencyModel.uniform(0.0, 0.025, seed=3),
                      "overrun": "queue"},
}
SCENARIOS: dict[str, tuple[str, dict[str, Any]]] = {
    "dlc_iso1": ("VDSim-DLC-v0", {"preset": "iso3888_1"}),
    "dlc_iso2": ("VDSim-DLC-v0", {"preset": "iso3888_2", "speed": 15.0}),
    "dlc_lc": ("VDSim-DLC-v0", {"preset": "lane_change_3p5_30"}),
    "path_follow": ("VDSim-PathFollow-v0", {"course_length": 120.0}),
}


# The reference physics (the default until the training-grade stepping became it): the
# unprefixed cases pin it, so it stays bit-identical; "default/..." cases pin the default.
REFERENCE: dict[str, Any] = {"integrator": "heun", "max_step": None}


def cases() -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for sc, (env_id, kw) in SCENARIOS.items():
        for level in ("L1", "L2"):
            for lat, lkw in LATENCIES.items():
                if sc != "dlc_lc" and lat in ("uniform_queue",):
                    continue
                out.append((f"{sc}/{level}/{lat}", env_id,
                            {**kw, "level": level, **lkw, **REFERENCE}))
    return out


# Physics pinned on a subset of the cases besides the reference: "default/..." the
# default (no physics keywords), "etd2/..." and "semi_implicit/..." the defaults before
# it, which stay selectable and bit-identical.
PINNED: dict[str, dict[str, Any]] = {"default": {}, "etd2": {"integrator": "etd2"},
                                     "semi_implicit": {"integrator": "semi_implicit"}}


def default_cases(prefix: str = "default") -> list[tuple[str, str, dict[str, Any]]]:
    """The physics PINNED[prefix] on a subset of the cases."""
    return [(f"{prefix}/{name}", env_id,
             {**{k: v for k, v in kw.items() if k not in REFERENCE}, **PINNED[prefix]})
            for name, env_id, kw in cases()
            if name.endswith(("/none", "/uniform_skip", "/uniform_queue"))]


def _update(h: Any, *arrays: Any) -> None:
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())


def single_digest(env_id: str, kwargs: dict[str, Any], seed: int = 11) -> str:
    env = gym.make(env_id, **kwargs)
    policy = stanley_pi(env)
    h = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    _update(h, obs, info["e_y"], info["s"])
    for _ in range(STEPS):
        obs, reward, term, trunc, info = env.step(policy.predict(obs)[0])
        terms = np.array(list(info["reward_terms"].values()))
        _update(h, obs, np.float64(reward), np.array([term, trunc]), terms,
                np.array([info["e_y"], info["s"], info["t"], info.get("t_apply", -1.0),
                          info.get("c_k", -1.0)]))
        if term or trunc:
            obs, info = env.reset()
            _update(h, obs)
    env.close()
    return h.hexdigest()


def vector_digest(env_id: str, kwargs: dict[str, Any], threads: int, seed: int = 11) -> str:
    venv = gym.make_vec(env_id, num_envs=3, threads=threads, **kwargs)
    policy = stanley_pi(gym.make(env_id, **{k: v for k, v in kwargs.items()
                                            if k not in ("latency", "overrun")}))
    h = hashlib.sha256()
    obs, _ = venv.reset(seed=seed)
    _update(h, obs)
    for _ in range(STEPS):
        obs, rew, term, trunc, infos = venv.step(policy.predict(obs)[0])
        _update(h, obs, rew, term, trunc, infos["e_y"])
    venv.close()
    return h.hexdigest()


EVAL_LATENCIES: dict[str, dict[str, Any]] = {
    "sync": {"mode": "sync"},
    "fixed10_skip": {"mode": "virtual_async", "latency": LatencyModel.fixed(0.01)},
    "fixed30_skip": {"mode": "virtual_async", "latency": LatencyModel.fixed(0.03)},
    "uniform_skip": {"mode": "virtual_async", "latency": LatencyModel.uniform(0.0, 0.03, 3)},
    "uniform_queue": {"mode": "virtual_async", "overrun": "queue",
                      "latency": LatencyModel.uniform(0.0, 0.025, 3)},
    "normal_queue": {"mode": "virtual_async", "overrun": "queue",
                     "latency": LatencyModel.normal(0.01, 0.004, 5)},
}


def eval_digest(level: str, kwargs: dict[str, Any], physics: dict[str, Any] | None = None
                ) -> str:
    from vdsim_gym.eval import ClosedLoopEval

    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", level=level,
                   terminate_on_cone=False, **(REFERENCE if physics is None else physics))
    res = ClosedLoopEval(env=env, policy=stanley_pi(env), seed=5, duration=3.0,
                         **kwargs).run()
    s = res.samples
    h = hashlib.sha256()
    lon = "u_pedal" if "u_pedal" in s else "u_fx"
    _update(h, s["k"], s["t_sample"], s["t_apply"], s["c_k"], s["overrun"], s["applied"],
            s["u_steer"], s[lon])
    # The trace at the sampled grid times (the rows both eval forms share).
    at = np.isin(np.round(res.trace["t"] / 5e-4).astype(np.int64),
                 np.round(s["t_sample"] / 5e-4).astype(np.int64))
    _update(h, *(res.trace[c][at] for c in ("X", "Y", "psi", "vx", "vy", "r")))
    return h.hexdigest()


def fingerprint() -> dict[str, Any]:
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    return {"machine": platform.machine(), "numpy": np.__version__,
            "libc": "-".join(platform.libc_ver()), "python": platform.python_version(),
            "simd": sorted(f for f in flags if f in ("avx2", "fma", "avx512f", "avx512dq",
                                                      "avx512vl", "avx512bw"))}


# ACC and the dyno (added 2026-12-04, recorded on the commit before the delay-line
# refactor of issue 28): the acceleration cascade under every integrator, the robot
# driver's modes and transport delay, the dyno's pedal line and pedal actuator, latency.
ACC_CASES: dict[str, dict[str, Any]] = {
    f"acc/{family}/{physics}/{lat}": {"scenario": family, **pkw, **lkw}
    for family in ("follow", "cut_in", "hard_brake", "stop_and_go")
    for physics, pkw in (("default", {}), ("etd2", {"integrator": "etd2"}),
                         ("semi_implicit", {"integrator": "semi_implicit"}),
                         ("heun", REFERENCE))
    for lat, lkw in (("none", {}), ("uniform_skip", LATENCIES["uniform_skip"]))
    if lat == "none" or family in ("cut_in", "stop_and_go")
}
DYNO_CASES: dict[str, dict[str, Any]] = {
    "dyno/speed": {"driver": "speed"},
    "dyno/speed_delay": {"driver": {"mode": "speed", "delay_s": 0.3}},
    "dyno/accel": {"driver": "accel"},
    "dyno/accel_delay_envelope": {"driver": {"mode": "accel", "delay_s": 0.2,
                                             "max_accel_mps2": 1.8, "max_decel_mps2": 2.5}},
    "dyno/pedal_line": {"driver": {"mode": "pedal", "delay_s": 0.3}},
    "dyno/pedal_actuator": {"driver": None,
                            "pedal_actuator": {"time_constant": 0.15, "rate_limit": 4.0}},
    "dyno/speed_actuator_latency": {"driver": {"mode": "speed", "delay_s": 0.1},
                                    "pedal_actuator": {"time_constant": 0.1},
                                    "latency": LatencyModel.uniform(0.0, 0.08, seed=3)},
    "dyno/highway": {"cycle": "highway", "driver": "speed"},
}
TASK_STEPS = 300


def task_digest(env_id: str, kwargs: dict[str, Any], seed: int = 11) -> str:
    """ACC (acc_pid) or the dyno (cycle_follower): obs, reward, flags, terms and the
    task's physical info per step over TASK_STEPS steps, resetting at episode ends."""
    from vdsim_gym.controllers import acc_pid, cycle_follower

    env = gym.make(env_id, **kwargs)
    if env_id == "VDSim-ACC-v0":
        predict = acc_pid(env).predict
    elif env.unwrapped.action_names == ("pedal",):  # no driver law: a P pedal on the cycle
        names = list(env.unwrapped.obs_names)
        i_ref, i_v = names.index("cycle_0s"), names.index("speed")

        def predict(o: np.ndarray) -> tuple[np.ndarray, None]:
            return np.clip([3.0 * (o[i_ref] - o[i_v])], -1.0, 1.0).astype(np.float32), None
    else:
        predict = cycle_follower(env).predict
    keys = sorted(k for k, tp in env.unwrapped.INFO_KEYS if tp in (float, int))
    h = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    _update(h, obs)
    for _ in range(TASK_STEPS):
        obs, reward, term, trunc, info = env.step(predict(obs)[0])
        terms = np.array(list(info["reward_terms"].values()))
        _update(h, obs, np.float64(reward), np.array([term, trunc]), terms,
                np.array([float(info[k]) for k in keys]), np.float64(info.get("t_apply", -1.0)))
        if term or trunc:
            obs, info = env.reset()
            _update(h, obs)
    env.close()
    return h.hexdigest()


# Uniform random actions (full pedal and steer swings, as RL's first rollouts): wheel
# locks, releases and large slips, so the step-size rule, the Coulomb brake and both tire
# paths of L1 (one tire per axle without roll_stiffness_front, two with it) are pinned.
RANDOM_CASES: dict[str, dict[str, Any]] = {
    f"{level}/{physics}/{vehicle}": {"level": level, **pkw, **vkw}
    for level in ("L1", "L2")
    for physics, pkw in (("default", {}), ("etd2", {"integrator": "etd2"}),
                         ("semi_implicit", {"integrator": "semi_implicit"}),
                         ("step_tol", {"step_tol": 6e-4}),
                         ("etd2_step_tol", {"integrator": "etd2", "step_tol": 6e-4}))
    for vehicle, vkw in (("sedan", {}), ("no_roll", {"vehicle": {"roll_stiffness_front":
                                                                 None}}))
}


def random_digest(kwargs: dict[str, Any], seed: int = 11) -> str:
    env = gym.make("VDSim-DLC-v0", terminate_on_cone=False, **kwargs)
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    obs, _ = env.reset(seed=seed)
    _update(h, obs)
    for a in rng.uniform(-1.0, 1.0, size=(STEPS, 2)).astype(np.float32):
        obs, reward, term, trunc, _ = env.step(a)
        _update(h, obs, np.float64(reward), np.array([term, trunc]))
        if term or trunc:
            obs, _ = env.reset()
            _update(h, obs)
    _update(h, env.unwrapped.state)
    env.close()
    return h.hexdigest()


def compute() -> dict[str, str]:
    out = {}
    for name, kw in RANDOM_CASES.items():
        out[f"random/{name}"] = random_digest(kw)
    for name, kw in ACC_CASES.items():
        out[f"single/{name}"] = task_digest("VDSim-ACC-v0", kw)
    for name, kw in DYNO_CASES.items():
        out[f"single/{name}"] = task_digest("VDSim-Dyno-v0", kw)
    for name, env_id, kw in cases():
        out[f"single/{name}"] = single_digest(env_id, kw)
    for name, env_id, kw in cases():
        if name.endswith("/none") or name.endswith("/uniform_skip"):
            for threads in (1, 2):
                out[f"vector{threads}/{name}"] = vector_digest(env_id, kw, threads)
    for level in ("L1", "L2"):
        for name, kw in EVAL_LATENCIES.items():
            out[f"eval/{level}/{name}"] = eval_digest(level, kw)
    for prefix, physics in PINNED.items():
        for name, env_id, kw in default_cases(prefix):
            out[f"single/{name}"] = single_digest(env_id, kw)
            if name.endswith("/none"):
                for threads in (1, 2):
                    out[f"vector{threads}/{name}"] = vector_digest(env_id, kw, threads)
        for level in ("L1", "L2"):
            for name in ("sync", "uniform_skip"):
                out[f"eval/{prefix}/{level}/{name}"] = eval_digest(
                    level, EVAL_LATENCIES[name], physics)
    return out


def _head() -> str:
    """The source commit (the module's baked sha can lag in incremental builds)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=FILE.parent, text=True,
                             capture_output=True, check=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return vdsim_gym.__git_sha__


def load() -> list[dict[str, Any]]:
    """The records in the file (one per machine fingerprint)."""
    if not FILE.exists():
        return []
    data = json.loads(FILE.read_text())
    return data["records"] if "records" in data else [data]


def main() -> None:
    here = fingerprint()
    record = {"fingerprint": here, "recorded_at": _head(), "digests": compute()}
    records = [r for r in load() if r["fingerprint"] != here] + [record]
    FILE.write_text(json.dumps({"records": records}, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(f"recorded {len(record['digests'])} digests for this machine in {FILE} "
                     f"({len(records)} machine record(s))\n")


if __name__ == "__main__":
    main()
