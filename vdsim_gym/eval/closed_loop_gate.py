"""Closed-loop accuracy gate: each env's task metric under its baseline, across the delays
users study, against a fine reference (docs/PHYSICS.md, "Closed-loop gate").

A step that lags the body acts like an extra delay, so an integrator that passes the
open-loop gate (ay and r within 2 %) can still change the answer to the delay question.
This gate asks that question directly: every case runs the env's own baseline through
``ClosedLoopEval`` in mode B (fixed delays, skip overruns) with the physics under test and
with the fine reference, and compares the env's metric:

    err = |metric - metric_ref| / |metric_ref|      within GATE (1 %)

The reference is ``integrator="heun", substep_dt=1e-4`` (the dyno: its bench cut into
0.1 ms substeps, where its two speed-update rules agree to 0.01 %); the thresholds come
from it, never from the method under test.

    from vdsim_gym.eval.closed_loop_gate import run_gate
    rows = run_gate({"integrator": "etd3"}, cases=("dlc_iso3888_1",), levels=("L2",))
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.errors import ConfigError

GATE = 0.01  # relative error allowed for every metric [-]
REFERENCE: dict[str, Any] = {"integrator": "heun", "substep_dt": 1e-4}
DYNO_REFERENCE_SUBSTEP = 1e-4  # [s], the bench's integration step for the dyno reference
PATH_DELAYS = (0.0, 0.005, 0.01, 0.02, 0.04)  # [s]
ACC_DELAYS = (0.0, 0.1, 0.2)  # [s]
DYNO_DELAYS = (0.0, 0.3)  # [s] the robot driver's transport delay


@dataclass(frozen=True)
class GateCase:
    """One env configuration, its baseline, its metrics and the delays to sweep."""

    name: str
    env_id: str
    env_kwargs: Mapping[str, Any]
    policy: str  # "stanley_pi" | "acc_pid" | "cycle_follower"
    metrics: tuple[str, ...]  # stats keys, or episode_summary keys
    delays: tuple[float, ...]
    duration: float | None = None  # [s]; None: the env's time limit
    dyno: bool = False  # the delay is the driver's transport delay; no vehicle levels


def _cases() -> dict[str, GateCase]:
    path = ("e_y_rmse_m", "e_y_max_m")
    acc = ("min_gap", "rms_jerk", "rms_time_gap_error")
    cases = [
        GateCase("dlc_iso3888_1", "VDSim-DLC-v0", {"preset": "iso3888_1", "speed": 20.0},
                 "stanley_pi", path, PATH_DELAYS),
        GateCase("dlc_iso3888_2", "VDSim-DLC-v0", {"preset": "iso3888_2", "speed": 15.0},
                 "stanley_pi", path, PATH_DELAYS),
        GateCase("dlc_lane_change_3p5_30", "VDSim-DLC-v0",
                 {"preset": "lane_change_3p5_30", "speed": 20.0}, "stanley_pi", path,
                 PATH_DELAYS),
        GateCase("path_follow", "VDSim-PathFollow-v0", {}, "stanley_pi", path, PATH_DELAYS),
    ]
    for family in ("follow", "cut_in", "hard_brake", "stop_and_go"):
        cases.append(GateCase(f"acc_{family}", "VDSim-ACC-v0", {"scenario": family},
                              "acc_pid", acc, ACC_DELAYS, duration=30.0))
    for cycle in ("urban_stop_and_go", "highway"):
        cases.append(GateCase(f"dyno_{cycle}", "VDSim-Dyno-v0", {"cycle": cycle},
                              "cycle_follower", ("rms_speed_error",), DYNO_DELAYS,
                              duration=3600.0, dyno=True))
    return {c.name: c for c in cases}


CASES: dict[str, GateCase] = _cases()


@dataclass(frozen=True)
class GateRow:
    case: str
    level: str  # "L1" | "L2" | "dyno"
    delay: float  # [s]
    metric: str
    reference: float
    value: float

    @property
    def rel_err(self) -> float:
        if self.reference == 0.0:
            return 0.0 if self.value == 0.0 else math.inf
        return abs(self.value - self.reference) / abs(self.reference)

    @property
    def signed_err(self) -> float:
        return (self.value - self.reference) / abs(self.reference) if self.reference else 0.0

    @property
    def passes(self) -> bool:
        return self.rel_err <= GATE


def _policy(name: str, env: gym.Env) -> Any:
    if name == "stanley_pi":
        from vdsim_gym.controllers import stanley_pi
        return stanley_pi(env)
    if name == "acc_pid":
        from vdsim_gym.controllers.acc_policy import acc_pid
        return acc_pid(env)
    from vdsim_gym.controllers.dyno_policy import cycle_follower
    return cycle_follower(env)


def _env_kwargs(case: GateCase, level: str, physics: Mapping[str, Any], delay: float,
                reference: bool) -> dict[str, Any]:
    kwargs = dict(case.env_kwargs)
    if case.dyno:  # the bench integrates on its own (DynoConfig.speed_update); physics unused
        from vdsim_gym.dyno.config import load_dyno
        kwargs["driver"] = {"mode": "speed", "delay_s": delay}
        if reference:
            kwargs["vehicle"] = dataclasses.replace(load_dyno(),
                                                    max_substep=DYNO_REFERENCE_SUBSTEP)
        return kwargs
    kwargs["level"] = level
    kwargs.update(REFERENCE if reference else physics)
    return kwargs


def case_metrics(case: GateCase, level: str, physics: Mapping[str, Any], *,
                 reference: bool = False, seed: int = 0) -> dict[tuple[float, str], float]:
    """{(delay, metric): value} of ``case`` on ``level`` with ``physics`` (gym.make
    keywords), or with the fine reference."""
    from vdsim_gym.eval import ClosedLoopEval
    out: dict[tuple[float, str], float] = {}
    for delay in case.delays:
        env = gym.make(case.env_id, **_env_kwargs(case, level, physics, delay, reference))
        try:
            if case.dyno:
                ev = ClosedLoopEval(env=env, policy=_policy(case.policy, env), mode="sync",
                                    seed=seed, duration=case.duration)
            else:
                ev = ClosedLoopEval(env=env, policy=_policy(case.policy, env),
                                    mode="virtual_async", latency=LatencyModel.fixed(delay),
                                    overrun="skip", seed=seed, duration=case.duration)
            stats = ev.run().stats
        finally:
            env.close()
        summary = stats.get("episode_summary") or {}
        for metric in case.metrics:
            value = stats[metric] if metric in stats else summary.get(metric)
            if value is None:
                raise RuntimeError(f"gate case {case.name!r}: the run gave no {metric!r} "
                                   "(did the episode end?)")
            out[(delay, metric)] = float(value)
    return out


# The gym.make keywords a gate may vary: the numerical method, not the car or the task.
NUMERICAL_KEYS = ("integrator", "max_step", "substep_dt", "step_tol")


def check_gate_inputs(physics: Mapping[str, Any] | None, cases: Iterable[str] | None,
                      known: Mapping[str, Any], label: str) -> tuple[dict[str, Any], list[str]]:
    """(physics as a dict, the case names) for a gate: ConfigError for a case not in
    ``known`` or a physics keyword outside NUMERICAL_KEYS. ``label``: the gate's name."""
    physics = dict(physics or {})
    names = list(known) if cases is None else list(cases)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown {label} case(s) {unknown}; valid: {', '.join(known)}")
    for key in physics:
        if key not in NUMERICAL_KEYS:
            raise ConfigError(f"physics keyword {key!r} is not a numerical option; use "
                              f"{', '.join(NUMERICAL_KEYS[:-1])} or {NUMERICAL_KEYS[-1]}")
    return physics, names


