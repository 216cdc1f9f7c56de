"""Accuracy gate: integrator and substep against a 10x finer RK4 reference.

Each case drives the plant open loop with a steer input held on a 10 ms grid (the same
input for every substep size), samples lateral acceleration and yaw rate on that grid
and compares them with RK4 at a substep 10x finer than the finest one tried:

    err = max |trace - reference| / max |reference|     (per signal)

A case passes the gate when both errors are within 2 %. The cost is the wall time of the
core integrating one simulated second (best of a few repeats), so it excludes Python.

Run ``vdsim-gym accuracy`` (or ``python -m vdsim_gym.eval.accuracy``) to print the table
(``run_accuracy``); ``vdsim-gym accuracy --closed-loop`` and ``--noisy`` print the
closed-loop and noisy-command gates (``run_closed_loop_gate``, ``run_noisy_gate``).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from vdsim_gym._stages import Stages
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR, default_step_ticks, make_session
from vdsim_gym.sim.plant import AUX_SIZE, STATE_SIZE
from vdsim_gym.timing import nearest_ticks

if TYPE_CHECKING:
    from vdsim_gym.eval.closed_loop_gate import GateRow as ClosedLoopRow
    from vdsim_gym.eval.noisy_gate import NoisyRow

GATE = 0.02  # relative error allowed for ay and r [-]
SAMPLE_DT = 0.01  # common sampling and input-hold grid [s]
SPEED = 20.0  # initial speed [m/s]
INTEGRATORS = ("euler", "heun", "rk4")
SUBSTEPS = (2.5e-4, 5e-4, 1e-3, 2e-3)  # [s]
REFERENCE_SUBSTEP = min(SUBSTEPS) / 10.0  # RK4 reference [s]

SteerInput = Callable[[float], float]


def step_steer(t: float, amplitude: float = 0.04, t_step: float = 0.1) -> float:
    """Road-wheel step of ``amplitude`` [rad] at ``t_step`` [s]."""
    return amplitude if t >= t_step else 0.0


def double_lane_change(t: float, amplitude: float = 0.068, period: float = 2.0) -> float:
    """Out and back: a full sine period, a 1 s hold, the negated period [rad].

    One steer sine period moves the car one lane over with its heading restored; the
    negated period brings it back. At 20 m/s the amplitude gives a peak ay of 5.6 (L2)
    to 5.9 (L1) m/s^2.
    """
    t0, hold = 0.5, 1.0
    tau = t - t0
    if 0.0 <= tau < period:
        return amplitude * math.sin(2.0 * math.pi * tau / period)
    tau -= period + hold
    if 0.0 <= tau < period:
        return -amplitude * math.sin(2.0 * math.pi * tau / period)
    return 0.0


SCENARIOS: dict[str, tuple[SteerInput, float]] = {
    "step_steer": (step_steer, 3.0),
    "double_lane_change": (double_lane_change, 6.5),
}


@dataclass(frozen=True)
class GateRow:
    level: str
    scenario: str
    integrator: str
    substep: float  # [s]
    err_ay: float  # relative [-]
    err_r: float  # relative [-]
    cost_us: float  # wall time per simulated second [us]

    @property
    def passes(self) -> bool:
        return self.err_ay <= GATE and self.err_r <= GATE


def simulate(level: str, integrator: str, substep: float, scenario: str,
             step_ticks: int = 1) -> np.ndarray:
    """Run one case; returns an (n, 2) array of [ay, r] on the 10 ms grid."""
    steer, duration = SCENARIOS[scenario]
    session = make_session(level=level, vehicle=load_vehicle(), substep_dt=substep,
                           longitudinal="force", actuator=None, integrator=integrator,
                           step_ticks=step_ticks)
    session.reset(0.0, 0.0, 0.0, SPEED, 0.0, 0.0)
    ticks = nearest_ticks(SAMPLE_DT, substep)[0]
    n = round(duration / SAMPLE_DT)
    state, aux = np.zeros(STATE_SIZE), np.zeros(AUX_SIZE)
    out = np.empty((n, 2))
    for k in range(n):
        session.command_now(steer(k * SAMPLE_DT), 0.0)
        session.advance(ticks)
        session.get_state(state)
        session.get_aux(aux)
        out[k] = aux[1], state[5]
    return out


def cost_per_second(level: str, integrator: str, substep: float, repeats: int = 3,
                    step_ticks: int = 1) -> float:
    """Wall time of the core per simulated second [us], best of ``repeats``."""
    session = make_session(level=level, vehicle=load_vehicle(), substep_dt=substep,
                           longitudinal="force", actuator=None, integrator=integrator,
                           step_ticks=step_ticks)
    ticks = nearest_ticks(1.0, substep)[0]
    best = math.inf
    for _ in range(repeats):
        session.reset(0.0, 0.0, 0.0, SPEED, 0.0, 0.0)
        session.command_now(0.03, 0.0)
        t0 = time.perf_counter()
        session.advance(ticks)
        best = min(best, time.perf_counter() - t0)
    return best * 1e6


def relative_errors(trace: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """max |trace - reference| / max |reference| for each column (ay, r)."""
    err = np.max(np.abs(trace - reference), axis=0) / np.max(np.abs(reference), axis=0)
    return float(err[0]), float(err[1])


def run_gate(
    levels: Sequence[str] = ("L2", "L1"),
    scenarios: Sequence[str] = tuple(SCENARIOS),
    integrators: Sequence[str] = INTEGRATORS,
    substeps: Sequence[float] = SUBSTEPS,
    with_cost: bool = True,
    progress: bool = False,
) -> list[GateRow]:
    """The accuracy table; one reference run per (level, scenario). ``progress``: a
    stderr line as each (level, scenario) starts (the whole gate takes seconds)."""
    rows = []
    stages = Stages("accuracy", len(levels) * len(scenarios), progress)
    for level in levels:
        for scenario in scenarios:
            stages.start(f"{level} {scenario}")
            ref = simulate(level, "rk4", REFERENCE_SUBSTEP, scenario)
            for integ in integrators:
                for dt in substeps:
                    e_ay, e_r = relative_errors(simulate(level, integ, dt, scenario), ref)
                    cost = cost_per_second(level, integ, dt) if with_cost else math.nan
                    rows.append(GateRow(level, scenario, integ, dt, e_ay, e_r, cost))
    stages.done()
    return rows


def recommend(rows: Sequence[GateRow], substep: float = 5e-4) -> str | None:
    """The cheapest integrator passing every case at ``substep``, or None."""
    by_integ: dict[str, list[GateRow]] = {}
    for row in rows:
        if row.substep == substep:
            by_integ.setdefault(row.integrator, []).append(row)
    passing = [(sum(r.cost_us for r in rs) / len(rs), name)
               for name, rs in by_integ.items() if all(r.passes for r in rs)]
    return min(passing)[1] if passing else None


def format_table(rows: Sequence[GateRow]) -> str:
    lines = ["| level | scenario | integrator | substep [ms] | err_ay [%] | err_r [%] "
             "| cost [us per sim s] | gate |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r.level} | {r.scenario} | {r.integrator} | {r.substep * 1e3:g} "
            f"| {100 * r.err_ay:.4f} | {100 * r.err_r:.4f} | {r.cost_us:.0f} "
            f"| {'pass' if r.passes else 'FAIL'} |"
        )
    return "\n".join(lines)


def low_speed_errors(integrator: str, substep: float, level: str = "L2") -> tuple[float, float]:
    """Launch from rest at full throttle with 0.2 rad steer, coast, brake to a stop.

    Not part of the gate (which runs at 20 m/s): near standstill the slip-speed floor
    makes the wheel-spin dynamics stiff (time constant ~0.5 ms), so this shows where an
    integrator stops resolving them. Returns (max vx error / max vx, max wheel-spin error
    [rad/s]) against the RK4 reference.
    """
    def run(integ: str, dt: float) -> np.ndarray:
        session = make_session(level=level, vehicle=load_vehicle(), substep_dt=dt,
                               longitudinal="pedal", actuator=None, integrator=integ)
        session.reset(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        state, out = np.zeros(STATE_SIZE), np.empty((400, STATE_SIZE))
        for k in range(400):
            t = k * SAMPLE_DT
            pedal = 1.0 if t < 1.5 else (-0.5 if t >= 2.0 else 0.0)
            session.command_now(0.2 if t < 3.0 else 0.0, pedal)
            session.advance(nearest_ticks(SAMPLE_DT, dt)[0])
            session.get_state(state)
            out[k] = state
        return out

    ref, x = run("rk4", REFERENCE_SUBSTEP), run(integrator, substep)
    err_v = float(np.max(np.abs(x[:, 3] - ref[:, 3])) / np.max(np.abs(ref[:, 3])))
    return err_v, float(np.max(np.abs(x[:, 6:10] - ref[:, 6:10])))


# Training-grade configurations (integrator, substep [s], substeps per integration step),
# against the reference configuration (heun on every 0.5 ms substep); the last is the
# default (the 0.5 ms grid, steps of up to 10 ms), etd2 the default before it.
CANDIDATES = (("semi_implicit", 2.5e-3, 1), ("semi_implicit", 5e-3, 1),
              ("semi_implicit", 5e-4, 10), ("etd2", 5e-4, 10), ("etd3", 5e-4, 20))
REFERENCE_CONFIG = ("heun", 5e-4, 1)
LOW_SPEED_CASES = ("standstill", "launch", "brake_to_stop", "turn_2mps")


def low_speed_checks(integrator: str, substep: float, level: str = "L2", step_ticks: int = 1
                     ) -> dict[str, dict[str, float]]:
    """The low-speed cases of docs/PHYSICS.md, 4 s each sampled every integration step
    (``step_ticks`` substeps): a parked
    car (no command), a full-throttle launch from rest, full braking from 10 m/s to a
    stop, a 2 m/s turn (0.4 rad). Per case: ``flips``, samples where a driven wheel's slip
    changes sign and changes back at the next (a stiff mode the integrator does not
    resolve alternates; a single sign change after the 0.4 rad steer step is a transient);
    ``creep``, the largest |vx| once stopped (parked, or after the stop) [m/s];
    ``vx_end`` [m/s]."""
    out = {}
    vehicle = load_vehicle()
    front = vehicle.front_drive_share >= 0.5  # a driven wheel's slot: the outer one in the turn
    w = (1 if front else 3) if level == "L2" else (0 if front else 1)
    for case in LOW_SPEED_CASES:
        session = make_session(level=level, vehicle=vehicle, substep_dt=substep,
                               longitudinal="pedal", actuator=None, integrator=integrator,
                               step_ticks=step_ticks)
        v0 = {"brake_to_stop": 10.0, "turn_2mps": 2.0}.get(case, 0.0)
        steer, pedal = {"launch": (0.0, 1.0), "brake_to_stop": (0.0, -1.0),
                        "turn_2mps": (0.4, 0.05)}.get(case, (0.0, 0.0))
        session.reset(0.0, 0.0, 0.0, v0, 0.0, 0.0)
        session.command_now(steer, pedal)
        n = round(4.0 / (substep * step_ticks))
        vx, kappa = np.empty(n), np.empty(n)
        aux = np.zeros(AUX_SIZE)
        state = np.zeros(STATE_SIZE)
        for k in range(n):
            session.advance(step_ticks)
            session.get_state(state)
            session.get_aux(aux)
            vx[k], kappa[k] = state[3], aux[2 + 5 * w + 3]
        stopped = np.flatnonzero(vx <= 1e-9)
        creep = float(np.max(np.abs(vx[stopped[0]:]))) if case in (
            "standstill", "brake_to_stop") and stopped.size else math.nan
        sg = np.sign(kappa)
        out[case] = {"flips": int(np.sum((sg[1:-1] * sg[:-2] < 0) & (sg[2:] == sg[:-2]))),
                     "creep": creep, "vx_end": float(vx[-1])}
    return out


def config_label(integrator: str, substep: float, step_ticks: int) -> str:
    """E.g. "heun 0.5 ms (reference)", "etd3 0.5 ms, max_step 10 ms (default)"."""
    label = f"{integrator} {substep * 1e3:g} ms"
    if step_ticks > 1:
        label += f", max_step {substep * step_ticks * 1e3:g} ms"
    if (integrator, substep, step_ticks) == REFERENCE_CONFIG:
        label += " (reference)"
    elif integrator == DEFAULT_INTEGRATOR and substep == 5e-4 and \
            step_ticks == default_step_ticks(integrator, substep):
        label += " (default)"
    return label


def _configs() -> list[tuple[str, float, int]]:
    """The table's configurations: the reference and the candidates."""
    return [REFERENCE_CONFIG, *CANDIDATES]


