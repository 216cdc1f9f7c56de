"""`vdsim-gym handling`: the measured handling table, CSV and plot."""

from __future__ import annotations

import csv

import pytest

from vdsim_gym.analysis.handling import deg_per_g, steady_state_ramp, understeer_gradient
from vdsim_gym.cli import main


def test_handling_writes_the_table_csv_and_plot(tmp_path, capsys):
    assert main(["handling", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "K measured [deg/g]" in out and "understeer" in out
    with (tmp_path / "handling.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["level"] for r in rows] == ["L2", "L1"]
    k0 = deg_per_g(understeer_gradient("generic_sedan"))
    ramp = steady_state_ramp("generic_sedan", "L2")
    for r in rows:
        assert float(r["k_parameters"]) == pytest.approx(k0, rel=1e-12)
        assert float(r["limit_g"]) > 0.7 and r["limit"] == "understeer"
    # the L2 row is the library's own measurement
    assert float(rows[0]["k_measured"]) == pytest.approx(deg_per_g(ramp.understeer_gradient),
                                                         rel=1e-12)
    png = (tmp_path / "handling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_handling_of_the_earlier_sedan_ends_in_a_spin(capsys):
    assert main(["handling", "--vehicle", "generic_sedan_v0", "--levels", "L2"]) == 0
    out = capsys.readouterr().out
    assert "spin" in out and "1.03" in out
