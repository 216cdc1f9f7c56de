"""The reference delay table and the loop margins (docs/DYNO.md): the reference's figures
where it gives them, and each linear margin against the simulated time domain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym.analysis.margins import (
    LoopModel,
    loop_margins,
    settles,
    time_domain_delay_margin,
)
from vdsim_gym.cli import main
from vdsim_gym.dyno.table import REFERENCE, delay_table


@pytest.fixture(scope="module")
def table():
    return {(r.mode, r.delay_s): r for r in delay_table()}


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_settled_rows_match_the_reference_within_0_02(table, delay):
    r = table[("speed", delay)]
    got = (r.peak, r.minimum, r.end_1, r.end_2)
    for g, want in zip(got, REFERENCE[delay], strict=True):
        assert g == pytest.approx(want, abs=0.02)
    assert r.settled


@pytest.mark.parametrize("delay", [0.5, 0.8])
def test_long_delays_do_not_settle(table, delay):
    r = table[("speed", delay)]
    assert not r.settled
    assert abs(r.end_1 - 15.0) > 0.05 or abs(r.end_2 - 5.0) > 0.05
    # the published limit-cycle figures come out too (integration details identical)
    assert (r.peak, r.minimum) == pytest.approx(REFERENCE[delay][:2], abs=0.02)


def test_accel_rows_settle_without_delay_only(table):
    assert table[("accel", 0.0)].settled
    assert not any(table[("accel", d)].settled for d in (0.3, 0.5, 0.8))


def test_speed_mode_margins_are_the_references():
    m = loop_margins(LoopModel.for_bench("speed", dt=0.05))
    assert m.crossover_rad_s == pytest.approx(3.31, abs=0.02)
    assert m.phase_margin_deg == pytest.approx(67.2, abs=0.3)
    assert m.delay_margin_s == pytest.approx(0.355, abs=0.003)


def test_loop_response_by_hand():
    model = LoopModel(dt=0.05)
    w = 2.0
    s = 1j * w
    wn = 2 * math.pi * 5.0
    want = (0.45 + 0.25 / s) * 7.25 / s * wn**2 / (s**2 + 1.4 * wn * s + wn**2) \
        * np.exp(-s * 0.025)
    assert model.response(np.array([w]))[0] == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="unknown mode 'brake'"):
        LoopModel(mode="brake").response(np.array([1.0]))


@pytest.mark.parametrize("mode, dt", [("speed", 0.05), ("accel", 0.05), ("speed", 0.02),
                                      ("accel", 0.02), ("accel_from_speed", 0.02)])
def test_time_domain_confirms_the_delay_margin_on_the_step_grid(mode, dt):
    """The smallest simulated delay (whole steps) that does not settle lies within a step
    below and two steps past the linear delay margin (the continuous model of the sampled
    loop is good to a fraction of a step; near the margin the loop's slow growth can read
    as decay for one grid point)."""
    dm = loop_margins(LoopModel.for_bench(mode, dt=dt)).delay_margin_s
    td = time_domain_delay_margin(mode, dt=dt)
    assert dm - dt < td < dm + 2 * dt
    assert settles(mode, td - dt, dt=dt) and not settles(mode, td, dt=dt)


def test_accel_from_speed_margin_at_a_fine_step():
    """Its margin (0.07 s) is about one step of 0.05 s, where the continuous model of the
    sampled loop is too coarse; at 0.01 s the two agree."""
    dm = loop_margins(LoopModel.for_bench("accel_from_speed", dt=0.01)).delay_margin_s
    assert dm == pytest.approx(0.07, abs=0.01)
    assert 0.07 < time_domain_delay_margin("accel_from_speed", dt=0.01) <= dm + 0.01 + 1e-9
    # at 0.05 s the sampled loop is about one step more tolerant than the continuous model
    linear = loop_margins(LoopModel.for_bench("accel_from_speed", dt=0.05)).delay_margin_s
    sampled = time_domain_delay_margin("accel_from_speed", dt=0.05)
    assert 0.05 < sampled <= 0.1 + 1e-9 and sampled - linear > 0.04


def test_dyno_table_command(tmp_path, capsys):
    assert main(["dyno-table", "--out", str(tmp_path), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "15.98" in out and "16.53" in out and "delay margin [s]" in out
    text = (tmp_path / "dyno_table.csv").read_text().splitlines()
    assert text[0].startswith("mode,delay_s,peak,min") and len(text) == 9


def test_tables_format_on_their_own():
    """format_delay_table and format_margins (what the command prints, and what
    notebooks/04 shows) work on any subset of rows."""
    from vdsim_gym.analysis.dyno_table import format_delay_table, format_margins, margin_rows

    text = format_delay_table(delay_table(delays=(0.0, 0.3), modes=("speed",)))
    lines = text.splitlines()
    assert len(lines) == 4 and "15.98" in lines[2] and "16.53" in lines[3]
    assert lines[2].rstrip().endswith("yes")
    margins = format_margins(margin_rows(dts=(0.05,))).splitlines()
    assert len(margins) == 2 + 4 and "0.355" in margins[2]
    # a delay between the reference's keeps its digits
    probe = format_delay_table(delay_table(delays=(0.35,), modes=("speed",))).splitlines()
    assert probe[2].split()[:3] == ["speed", "0.35", "s"]


def test_driver_options_reach_every_run(table):
    """delay_table passes RobotDriver options on: the defaults reproduce the table bit for
    bit, and the gain-matched accel gains (docs/DYNO.md, "Loop margins") settle the
    accel-mode procedure at 0.3 s like speed mode."""
    same = delay_table(modes=("speed",), kp=0.45, ki=0.25)
    for row in same:
        assert np.array_equal(row.v, table[("speed", row.delay_s)].v)
    matched = delay_table(delays=(0.0, 0.3, 0.5), modes=("accel",), kp_accel=0.0425,
                          ki_accel=0.025)
    assert [r.settled for r in matched] == [True, True, False]
