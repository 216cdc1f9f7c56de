"""Figures for the package's plots, drawn without pyplot.

Every plot function of the package (the CLI commands', sweeps', training's, traces')
draws on ``figure()``: a matplotlib ``Figure`` on its own Agg canvas. It needs no GUI
backend (headless machines, worker threads) and leaves pyplot's global backend alone, so
a plot written from a Jupyter notebook does not switch that session's inline backend to
Agg (selecting Agg in each plot function did: the notebook's own figures stopped showing
after the first package plot; tests/test_plotting.py). The envs' frames need no
matplotlib at all (Pillow: ``vdsim_gym/render/frames.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def figure(**kwargs: Any) -> Any:
    """A ``matplotlib.figure.Figure(**kwargs)`` with an Agg canvas attached (so
    ``savefig`` and animations work); ImportError naming the ``plot`` extra without
    matplotlib."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError("plotting needs matplotlib: pip install 'vdsim-gym[plot]'",
                          name="matplotlib") from exc
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """``fig.savefig(path, dpi=dpi)`` written atomically (``_files.atomic_path``: a signal
    or a crash leaves the previous image or the new one, never a truncated one); the
    format is the target's suffix (.png, .svg, .pdf)."""
    from vdsim_gym._files import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=path.suffix.lstrip(".") or None)
    return path


__all__ = ["figure", "save_figure"]
