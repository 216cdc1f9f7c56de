"""Noisy-command gate: open-loop replays of the command streams RL sends, against a fine
reference (docs/PHYSICS.md, "Noisy-command gate").

The closed-loop gate (``closed_loop_gate``) scores each env's metric under its smooth
baseline. An RL policy sends other commands: uniform random actions in its first
rollouts, its own action plus exploration noise later. This gate records such streams and
replays them open loop, the same actions step for step, under the physics under test and
under the fine reference (``integrator="heun", substep_dt=1e-4``), and scores each env's
task signals over the run (sampled at every env step's end):

- path envs (DLC ISO 3888-1 at 20 m/s, PathFollow): e_y by its RMS (the env's
  ``rms_e_y``) and the yaw rate by its RMS;
- ACC (the ``follow`` scenario): the gap by its minimum (the env's ``min_gap``) and the
  acceleration by its RMS;

    err = |metric - metric_ref| / |metric_ref|          within GATE (1 %)

Each row also carries the trajectory error RMS(x - x_ref) / RMS(x_ref), which errors of
opposite sign cannot cancel (reported, not gated). Streams (``STREAMS``): ``uniform``
(actions uniform in [-1, 1], changing every control period) and ``noise_<sigma>`` (the
env's baseline acting on the reference run, plus N(0, sigma) on each action component,
clipped to [-1, 1]: PPO-like exploration); ``noise_0.0`` is the baseline's own stream. A
stream is recorded once, on the reference physics, so every physics replays the same
actions; it ends where the reference episode ends, or after ``duration`` seconds. A
replay that ends before the reference scores inf.

    from vdsim_gym.eval.noisy_gate import run_gate, summary
    rows = run_gate({"integrator": "heun"}, cases=("dlc",), levels=("L2",),
                    streams=("noise_0.3",), seeds=(0,))
    print(summary(rows))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.closed_loop_gate import GATE, REFERENCE, check_gate_inputs

STREAMS = ("uniform", "noise_0.1", "noise_0.3", "noise_0.5")
SEEDS = (0, 1, 2)
DURATION = 10.0  # [s] of each replay at most


@dataclass(frozen=True)
class NoisyCase:
    """One env configuration, its baseline and the signals scored."""

    name: str
    env_id: str
    env_kwargs: Mapping[str, Any]
    policy: str  # "stanley_pi" | "acc_pid"
    signals: tuple[str, ...]  # each scored by REDUCERS[signal]


def _cases() -> dict[str, NoisyCase]:
    no_end = {"terminate_on_cone": False}
    cases = [
        NoisyCase("dlc", "VDSim-DLC-v0", {"preset": "iso3888_1", "speed": 20.0, **no_end},
                  "stanley_pi", ("e_y", "yaw_rate")),
        NoisyCase("path_follow", "VDSim-PathFollow-v0", {}, "stanley_pi", ("e_y", "yaw_rate")),
        NoisyCase("acc", "VDSim-ACC-v0", {"scenario": "follow"}, "acc_pid", ("gap", "ax")),
    ]
    return {c.name: c for c in cases}


CASES: dict[str, NoisyCase] = _cases()
# How each signal's run becomes its metric: the env's own metric where it has one.
REDUCERS: dict[str, str] = {"e_y": "rms", "yaw_rate": "rms", "gap": "min", "ax": "rms"}


@dataclass(frozen=True)
class NoisyRow:
    case: str
    level: str
    stream: str
    seed: int
    signal: str
    steps: int  # env steps compared
    reference: float  # the reference run's metric (REDUCERS[signal] of the signal)
    value: float  # the run's metric under the physics under test (nan: it ended early)
    traj_err: float  # RMS(x - x_ref) / RMS(x_ref) over the run [-] (inf: it ended early)

    @property
    def metric(self) -> str:
        return f"{REDUCERS[self.signal]} {self.signal}"

    @property
    def rel_err(self) -> float:
        if not math.isfinite(self.value):
            return math.inf
        if self.reference == 0.0:
            return 0.0 if self.value == 0.0 else math.inf
        return abs(self.value - self.reference) / abs(self.reference)

    @property
    def passes(self) -> bool:
        return self.rel_err <= GATE


def _policy(name: str, env: gym.Env) -> Any:
    if name == "stanley_pi":
        from vdsim_gym.controllers import stanley_pi
        return stanley_pi(env)
    from vdsim_gym.controllers.acc_policy import acc_pid
    return acc_pid(env)


def _signals(case: NoisyCase, env: gym.Env, info: Mapping[str, Any]) -> list[float]:
    out = []
    for name in case.signals:
        if name == "yaw_rate":
            core: Any = env.unwrapped  # a vdsim env: its plant state (X, Y, psi, vx, vy, r, ...)
            out.append(float(core.state[5]))
        else:
            out.append(float(info[name]))
    return out


def _check_stream(stream: str) -> float:
    """The noise sigma of a stream name (0 for ``uniform``); ConfigError if unknown."""
    if stream == "uniform":
        return 0.0
    try:
        sigma = float(stream.removeprefix("noise_")) if stream.startswith("noise_") else -1.0
    except ValueError:
        sigma = -1.0
    if not (math.isfinite(sigma) and sigma >= 0.0):
        raise ConfigError(f"unknown stream {stream!r}; use 'uniform' or 'noise_<sigma>' with "
                          f"sigma >= 0 (e.g. {', '.join(STREAMS)})")
    return sigma


def record_stream(case: NoisyCase, level: str, stream: str, seed: int,
                  duration: float = DURATION) -> np.ndarray:
    """The (n, action_dim) float32 actions of ``stream`` on the reference physics, from
    ``reset(seed=seed)``, until the episode ends or ``duration`` has passed."""
    return _record(case, level, stream, seed, duration)[0]


def _record(case: NoisyCase, level: str, stream: str, seed: int, duration: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """The stream's actions and the reference run's signals (what ``replay`` on the
    reference gives, bit for bit: the same run)."""
    sigma = _check_stream(stream)
    env = gym.make(case.env_id, level=level, **case.env_kwargs, **REFERENCE)
    try:
        rng = np.random.default_rng([seed, 7919])
        obs, _ = env.reset(seed=seed)
        core: Any = env.unwrapped
        n = int(round(duration / core.control_period))
        space = env.action_space
        assert isinstance(space, gym.spaces.Box)
        low, high = space.low, space.high
        policy = None if stream == "uniform" else _policy(case.policy, env)
        actions, rows = [], []
        for _ in range(n):
            if policy is None:
                a = rng.uniform(low, high)
            else:
                a = np.asarray(policy.predict(obs, deterministic=True)[0], dtype=float)
                a = np.clip(a + sigma * rng.standard_normal(a.shape), low, high)
            a = a.astype(np.float32)
            actions.append(a)
            obs, _, term, trunc, info = env.step(a)
            rows.append(_signals(case, env, info))
            if term or trunc:
                break
        return np.array(actions), np.array(rows)
    finally:
        env.close()


def replay(case: NoisyCase, level: str, physics: Mapping[str, Any], actions: np.ndarray,
           seed: int) -> np.ndarray:
    """(n, n_signals): the case's signals at each step's end, replaying ``actions`` from
    ``reset(seed=seed)`` under ``physics`` (gym.make keywords); stops early if the
    episode ends (fewer rows)."""
    env = gym.make(case.env_id, level=level, **case.env_kwargs, **physics)
    try:
        env.reset(seed=seed)
        rows = []
        for a in actions:
            _, _, term, trunc, info = env.step(a)
            rows.append(_signals(case, env, info))
            if term or trunc:
                break
        return np.array(rows)
    finally:
        env.close()


def _reduce(how: str, x: np.ndarray) -> float:
    return float(np.min(x)) if how == "min" else float(np.sqrt(np.mean(x ** 2)))


def score(case: NoisyCase, x: np.ndarray, ref: np.ndarray
          ) -> list[tuple[float, float, float]]:
    """Per signal of ``case``: (reference metric, metric, trajectory error); a run that
    ended before the reference has metric nan and trajectory error inf."""
    out = []
    for i, name in enumerate(case.signals):
        r = ref[:, i]
        ref_metric = _reduce(REDUCERS[name], r)
        if len(x) < len(ref):
            out.append((ref_metric, math.nan, math.inf))
            continue
        d = x[: len(ref), i] - r
        norm = float(np.sqrt(np.mean(r ** 2)))
        traj = float(np.sqrt(np.mean(d ** 2))) / norm if norm > 0 else math.inf
        out.append((ref_metric, _reduce(REDUCERS[name], x[: len(ref), i]), traj))
    return out


def run_gate(physics: Mapping[str, Any] | None = None, *,
             cases: Iterable[str] | None = None, levels: Sequence[str] = ("L2", "L1"),
             streams: Sequence[str] = STREAMS, seeds: Sequence[int] = SEEDS,
             duration: float = DURATION,
             progress: Callable[[str], None] | None = None) -> list[NoisyRow]:
    """The gate's rows for ``physics`` (gym.make keywords; None: the default physics)."""
    physics, names = check_gate_inputs(physics, cases, CASES, "noisy-gate")
    for stream in streams:
        _check_stream(stream)
    if not seeds:
        raise ConfigError("seeds is empty; give at least one seed, e.g. seeds=(0,)")
    if not (math.isfinite(duration) and duration > 0):
        raise ConfigError(f"duration must be a positive number of seconds, got {duration!r}")
    rows: list[NoisyRow] = []
    for name in names:
        case = CASES[name]
        for level in levels:
            for stream in streams:
                for seed in seeds:
                    if progress is not None:
                        progress(f"{name} {level} {stream} seed {seed}")
                    actions, ref = _record(case, level, stream, seed, duration)
                    got = replay(case, level, physics, actions, seed)
                    rows += [NoisyRow(name, level, stream, seed, sig, min(len(got), len(ref)),
                                      *vals)
                             for sig, vals in zip(case.signals, score(case, got, ref),
                                                  strict=True)]
    return rows


