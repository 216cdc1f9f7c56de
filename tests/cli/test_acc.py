"""``vdsim-gym acc`` and ``vdsim-gym acc-metrics`` end to end: the packaged example in,
the reference CSV, a plot and the metrics JSON out (docs/ACC.md)."""

from __future__ import annotations

import json

from vdsim_gym.cli import main
from vdsim_gym.eval.acc_metrics import read_results, segmented_metrics
from vdsim_gym.eval.acc_workflow import COLUMNS


def test_acc_then_metrics_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "sub" / "results.csv"  # the folder is made
    assert main(["acc", "--out", str(out), "--plant", "L1", "--plot"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}: 1201 rows (120 s, plant L1)" in printed
    assert out.with_suffix(".png").stat().st_size > 10_000
    assert out.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert main(["acc-metrics", "--csv", str(out), "--set-speed", "30", "--dt", "0.1",
                 "--follow-stable-window", "8"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics == json.loads(json.dumps(segmented_metrics(
        read_results(out), set_speed=30.0, dt=0.1, follow_stable_window=8.0)))
    assert metrics["validation"]["passed"]
    assert set(metrics) >= {"rise_time_90", "overshoot_pct_cruise", "speed_ss_error_cruise",
                            "distance_ss_error_follow", "min_distance", "validation"}