def candidates(levels: Sequence[str] = ("L2", "L1")) -> list[str]:
    """The training-grade configurations against the reference configuration: gate
    errors per case, cost per simulated second and its ratio (measured side by side),
    and the low-speed checks."""
    ref_integ, ref_dt, _ = REFERENCE_CONFIG
    lines = ["| level | configuration | worst err_ay [%] | worst err_r [%] | cost [us per "
             "sim s] | cheaper than heun 0.5 ms | gate |", "|---|---|---|---|---|---|---|"]
    for level in levels:
        refs = {sc: simulate(level, "rk4", REFERENCE_SUBSTEP, sc) for sc in SCENARIOS}
        base = cost_per_second(level, ref_integ, ref_dt)
        for integ, dt, st in _configs():
            errs = [relative_errors(simulate(level, integ, dt, sc, st), refs[sc])
                    for sc in SCENARIOS]
            e_ay, e_r = max(e[0] for e in errs), max(e[1] for e in errs)
            cost = base if (integ, dt, st) == REFERENCE_CONFIG else \
                cost_per_second(level, integ, dt, step_ticks=st)
            ok = e_ay <= GATE and e_r <= GATE
            lines.append(f"| {level} | {config_label(integ, dt, st)} | {100 * e_ay:.3f} | "
                         f"{100 * e_r:.3f} | {cost:.0f} | {base / cost:.1f}x | "
                         f"{'pass' if ok else 'FAIL'} |")
    lines += ["", "Low-speed cases (4 s, every integration step): slip sign flips, creep "
              "once stopped [m/s], vx at the end [m/s]",
              "| level | configuration | " + " | ".join(LOW_SPEED_CASES) + " |",
              "|---|---|" + "---|" * len(LOW_SPEED_CASES)]
    for level in levels:
        for integ, dt, st in _configs():
            checks = low_speed_checks(integ, dt, level, st)
            cells = []
            for case in LOW_SPEED_CASES:
                c = checks[case]
                creep = "" if math.isnan(c["creep"]) else f", creep {c['creep']:.1e}"
                cells.append(f"flips {c['flips']}{creep}, vx {c['vx_end']:.3f}")
            lines.append(f"| {level} | {config_label(integ, dt, st)} | " + " | ".join(cells)
                         + " |")
    return lines


