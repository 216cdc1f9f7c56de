"""The acceleration cascade's step response (docs/PHYSICS.md, "Acceleration command").

    python docs/scripts/accel_step_response.py [--out docs/img]

From a coasting start (command 0 held, then the target at t = 0.1 s), for targets +2, 0
and -3 m/s^2 at 5, 15 and 30 m/s, L1 and L2, every substep (control_period = substep_dt)
in the reference configuration (integrator="heun": the cascade at 2 kHz):
rise time (10 % -> 90 % of the change in ax), overshoot (% of the change), steady error
(mean |ax - target| over t in [1.0, 1.5] s while the car moves), and the peak |ax - target|
after 0.3 s. Prints a Markdown table and writes accel_step.png.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from vdsim_gym import Plant

DT = 5e-4
T_STEP, T_END = 0.1, 1.5


def response(level: str, v0: float, target: float) -> tuple[np.ndarray, np.ndarray]:
    plant = Plant(level=level, longitudinal="accel", control_period=DT, integrator="heun")
    plant.reset({"vx": v0})
    n = round(T_END / DT)
    t = np.arange(1, n + 1) * DT
    ax, vx = np.empty(n), np.empty(n)
    for k in range(n):
        o = plant.step((0.0, target if t[k] > T_STEP + 1e-12 else 0.0))
        ax[k], vx[k] = o["ax"], o["vx"]
    return t, np.where(vx > 0.5, ax, np.nan)


def metrics(t: np.ndarray, ax: np.ndarray, target: float) -> dict[str, float]:
    a0 = ax[round(T_STEP / DT) - 1]
    change = target - a0
    after = t > T_STEP
    late = (t >= 1.0) & np.isfinite(ax)
    out = {"steady_error": float(np.mean(np.abs(ax[late] - target))) if late.any() else math.nan,
           "peak_after_0.3s": float(np.nanmax(np.abs(ax[(t > T_STEP + 0.3)] - target)))}
    if abs(change) < 0.05:
        out.update(rise_ms=math.nan, overshoot_pct=math.nan)
        return out
    frac = (ax - a0) / change
    t10 = t[after & (frac >= 0.1)][0]
    t90 = t[after & (frac >= 0.9)][0]
    out["rise_ms"] = 1e3 * (t90 - t10)
    out["overshoot_pct"] = max(0.0, 100.0 * (float(np.nanmax(frac[after])) - 1.0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="docs/img")
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    print("| level | v0 [m/s] | target [m/s^2] | rise 10-90 % [ms] | overshoot [%] | "
          "steady error [m/s^2] | peak error after 0.3 s [m/s^2] |")
    print("|---|---|---|---|---|---|---|")
    for j, level in enumerate(("L1", "L2")):
        for i, v0 in enumerate((5.0, 15.0, 30.0)):
            for target in (2.0, 0.0, -3.0):
                t, ax = response(level, v0, target)
                m = metrics(t, ax, target)
                print(f"| {level} | {v0:g} | {target:+g} | {m['rise_ms']:.1f} | "
                      f"{m['overshoot_pct']:.1f} | {m['steady_error']:.4f} | "
                      f"{m['peak_after_0.3s']:.4f} |".replace("nan", "-"))
                axes[j].plot(t, ax, color=f"C{i}", lw=1,
                             label=f"{v0:g} m/s" if target == 2.0 else None)
        axes[j].set_title(f"{level}: targets +2, 0, -3 m/s^2 at t = {T_STEP} s", fontsize=9)
        axes[j].set_xlabel("t [s]")
        axes[j].grid(alpha=0.3)
    axes[0].set_ylabel("ax [m/s^2] (while vx > 0.5 m/s)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "accel_step.png", dpi=110)
    print(f"\nwrote {out / 'accel_step.png'}")


if __name__ == "__main__":
    main()
