"""What a longer ``event_step`` would change in the published comparisons.

The question behind it is whether to make ``event_step`` (docs/PHYSICS.md, "Events") a
default. Today's default takes one substep after a wheel event. The script re-runs
docs/RESULTS.md's two main comparisons under three physics, with the same seeds:

- the default;
- ``event_step=EVENT_STEP`` (default 1.5 ms);
- the reference configuration (Heun on every 0.5 ms substep, ``integrator="heun",
  max_step=None``).

The comparisons are:

- DLC: dlc_ppo, dlc_ppo_latency and Stanley at 0-40 ms;
- ACC: acc_ppo, the PID and IDM over six scenarios at 0-200 ms, with a 0.1 s control
  period.

It prints, for each metric:

- the episodes whose value changed;
- the summary cells that changed at the tables' printed precision (4 decimals);
- each physics' worst relative distance from the reference over the summary cells.

    python tools/event_step_effect.py [--event-step 1.5e-3] [--seeds-dlc 64]
        [--seeds-acc 16] [--out event_step_effect]
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path
from typing import Any

from vdsim_gym.cli.sweep import main as sweep
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies import shipped_model, shipped_models

ACC_SCENARIOS = ["cruise", "follow", "cut_in", "hard_brake", "stop_and_go", "lead_leaves"]
REFERENCE = {"integrator": "heun", "max_step": None}
# env, controllers (shipped runs by name, baselines by spec), delays, base kwargs,
# scenarios, the metrics compared (as the tables print them)
COMPARISONS: dict[str, tuple[str, list[str], str, dict[str, Any], list[dict[str, Any]] | None,
                             list[str]]] = {
    "DLC": ("VDSim-DLC-v0", ["dlc_ppo", "dlc_ppo_latency", "stanley"], "0,10,20,40ms", {},
            None, ["rms_e_y", "max_abs_e_y", "cone_hits", "pass_speed", "episode_return"]),
    "ACC": ("VDSim-ACC-v0", ["acc_ppo", "acc_pid", "idm"], "0,100,200ms",
            {"control_period": 0.1}, [{"scenario": s} for s in ACC_SCENARIOS],
            ["min_gap", "rms_jerk", "rms_time_gap_error", "collision", "episode_return"]),
}
KEY = ("controller", "scenario", "latency")


def _controller(name: str) -> str:
    """A shipped run's folder for a run name; a baseline spec as it is."""
    return str(shipped_model(name)) if name in shipped_models() else name


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _run(name: str, physics: str, env_kwargs: dict[str, Any], seeds: int, out: Path) -> Path:
    env_id, controllers, delays, base, scenarios, _ = COMPARISONS[name]
    folder = out / f"{name.lower()}_{physics}"
    sweep([_controller(c) for c in controllers], env_id, delays, seeds=seeds,
          out=folder, env_kwargs={**base, **env_kwargs}, scenarios=scenarios,
          make_plot=False, progress=False, echo=lambda *a, **k: None)
    return folder


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return math.nan


def compare(name: str, folders: dict[str, Path]) -> list[str]:
    """The report's lines for one comparison (see the module's docstring)."""
    metrics = COMPARISONS[name][5]
    eps = {p: _rows(f / "sweep.csv") for p, f in folders.items()}
    summ = {p: {tuple(r[k] for k in KEY): r for r in _rows(f / "sweep_summary.csv")}
            for p, f in folders.items()}
    lines = [f"{name}: {len(eps['default'])} episodes per physics"]
    lines.append(f"  {'metric':<20}{'episodes changed':>18}{'cells at 4 dp':>15}"
                 f"{'default vs ref':>16}{'event vs ref':>14}")
    for m in metrics:
        changed = sum(
            not (_float(a[m]) == _float(b[m]) or (math.isnan(_float(a[m]))
                                                  and math.isnan(_float(b[m]))))
            for a, b in zip(eps["default"], eps["event"], strict=True))
        printed = worst_d = worst_e = 0.0
        for key, ref_row in summ["reference"].items():
            ref = _float(ref_row[f"{m}_mean"])
            d = _float(summ["default"][key][f"{m}_mean"])
            e = _float(summ["event"][key][f"{m}_mean"])
            printed += f"{d:.4f}" != f"{e:.4f}"
            if ref != 0 and math.isfinite(ref):
                worst_d = max(worst_d, abs(d - ref) / abs(ref))
                worst_e = max(worst_e, abs(e - ref) / abs(ref))
        lines.append(f"  {m:<20}{changed:>18d}{int(printed):>15d}"
                     f"{worst_d * 100:>15.3f}%{worst_e * 100:>13.3f}%")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--event-step", type=float, default=1.5e-3,
                    help="event_step [s] of the candidate physics (default 1.5e-3)")
    ap.add_argument("--seeds-dlc", type=int, default=64)
    ap.add_argument("--seeds-acc", type=int, default=16)
    ap.add_argument("--only", choices=sorted(COMPARISONS), default=None,
                    help="run one comparison only")
    ap.add_argument("--out", default="event_step_effect", help="folder for the sweeps' CSVs")
    args = ap.parse_args(argv)
    out = Path(args.out)
    physics = {"default": {}, "event": {"event_step": args.event_step},
               "reference": dict(REFERENCE)}
    t0 = time.perf_counter()
    for name in ([args.only] if args.only else COMPARISONS):
        seeds = args.seeds_dlc if name == "DLC" else args.seeds_acc
        try:
            folders = {p: _run(name, p, kw, seeds, out) for p, kw in physics.items()}
        except ConfigError as exc:  # a bad --event-step or seed count: one line, no traceback
            print(f"event_step_effect: {exc}", file=sys.stderr)
            return 2
        print("\n".join(compare(name, folders)))
    print(f"event_step {args.event_step * 1e3:g} ms against the default and the reference "
          f"(heun on every 0.5 ms substep); {time.perf_counter() - t0:.0f} s; CSVs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