def run_accuracy() -> list[GateRow]:
    """The ``vdsim-gym accuracy`` command: prints the accuracy table (stderr: a line per
    case as it starts), the low-speed errors and the training-grade configurations'
    table; returns the gate's rows."""
    rows = run_gate(progress=True)
    print(f"Accuracy gate: ay and r vs RK4 at {REFERENCE_SUBSTEP * 1e3:g} ms, "
          f"{SPEED:g} m/s, sampled every {SAMPLE_DT * 1e3:g} ms; gate {100 * GATE:g} %")
    print(format_table(rows))
    print(f"Cheapest integrator passing every case at 0.5 ms: {recommend(rows)}")
    print("Explicit integrators: heun at 0.5 ms is the reference configuration (also "
          "monotone in the stiff low-speed wheel mode, where euler alternates sign; "
          "docs/PHYSICS.md)")
    print("\nLow-speed launch and brake (L2, not gated): vx error, wheel-spin error")
    print("| integrator | substep [ms] | err_vx [%] | err_omega [rad/s] |\n|---|---|---|---|")
    for integ in INTEGRATORS:
        for dt in SUBSTEPS:
            e_v, e_w = low_speed_errors(integ, dt)
            print(f"| {integ} | {dt * 1e3:g} | {100 * e_v:.4f} | {e_w:.2g} |")
    print("\nTraining-grade configurations (integrator='etd3', the default: third order, "
          "the stiff wheel spins, lags and filters exponential; 'etd2' the same at second "
          "order; 'semi_implicit': first order, the wheel spins linearly implicit) against "
          "the reference configuration")
    for line in candidates():
        print(line)
    return rows


