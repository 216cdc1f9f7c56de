"""The package's plots draw on their own Agg figure (``vdsim_gym._plotting.figure``):
they never import pyplot or switch matplotlib's backend, so a Jupyter session's inline
figures keep showing after a package plot (notebooks/; ``matplotlib.use("Agg")`` in a
plot function used to switch the notebook's backend for good)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_module_switches_the_backend_or_imports_pyplot():
    bad = re.compile(r"matplotlib\.use\(|import matplotlib\.pyplot|from matplotlib import pyplot")
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "vdsim_gym").rglob("*.py"))
                 if bad.search(p.read_text(encoding="utf-8"))]
    assert not offenders, f"draw on vdsim_gym._plotting.figure() instead: {offenders}"


def test_plots_leave_the_backend_alone(tmp_path):
    """A session on another backend (as a notebook's inline one) keeps it, and pyplot is
    never imported, through a sweep plot, the learning curves, the dyno table and margins,
    the delay budget and a trace render (PNG and GIF)."""
    code = f"""
import sys
from pathlib import Path

import matplotlib
matplotlib.use("svg")

from vdsim_gym import LatencyModel
from vdsim_gym.analysis import dyno_table
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.dyno.table import delay_table
from vdsim_gym.eval import delay_budget, sweep
from vdsim_gym.eval.sweeps.report import plot
from vdsim_gym.render.trace import render_gif, render_png
from vdsim_gym.training import plot_learning_curves

out = Path(".")
res = sweep(stanley_pi, "VDSim-DLC-v0", latencies=[None, LatencyModel.fixed(0.01)],
            seeds=2, progress=False)
plot({{"stanley": res}}, out / "sweep.png")
plot_learning_curves({str(ROOT / "agents" / "models" / "dlc_ppo")!r}, out / "learning.png")
dyno_table.plot_table(delay_table(delays=(0.0,), modes=("speed",)), out / "table.png")
dyno_table.plot_margins(out / "margins.png")
case = delay_budget.Case("A sync", "sync")
rows, _ = delay_budget.run_budget([case], duration=0.5, trace_dir=out)
delay_budget.plot(rows, out / "budget.png")
render_png([out / "a_sync.vdtrace"], out / "trace.png")
render_gif([out / "a_sync.vdtrace"], out / "trace.gif", fps=4)
assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
assert "matplotlib.pyplot" not in sys.modules
print(sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".gif")))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[-2] == str(sorted(
        ["budget.png", "learning.png", "margins.png", "sweep.png", "table.png", "trace.png",
         "trace.gif"]))
