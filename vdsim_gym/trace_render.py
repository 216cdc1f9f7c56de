"""Rendering .vdtrace files (``vdsim-gym render``, docs/TRACES.md): a bird's-eye view
(reference path and cones from the overlays, each run's driven path, its body rectangle
and turned front wheels from the manifest's geometry, fixed axis limits) with a close-up
that follows the first run at a fixed scale, above panels of
speed, steer and longitudinal command with a time cursor; several traces overlay in one
view aligned by time, a colour each. A dyno trace (no pose) gets the panels only. An
animated GIF (``render_gif``) or one PNG frame (``render_png``). matplotlib and pillow
come with the ``plot`` extra and are imported only here, with an error naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.envs.render_frames import body_outline
from vdsim_gym.trace import Trace, read_trace

LON_CHANNELS = ("u_fx", "u_pedal", "u_ax", "u_reference")


def _figure(**kwargs: Any) -> Any:
    from vdsim_gym._plotting import figure

    try:
        return figure(**kwargs)
    except ImportError as exc:
        raise ImportError("rendering traces needs matplotlib (and pillow, which it brings): "
                          "pip install 'vdsim-gym[plot]'", name="matplotlib") from exc


def _index(t: np.ndarray, at: float) -> int:
    return int(np.clip(np.searchsorted(t, at + 1e-12, side="right") - 1, 0, len(t) - 1))


def _lon(tr: Trace) -> tuple[str, np.ndarray] | None:
    for name in LON_CHANNELS:
        if name in tr.channels:
            return name, tr[name]
    return None


class _Figure:
    """The figure and its artists; ``draw(at)`` moves everything to time ``at``."""

    def __init__(self, traces: Sequence[Trace], labels: Sequence[str], title: str) -> None:
        self.traces, self.labels = traces, labels
        self.colors = [f"C{i % 10}" for i in range(len(traces))]
        self.bird = all("pose" in tr.channels for tr in traces)
        panels = ["speed", "steer", "longitudinal"] if self.bird else \
            ["speed", "longitudinal"] + (["pedal"] if "pedal" in traces[0].channels else [])
        heights = ([1.3, 2.2] if self.bird else []) + [1.0] * len(panels)
        self.fig = _figure(figsize=(10, 1.6 + 1.5 * len(heights)))
        axes = self.fig.subplots(len(heights), 1, gridspec_kw={"height_ratios": heights})
        axes = list(np.atleast_1d(axes))
        # The overview (fixed limits: the whole course) and a close-up that follows the
        # first run's car at a fixed scale (the body and turned wheels are visible).
        self.ax_bird = axes.pop(0) if self.bird else None
        self.ax_zoom = axes.pop(0) if self.bird else None
        self.panels = dict(zip(panels, axes, strict=True))
        self.t_end = max(float(tr["t"][-1]) for tr in traces)
        self.cursors = []
        self.bodies: list[list[Any]] = []
        self.zoom_bodies: list[list[Any]] = []
        self.dots: list[Any] = []
        self.zoom_half = (25.0, 7.0)  # close-up half extent [m] (x, y)
        self._setup(title)

    def _setup(self, title: str) -> None:
        first = self.traces[0]
        if self.ax_bird is not None:
            xs, ys = [], []
            for k, ax in enumerate((self.ax_bird, self.ax_zoom)):
                ref = first.overlays.get("reference")
                if ref is not None:
                    pts = np.asarray(ref["points"], float)
                    ax.plot(pts[:, 0], pts[:, 1], color="0.55", lw=1.0, ls="--",
                            label="reference")
                    xs.append(pts[:, 0])
                    ys.append(pts[:, 1])
                for ov in first.overlays.values():
                    if ov.get("style") == "points":
                        pts = np.asarray(ov["points"], float)
                        ax.plot(pts[:, 0], pts[:, 1], ls="none", marker="^", ms=3 + 2 * k,
                                color="tab:orange", label=ov["name"])
                    elif ov.get("kind") == "region":
                        pts = np.asarray(ov["polygon"], float)
                        ax.fill(pts[:, 0], pts[:, 1], alpha=0.15, label=ov["name"])
                for tr, col, lab in zip(self.traces, self.colors, self.labels, strict=True):
                    pose = tr["pose"]
                    ax.plot(pose[:, 0], pose[:, 1], color=col, lw=1.0, alpha=0.3)
                    body = [ax.plot([], [], color=col, lw=1.0)[0] for _ in range(5)]
                    if k == 0:
                        dot, = ax.plot([], [], color=col, lw=1.6, label=lab)
                        self.dots.append(dot)
                        xs.append(pose[:, 0])
                        ys.append(pose[:, 1])
                        self.bodies.append(body)
                    else:
                        self.zoom_bodies.append(body)
                ax.set_aspect("equal", adjustable="box")
                ax.grid(alpha=0.3)
            x, y = np.concatenate(xs), np.concatenate(ys)
            pad = 3.0
            self.ax_bird.set_xlim(x.min() - pad, x.max() + pad)  # fixed for every frame
            self.ax_bird.set_ylim(y.min() - pad, y.max() + pad)
            self.ax_bird.legend(loc="upper left", fontsize=7, ncol=5)
            self.ax_bird.set_ylabel("Y [m]")
            self.ax_zoom.set_title("close-up following the first run", fontsize=8)
            self.ax_zoom.set_ylabel("Y [m]")
        for name, ax in self.panels.items():
            for tr, col in zip(self.traces, self.colors, strict=True):
                t = tr["t"]
                if name == "speed":
                    v = tr["v_body"][:, 0] if "v_body" in tr.channels else tr["speed"]
                    ax.plot(t, v, color=col, lw=1.1)
                    ax.set_ylabel("speed [m/s]")
                elif name == "pedal":
                    ax.plot(t, tr["pedal"], color=col, lw=1.1)
                    ax.set_ylabel("pedal [-]")
                elif name == "steer":
                    ax.plot(t, np.degrees(tr["u_steer"]), color=col, lw=1.1)
                    ax.set_ylabel("steer [deg]")
                else:
                    lon = _lon(tr)
                    if lon is not None:
                        ax.plot(t, lon[1], color=col, lw=1.1)
                        unit = tr.units.get(lon[0], "")
                        ax.set_ylabel(f"{lon[0]} [{unit}]")
            ax.set_xlim(0.0, self.t_end)
            ax.grid(alpha=0.3)
            self.cursors.append(ax.axvline(0.0, color="k", lw=0.8))
        list(self.panels.values())[-1].set_xlabel("t [s]")
        self.title = self.fig.suptitle(title, fontsize=10)
        self.fig.tight_layout()

    def draw(self, at: float) -> None:
        for cur in self.cursors:
            cur.set_xdata([at, at])
        if self.ax_bird is not None:
            for j, (tr, dot) in enumerate(zip(self.traces, self.dots, strict=True)):
                i = _index(tr["t"], at)
                pose = tr["pose"]
                dot.set_data(pose[: i + 1, 0], pose[: i + 1, 1])
                steer = tr["steer_applied"][i] if "steer_applied" in tr.channels \
                    else tr["u_steer"][i]
                polys = body_outline(tr.manifest.get("geometry", {}), *pose[i], steer)
                for body in (self.bodies[j], self.zoom_bodies[j]):
                    for line, poly in zip(body, polys, strict=False):
                        line.set_data(poly[:, 0], poly[:, 1])
                if j == 0:  # the close-up follows the first run
                    hx, hy = self.zoom_half
                    self.ax_zoom.set_xlim(pose[i, 0] - hx, pose[i, 0] + hx)
                    self.ax_zoom.set_ylim(pose[i, 1] - hy, pose[i, 1] + hy)

    def close(self) -> None:
        self.fig.clear()  # a standalone figure (no pyplot registry): clearing frees it


def _load(paths: Sequence[str | Path], labels: Sequence[str] | None
          ) -> tuple[list[Trace], list[str]]:
    if not paths:
        raise ValueError("give at least one .vdtrace file")
    traces = [read_trace(p) for p in paths]
    if labels is None:
        labels = [Path(p).stem for p in paths]
    if len(labels) != len(traces):
        raise ValueError(f"{len(labels)} labels for {len(traces)} traces; give one label per "
                         "trace (comma-separated)")
    birds = {"pose" in tr.channels for tr in traces}
    if len(birds) > 1:
        raise ValueError("vehicle and dyno traces cannot share one view; render them apart")
    return traces, list(labels)


def render_png(paths: Sequence[str | Path], out: str | Path, *,
               labels: Sequence[str] | None = None, at: float | None = None,
               title: str = "") -> Path:
    """One frame at time ``at`` (default: the end, every run's whole path) as a PNG."""
    traces, labels = _load(paths, labels)
    fig = _Figure(traces, labels, title or ", ".join(labels))
    try:
        fig.draw(fig.t_end if at is None else float(at))
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.fig.savefig(out, dpi=100)
    finally:
        fig.close()
    return out


def render_gif(paths: Sequence[str | Path], out: str | Path, *,
               labels: Sequence[str] | None = None, fps: float = 10.0,
               speed: float = 1.0, title: str = "", max_frames: int = 600) -> Path:
    """An animated GIF: frames every ``speed / fps`` seconds of simulated time (at most
    ``max_frames``), written atomically."""
    import os
    import tempfile

    from vdsim_gym._files import publish

    if not (fps > 0 and speed > 0):
        raise ValueError("fps and speed must be positive")
    traces, labels = _load(paths, labels)
    fig = _Figure(traces, labels, title or ", ".join(labels))
    from matplotlib.animation import FuncAnimation, PillowWriter

    step = speed / fps
    n = min(int(math.floor(fig.t_end / step)) + 1, max_frames)
    times = np.linspace(0.0, fig.t_end, n) if n > 1 else np.array([fig.t_end])
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".gif")
    os.close(fd)
    try:
        anim = FuncAnimation(fig.fig, lambda i: fig.draw(float(times[i])), frames=n)
        anim.save(tmp, writer=PillowWriter(fps=fps), dpi=80)
        publish(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        fig.close()
    return out


__all__ = ["body_outline", "render_gif", "render_png"]
