"""vdsim-gym bench's physics rows and ratios: the cases it names, run side by side, and
its ratio statistics (no timing threshold: the machine is shared)."""

from __future__ import annotations

from vdsim_gym.bench.throughput import Ratio, core_and_env_rows


def test_ratio_statistics_are_per_block_ratios():
    r = Ratio.of("x", [2.0, 3.0, 8.0], [1.0, 2.0, 2.0])  # ratios 2, 1.5, 4
    assert (r.lo, r.median, r.hi) == (1.5, 2.0, 4.0)
    assert r.line() == "x = 2.00 (min 1.50, max 4.00) x the default's cost"


def test_rows_cover_the_default_the_previous_default_and_the_reference():
    rows, ratios = core_and_env_rows("VDSim-DLC-v0", "L1", repeats=2)
    assert len(rows) == 11
    assert "reference (heun 0.5 ms)" in rows[4].name and "etd2" in rows[6].name
    assert "every delay" in rows[8].name
    assert "noisy actions" in rows[9].name and "uniform random" in rows[10].name
    assert all(r.per_call_us > 0 and r.calls_per_s > 0 for r in rows)
    assert [r.name for r in ratios] == [
        "L1: env step, etd2 (default before)",
        "L1: C++ core step, etd2 (default before)",
        "L1: env step, reference (heun 0.5 ms)", "L1: C++ core step, reference (heun 0.5 ms)",
        "L1: env step with every delay (sensor 25 ms, compute 10 ms, network 5 % loss, "
        "steer 10 ms) / without",
        "L1: env step under noisy actions (baseline + N(0, 0.3)) / smooth",
        "L1: env step under uniform random actions / smooth"]
    for r in ratios:
        assert 0 < r.lo <= r.median <= r.hi


def test_unphysical_figures_and_a_busy_machine_are_flagged(monkeypatch):
    from vdsim_gym.bench import throughput as bench

    def row(us):
        return bench.Row("r", us, 1e6 / us, None)

    fine = bench.unphysical("L2", row(7.0), row(6.0), row(4.7), row(40.0), row(38.0))
    assert fine == []
    odd = bench.unphysical("L1", row(5.0), row(7.0), row(4.7), row(4.0), row(4.5))
    assert any("env step (5.00 us) cheaper than the work it contains" in w for w in odd)
    assert any("reference core step is cheaper" in w for w in odd)
    monkeypatch.setattr(bench.os, "getloadavg", lambda: (9.5, 9.0, 8.0))
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 2)
    assert "load average 9.5 above the 2 cores" in bench.load_warning()
    monkeypatch.setattr(bench.os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert bench.load_warning() is None