def _physics_label(physics: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in physics.items()) or "the default physics"


def run_closed_loop_gate(physics: Mapping[str, Any] | None = None, *,
                         cases: Sequence[str] | None = None,
                         levels: Sequence[str] = ("L2", "L1")) -> list[ClosedLoopRow]:
    """``vdsim-gym accuracy --closed-loop``: the closed-loop gate
    (``closed_loop_gate.run_gate``) for ``physics`` (gym.make keywords; None: the default
    physics) on ``cases`` (None: all) and ``levels``; prints its table and summary (stderr:
    a line per case as it starts) and returns its rows (the command exits 1 unless every
    row passes)."""
    from vdsim_gym.eval.closed_loop_gate import REFERENCE, format_table, run_gate, summary

    physics = dict(physics or {})
    rows = run_gate(physics, cases=cases, levels=levels,
                    progress=lambda s: print(f"closed-loop gate: {s}", file=sys.stderr,
                                             flush=True))
    ref = ", ".join(f"{k}={v!r}" for k, v in REFERENCE.items())
    print(f"Closed-loop gate: {_physics_label(physics)} against {ref} (the dyno: its bench "
          "at 0.1 ms substeps); each env's metric under its baseline, mode B fixed delays, "
          "seed 0; gate 1 %")
    print(format_table(rows))
    print(summary(rows))
    return rows


