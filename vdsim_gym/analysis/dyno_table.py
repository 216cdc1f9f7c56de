"""The robot driver on the chassis dyno, measured (``vdsim-gym dyno-table``:
``run_dyno_table``): the reference delay table (both driver modes, beside the reference's
figures, ``dyno.table``) and the loop margins (``margins``) checked against the time
domain; with ``out``, a CSV and plots (docs/DYNO.md)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vdsim_gym import _table
from vdsim_gym._files import atomic_open
from vdsim_gym.analysis.margins import LoopModel, loop_margins, time_domain_delay_margin
from vdsim_gym.dyno.table import REFERENCE, TableRow, delay_table


@dataclass(frozen=True)
class _Printed:
    mode: str
    delay: str
    peak: str
    minimum: str
    ends: str
    reference: str
    settled: str


@dataclass(frozen=True)
class MarginRow:
    loop: str
    dt_s: float
    crossover_rad_s: float
    phase_margin_deg: float
    delay_margin_s: float
    time_domain_s: float  # smallest simulated delay (whole steps) that does not settle


# Loops reported: (label, LoopModel mode, driver/gain overrides: keyword arguments).
LOOPS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("speed mode", "speed", {}),
    ("accel mode (a_ref given)", "accel", {}),
    ("accel mode, a_ref = (v_ref - v)/0.1", "accel_from_speed", {}),
    ("  same, gains kp_a 0.0425 ki_a 0.025", "accel_from_speed",
     {"kp_accel": 0.0425, "ki_accel": 0.025}))


def margin_rows(dts: Sequence[float] = (0.05, 0.01)) -> list[MarginRow]:
    rows = []
    for dt in dts:
        for label, mode, gains in LOOPS:
            m = loop_margins(LoopModel.for_bench(mode, dt=dt, **gains))
            td = time_domain_delay_margin(mode, dt=dt, **gains)
            rows.append(MarginRow(label, dt, m.crossover_rad_s, m.phase_margin_deg,
                                  m.delay_margin_s, td))
    return rows


def delay_label(delay_s: float) -> str:
    """"0.3 s" (one decimal, as the reference), to more digits when it has them ("0.35 s")."""
    return f"{delay_s:.1f} s" if abs(delay_s - round(delay_s, 1)) < 1e-9 else f"{delay_s:.3g} s"


def _printed(r: TableRow) -> _Printed:
    ref = r.reference
    return _Printed(r.mode, delay_label(r.delay_s), f"{r.peak:.2f}", f"{r.minimum:.2f}",
                    f"{r.end_1:.3f} / {r.end_2:.3f}",
                    "-" if ref is None else
                    f"{ref[0]:.2f}  {ref[1]:.2f}  {ref[2]:.3f} / {ref[3]:.3f}",
                    "yes" if r.settled else "no")


TABLE_COLUMNS = [("mode", "mode", "<6", ""), ("delay", "delay", ">6", ""),
                 ("peak [m/s]", "peak", ">10", ""), ("min [m/s]", "minimum", ">9", ""),
                 ("30 s after each step", "ends", ">20", ""),
                 ("reference (peak, min, ends)", "reference", ">28", ""),
                 ("settles", "settled", ">7", "")]
MARGIN_COLUMNS = [("loop", "loop", "<38", ""), ("dt [s]", "dt_s", ">6", ".2f"),
                  ("crossover [rad/s]", "crossover_rad_s", ">17", ".2f"),
                  ("phase margin [deg]", "phase_margin_deg", ">18", ".1f"),
                  ("delay margin [s]", "delay_margin_s", ">16", ".3f"),
                  ("time domain [s]", "time_domain_s", ">15", ".2f")]


def format_delay_table(rows: Sequence[TableRow]) -> str:
    """The delay table as text: one line per (mode, delay), beside the reference's
    figures (speed mode)."""
    return _table.format_table([_printed(r) for r in rows], TABLE_COLUMNS)


def format_margins(margins: Sequence[MarginRow]) -> str:
    """The loop margins (``margin_rows()``) as text."""
    return _table.format_table(margins, MARGIN_COLUMNS)


def run_dyno_table(out: str | Path | None = None, make_plot: bool = True) -> list[str]:
    """The lines to print: the delay table and the loop margins; with ``out`` also
    dyno_table.csv and (``make_plot``) dyno_table.png and dyno_margins.png there."""
    if out is not None and make_plot:
        import matplotlib  # noqa: F401  (a missing extra is reported before any work)
    rows = delay_table()
    margins = margin_rows()
    lines = ["Delay table: dt 0.05 s, envelope 1.8 m/s^2, 0 -> 15 -> 5 m/s, 30 s each "
             "(accel mode: a_ref = (v_ref - v) / 0.1 s)",
             format_delay_table(rows),
             "",
             "Loop margins (linearized, numpy) and the smallest simulated delay that does "
             "not settle:",
             format_margins(margins)]
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        _write_csv(folder / "dyno_table.csv", rows)
        lines.append(f"\nwrote {folder / 'dyno_table.csv'}")
        if make_plot:
            plot_table(rows, folder / "dyno_table.png")
            plot_margins(folder / "dyno_margins.png")
            lines.append(f"wrote {folder / 'dyno_table.png'} and "
                         f"{folder / 'dyno_margins.png'}")
    return lines


def _write_csv(path: Path, rows: list[TableRow]) -> None:
    with atomic_open(path) as fh:
        w = csv.writer(fh)
        w.writerow(("mode", "delay_s", "peak", "min", "end_phase1", "end_phase2", "settled",
                    "ref_peak", "ref_min", "ref_end_phase1", "ref_end_phase2"))
        for r in rows:
            ref = REFERENCE.get(r.delay_s) if r.mode == "speed" else None
            w.writerow((r.mode, r.delay_s, f"{r.peak:.4f}", f"{r.minimum:.4f}",
                        f"{r.end_1:.4f}", f"{r.end_2:.4f}", r.settled,
                        *(ref if ref else ("",) * 4)))


def plot_table(rows: list[TableRow], png: Path) -> None:
    from vdsim_gym._plotting import figure, save_figure

    modes = sorted({r.mode for r in rows}, key=["speed", "accel"].index)
    fig = figure(figsize=(9, 3.4 * len(modes)))
    axes = fig.subplots(len(modes), 1, sharex=True, squeeze=False)
    for ax, mode in zip(axes[:, 0], modes, strict=True):
        for r in (r for r in rows if r.mode == mode):
            ax.plot(r.t, r.v, lw=1.2, label=f"delay {delay_label(r.delay_s)}")
        ax.step([0, 30, 60], [15, 5, 5], where="post", color="k", ls=":", lw=1,
                label="v_ref")
        ax.set_ylabel("speed [m/s]")
        ax.set_title(f"robot driver, {mode} mode, on the bench")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time [s]")
    fig.tight_layout()
    save_figure(fig, png, dpi=110)


def plot_margins(png: Path, dt: float = 0.05) -> None:
    """Bode plot of each loop with its crossover and phase margin."""
    import numpy as np

    from vdsim_gym._plotting import figure, save_figure

    w = np.logspace(-1, np.log10(np.pi / dt), 800)
    fig = figure(figsize=(9, 6.5))
    am, ap = fig.subplots(2, 1, sharex=True)
    for label, mode, gains in LOOPS:
        model = LoopModel.for_bench(mode, dt=dt, **gains)
        resp = model.response(w)
        m = loop_margins(model)
        line, = am.semilogx(w, 20 * np.log10(np.abs(resp)), label=label.strip())
        ap.semilogx(w, np.degrees(np.unwrap(np.angle(resp))), color=line.get_color())
        # The margins go in the phase panel's legend (by the crossover dot's colour), not
        # beside the dots: the four crossovers lie within a factor 2.5 in frequency and
        # 60 deg in phase, so labels next to them overlapped each other and the curves.
        ap.plot([m.crossover_rad_s], [m.phase_margin_deg - 180.0], "o",
                color=line.get_color(),
                label=f"PM {m.phase_margin_deg:.0f} deg, DM {m.delay_margin_s:.3f} s")
    am.axhline(0, color="k", lw=0.8)
    ap.axhline(-180, color="k", lw=0.8)
    am.set_ylabel("|L| [dB]")
    ap.set_ylabel("angle L [deg]")
    ap.set_ylim(-360, 0)
    ap.set_xlabel("angular frequency [rad/s]")
    am.set_title(f"robot driver + bench loops, dt {dt:g} s (dots: crossover)")
    am.legend(fontsize=8)
    ap.legend(fontsize=8, loc="lower left",
              title="at crossover: phase margin (PM), delay margin (DM)", title_fontsize=8,
              alignment="left")
    for ax in (am, ap):
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    save_figure(fig, png, dpi=110)


__all__ = ["MarginRow", "format_delay_table", "format_margins", "margin_rows", "plot_margins",
           "plot_table", "run_dyno_table"]
