"""Writes envs/data/acc_lead.csv, the sample sensor file of `vdsim-gym acc` (docs/ACC.md).

120 s at 0.1 s: no lead for 20 s (cruise up to the set speed); a lead appears 60 m ahead
at 22 m/s, slows smoothly to 15 m/s (45-55 s), brakes hard at 5 m/s^2 to 5 m/s at 70 s,
pulls away to 20 m/s (72-82 s) and leaves at 100 s (cruise again). `distance` is what a
recording car keeping 10 m + 1.5 s behind the lead would have measured; the workflow uses
it only where the lead appears and integrates the rest.

    python docs/scripts/make_acc_lead_csv.py
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "envs" / "data" / "acc_lead.csv"
DT, DURATION = 0.1, 120.0


def lead_speed(t: float) -> float | None:
    if t < 20.0 or t >= 100.0:
        return None
    if t < 45.0:
        return 22.0
    if t < 55.0:  # half-cosine from 22 to 15 m/s
        return 15.0 + 3.5 * (1.0 + math.cos(math.pi * (t - 45.0) / 10.0))
    if t < 70.0:
        return 15.0
    if t < 72.0:
        return 15.0 - 5.0 * (t - 70.0)
    if t < 82.0:
        return 5.0 + 1.5 * (t - 72.0)
    return 20.0


def main() -> None:
    rows = round(DURATION / DT) + 1
    with OUT.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("time", "lead_speed", "distance"))
        for k in range(rows):
            t = round(k * DT, 9)
            v = lead_speed(t)
            if v is None:
                w.writerow((format(t, "g"), "", ""))
            else:
                d = 60.0 if t == 20.0 else 10.0 + 1.5 * v
                w.writerow((format(t, "g"), format(round(v, 6), "g"), format(round(d, 6), "g")))
    print(f"wrote {OUT} ({rows} rows)")


if __name__ == "__main__":
    main()