def run_noisy_gate(physics: Mapping[str, Any] | None = None, *,
                   cases: Sequence[str] | None = None, levels: Sequence[str] = ("L2", "L1"),
                   seeds: Sequence[int] | None = None) -> list[NoisyRow]:
    """``vdsim-gym accuracy --noisy``: the noisy-command gate (``noisy_gate.run_gate``) for
    ``physics`` on ``cases``, ``levels`` and ``seeds`` (None: ``noisy_gate.SEEDS``); prints
    its table and summary (stderr: a line per replay as it starts) and returns its rows."""
    from vdsim_gym.eval.noisy_gate import REFERENCE, SEEDS, format_table, run_gate, summary

    physics = dict(physics or {})
    seeds = SEEDS if seeds is None else tuple(seeds)
    rows = run_gate(physics, cases=cases, levels=levels, seeds=seeds,
                    progress=lambda s: print(f"noisy-command gate: {s}", file=sys.stderr,
                                             flush=True))
    ref = ", ".join(f"{k}={v!r}" for k, v in REFERENCE.items())
    print(f"Noisy-command gate: {_physics_label(physics)} against {ref}; recorded command "
          f"streams replayed open loop, seeds {', '.join(map(str, seeds))}; each signal's "
          "metric over the run; gate 1 %")
    print(format_table(rows))
    print(summary(rows))
    return rows


if __name__ == "__main__":
    run_accuracy()
