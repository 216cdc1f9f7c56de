"""What a physics change moves in docs/RESULTS.md's main comparisons.

A change of the default physics (docs/PHYSICS.md) re-runs the published comparisons on
the physics before and after it, with the same seeds, and reads what moved:

- DLC: dlc_ppo, dlc_ppo_latency and Stanley at 0-40 ms (64 seeds);
- ACC: acc_ppo, the PID and IDM over six scenarios at 0-200 ms, with a 0.1 s control
  period (16 seeds).

``run`` sweeps them on the installed vdsim_gym (so run it once in an install of the commit
before the change and once after, or once with ``--env-kwargs`` for the reference
configuration); ``compare`` reads two such folders (and optionally a reference) and prints,
per metric, the summary cells whose printed mean (4 decimals) moved, the largest relative
change and, with ``--ref``, each side's largest distance from the reference.

    python tools/physics_effect.py run OUT [--env-kwargs JSON] [--seeds-dlc 64]
        [--seeds-acc 16]
    python tools/physics_effect.py compare BEFORE AFTER [--ref REF]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

ACC_SCENARIOS = ["cruise", "follow", "cut_in", "hard_brake", "stop_and_go", "lead_leaves"]
# name: env, controllers (shipped runs by name, baselines by spec), delays, base kwargs,
# scenarios, the metrics the tables print
COMPARISONS: dict[str, tuple[str, list[str], str, dict[str, Any], list[dict[str, Any]] | None,
                             list[str]]] = {
    "dlc": ("VDSim-DLC-v0", ["dlc_ppo", "dlc_ppo_latency", "stanley"], "0,10,20,40ms", {},
            None, ["rms_e_y", "max_abs_e_y", "cone_hits", "pass_speed", "episode_return"]),
    "acc": ("VDSim-ACC-v0", ["acc_ppo", "acc_pid", "idm"], "0,100,200ms",
            {"control_period": 0.1}, [{"scenario": s} for s in ACC_SCENARIOS],
            ["min_gap", "rms_jerk", "rms_time_gap_error", "collision", "episode_return"]),
}


def run(out: Path, env_kwargs: dict[str, Any], seeds: dict[str, int],
        names: tuple[str, ...] = tuple(COMPARISONS)) -> None:
    """Sweeps each comparison on the installed physics into ``out/<name>``."""
    from vdsim_gym.eval.sweeps.compare import run_sweep
    from vdsim_gym.policies import shipped_model, shipped_models

    for name in names:
        env_id, controllers, delays, base, scenarios, _ = COMPARISONS[name]
        specs = [str(shipped_model(c)) if c in shipped_models() else c for c in controllers]
        run_sweep(specs, env_id, delays, seeds=seeds[name], out=out / name,
                  env_kwargs={**base, **env_kwargs}, scenarios=scenarios, make_plot=False,
                  progress=False, echo=lambda *a, **k: None)


def _summary(folder: Path) -> list[dict[str, str]]:
    path = folder / "sweep_summary.csv"
    if not path.is_file():
        raise SystemExit(f"{path}: no sweep summary; run `physics_effect.py run` first")
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return math.nan


def _rel(a: float, b: float) -> float:
    """|a - b| / |b| (0 when both are 0 or b is not finite)."""
    if not math.isfinite(b) or b == 0.0:
        return 0.0
    return abs(a - b) / abs(b)


def compare(before: Path, after: Path, ref: Path | None = None) -> list[str]:
    """The comparison's lines (see the module docstring)."""
    lines = []
    for name, (*_, metrics) in COMPARISONS.items():
        if not (before / name).is_dir():
            continue
        b, a = _summary(before / name), _summary(after / name)
        r = _summary(ref / name) if ref is not None else None
        if len(a) != len(b) or (r is not None and len(r) != len(b)):
            raise SystemExit(f"{name}: the folders hold different sweeps ({len(b)} and "
                             f"{len(a)} rows); run them with the same options")
        lines.append(f"{name.upper()} ({len(b)} summary rows)")
        for metric in metrics:
            col = f"{metric}_mean"
            moved, worst = 0, (0.0, "")
            far_b = far_a = 0.0
            for i, (rb, ra) in enumerate(zip(b, a, strict=True)):
                x, y = _float(rb[col]), _float(ra[col])
                if f"{x:.4f}" != f"{y:.4f}":
                    moved += 1
                change = _rel(y, x)
                if change > worst[0]:
                    worst = (change, f"{rb['controller'].rsplit('/', 1)[-1]} {rb['scenario']} "
                                     f"{rb['latency']}: {x:.4f} -> {y:.4f}")
                if r is not None:
                    z = _float(r[i][col])
                    far_b, far_a = max(far_b, _rel(x, z)), max(far_a, _rel(y, z))
            line = (f"  {metric}: {moved} cells moved at 4 dp; largest change "
                    f"{100 * worst[0]:.3f} %{' (' + worst[1] + ')' if worst[1] else ''}")
            if r is not None:
                line += (f"; from the reference: before {100 * far_b:.3f} %, after "
                         f"{100 * far_a:.3f} %")
            lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="sweep the comparisons on the installed physics")
    r.add_argument("out", type=Path)
    r.add_argument("--env-kwargs", default="{}", help="JSON, e.g. the reference configuration "
                   "'{\"integrator\": \"heun\", \"max_step\": null}'")
    r.add_argument("--seeds-dlc", type=int, default=64)
    r.add_argument("--seeds-acc", type=int, default=16)
    r.add_argument("--only", choices=tuple(COMPARISONS), default=None)
    c = sub.add_parser("compare", help="what moved between two run folders")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--ref", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        try:
            kwargs = json.loads(args.env_kwargs)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"--env-kwargs: not JSON ({exc})") from None
        names = (args.only,) if args.only else tuple(COMPARISONS)
        run(args.out, kwargs, {"dlc": args.seeds_dlc, "acc": args.seeds_acc}, names)
        print(f"wrote {', '.join(str(args.out / n) for n in names)}")
        return 0
    print("\n".join(compare(args.before, args.after, args.ref)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