def run_gate(physics: Mapping[str, Any] | None = None, *,
             cases: Iterable[str] | None = None, levels: Sequence[str] = ("L2", "L1"),
             seed: int = 0, progress: Callable[[str], None] | None = None) -> list[GateRow]:
    """The gate's rows for ``physics`` (gym.make keywords such as integrator, max_step;
    None or {}: the default physics) on ``cases`` (names of CASES; None: all) and
    ``levels`` (the dyno cases run once, as level "dyno")."""
    physics, names = check_gate_inputs(physics, cases, CASES, "gate")
    rows: list[GateRow] = []
    for name in names:
        case = CASES[name]
        for level in (("dyno",) if case.dyno else tuple(levels)):
            if progress is not None:
                progress(f"{name} {level}")
            ref = case_metrics(case, level, physics, reference=True, seed=seed)
            got = case_metrics(case, level, physics, seed=seed)
            rows += [GateRow(name, level, d, m, ref[(d, m)], got[(d, m)]) for d, m in ref]
    return rows


def format_table(rows: Sequence[GateRow]) -> str:
    lines = ["| case | level | delay [ms] | metric | reference | value | error [%] | gate |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.case} | {r.level} | {r.delay * 1e3:g} | {r.metric} | "
                     f"{r.reference:.5g} | {r.value:.5g} | {100 * r.signed_err:+.2f} | "
                     f"{'pass' if r.passes else 'FAIL'} |")
    return "\n".join(lines)


def summary(rows: Sequence[GateRow]) -> str:
    worst = max(rows, key=lambda r: r.rel_err)
    failed = sum(not r.passes for r in rows)
    return (f"{len(rows) - failed} of {len(rows)} metrics within {100 * GATE:g} % of the "
            f"reference; worst {100 * worst.rel_err:.2f} % ({worst.case} {worst.level} "
            f"{worst.delay * 1e3:g} ms {worst.metric})")


__all__ = ["CASES", "GATE", "NUMERICAL_KEYS", "REFERENCE", "GateCase", "GateRow",
           "case_metrics", "check_gate_inputs",
           "format_table", "run_gate", "summary"]
