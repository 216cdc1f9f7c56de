"""The main job: the baseline drives every DLC preset and the outputs are written."""

from __future__ import annotations

import csv

import pytest

from vdsim_gym.cli import main


def test_demo_writes_table_and_plot_and_baseline_completes(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    with (tmp_path / "demo_results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["preset"] for r in rows] == ["iso3888_1", "iso3888_2", "lane_change_3p5_30"]
    png = (tmp_path / "demo_dlc.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    for r in rows:
        assert r["completed"] == "True", r
        assert float(r["pass_speed_mps"]) == pytest.approx(float(r["speed_mps"]), abs=0.5)
    # The tuned baseline (docs/CONTROLLERS.md) clears every gate and tracks within cm.
    assert all(int(r["cone_hits"]) == 0 for r in rows), rows
    assert all(float(r["ey_rmse_m"]) < 0.15 for r in rows), rows
    assert "e_y RMSE" in capsys.readouterr().out
    from vdsim_gym.traces.trace import read_trace  # every run as a trace (docs/TRACES.md)

    for r in rows:
        tr = read_trace(tmp_path / "traces" / f"{r['preset']}.vdtrace")
        assert not tr.manifest["stopped_early"] and "reference" in tr.overlays


def test_cli_rejects_unknown_command(capsys):
    with pytest.raises(SystemExit):
        main(["fly"])
    assert "invalid choice" in capsys.readouterr().err