def format_table(rows: Sequence[NoisyRow]) -> str:
    lines = ["| case | level | stream | seed | metric | steps | reference | value | error [%] "
             "| trajectory error [%] | gate |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.case} | {r.level} | {r.stream} | {r.seed} | {r.metric} | "
                     f"{r.steps} | {r.reference:.5g} | {r.value:.5g} | {100 * r.rel_err:.3f} | "
                     f"{100 * r.traj_err:.2f} | {'pass' if r.passes else 'FAIL'} |")
    return "\n".join(lines)


def summary(rows: Sequence[NoisyRow]) -> str:
    worst = max(rows, key=lambda r: r.rel_err)
    failed = sum(not r.passes for r in rows)
    return (f"{len(rows) - failed} of {len(rows)} metrics within {100 * GATE:g} % of the "
            f"reference; worst {100 * worst.rel_err:.2f} % ({worst.case} {worst.level} "
            f"{worst.stream} seed {worst.seed} {worst.metric}); trajectory error up to "
            f"{100 * max(r.traj_err for r in rows):.2f} %")


__all__ = ["CASES", "GATE", "REDUCERS", "REFERENCE", "SEEDS", "STREAMS", "NoisyCase", "NoisyRow",
           "format_table", "record_stream", "replay", "run_gate", "score", "summary"]
