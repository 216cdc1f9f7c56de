"""Rendering .vdtrace files (``vdsim-gym render``, docs/TRACES.md): a bird's-eye view
(each run's course: reference path and cones from its overlays; each run's driven path,
its body rectangle and turned front wheels from the manifest's geometry; fixed axis
limits) with a close-up that follows the first run at a fixed scale, above panels of
speed, steer and longitudinal command with a time cursor; several traces overlay in one
view aligned by time, a colour each. A dyno trace (no pose) gets the panels only. An
animated GIF or MP4 (``render_gif``) or one PNG frame (``render_png``).

The figure's static parts (axes, curves, courses, whole paths faint) are drawn once by
matplotlib; each frame copies that image and draws what moves with Pillow through the
axes' data-to-pixel transforms (cursors, paths so far, bodies, the close-up), so a frame
costs milliseconds, not a figure draw. Frames stream to the file as they are drawn (GIF:
one palette for every frame, encoded and written frame by frame; MP4: ffmpeg through
imageio-ffmpeg), so memory stays flat however long the trace. matplotlib and pillow come
with the ``plot`` extra and are imported only here, with an error naming it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._files import atomic_path
from vdsim_gym.errors import ConfigError
from vdsim_gym.render.frames import body_outline
from vdsim_gym.traces.trace import Trace, read_trace

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


def _rgb(color: str) -> tuple[int, int, int]:
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    return round(255 * r), round(255 * g), round(255 * b)


def _courses(traces: Sequence[Trace]) -> list[tuple[int, dict[str, Any]]]:
    """The distinct courses [(index of the first run on it, its overlays)]: runs on the
    same course (equal reference and cones) share one drawing."""
    out: list[tuple[int, dict[str, Any]]] = []
    seen: list[Any] = []
    for j, tr in enumerate(traces):
        key = json.dumps({k: v for k, v in sorted(tr.overlays.items())
                          if v.get("kind") in ("path2d", "region")}, sort_keys=True)
        if key not in seen:
            seen.append(key)
            out.append((j, tr.overlays))
    return out


def _course_arrays(overlays: dict[str, Any]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(reference path, cones) of a course's overlays, as (N, 2) arrays or None."""
    ref = overlays.get("reference")
    path = None if ref is None else np.asarray(ref["points"], float).reshape(-1, 2)
    cones = [np.asarray(ov["points"], float).reshape(-1, 2) for ov in overlays.values()
             if ov.get("style") == "points"]
    return path, (np.concatenate(cones) if cones else None)


def _decimate(xy: np.ndarray, max_points: int = 1500) -> np.ndarray:
    """At most ``max_points`` of a polyline (every k-th, and always its last point)."""
    if len(xy) <= max_points:
        return xy
    k = int(math.ceil(len(xy) / max_points))
    return np.concatenate((xy[::k], xy[-1:]))


class _Figure:
    """The static figure, drawn once; ``frame(at)`` is a PIL image of time ``at``."""

    ZOOM_HALF_M = 25.0  # the close-up's half width [m]

    def __init__(self, traces: Sequence[Trace], labels: Sequence[str], title: str) -> None:
        self.traces, self.labels = traces, labels
        self.colors = [f"C{i % 10}" for i in range(len(traces))]
        self.bird = all("pose" in tr.channels for tr in traces)
        self.courses = _courses(traces) if self.bird else []
        panels = ["speed", "steer", "longitudinal"] if self.bird else \
            ["speed", "longitudinal"] + (["pedal"] if "pedal" in traces[0].channels else [])
        heights = ([1.3, 2.2] if self.bird else []) + [1.0] * len(panels)
        self.fig = _figure(figsize=(10, 1.6 + 1.5 * len(heights)), dpi=80)
        self.rgb = [_rgb(c) for c in self.colors]  # matplotlib's cycle, for Pillow
        axes = self.fig.subplots(len(heights), 1, gridspec_kw={"height_ratios": heights})
        axes = list(np.atleast_1d(axes))
        # The overview (fixed limits: the whole course) and a close-up that follows the
        # first run's car at a fixed scale (drawn per frame with Pillow).
        self.ax_bird = axes.pop(0) if self.bird else None
        self.ax_zoom = axes.pop(0) if self.bird else None
        self.panels = dict(zip(panels, axes, strict=True))
        self.t_end = max(float(tr["t"][-1]) for tr in traces)
        self._setup(title)
        self._freeze()

    # ---------------------------------------------------------------- static parts

    def _setup(self, title: str) -> None:
        if self.ax_bird is not None and self.ax_zoom is not None:  # both, with a pose
            ax = self.ax_bird
            xs, ys = [], []
            same = len(self.courses) == 1
            for j, overlays in self.courses:
                path, cones = _course_arrays(overlays)
                col = "0.55" if same else self.colors[j]
                suffix = "" if same else f" ({self.labels[j]})"
                if path is not None:
                    ax.plot(path[:, 0], path[:, 1], color=col, lw=1.0, ls="--",
                            label="reference" + suffix)
                    xs.append(path[:, 0])
                    ys.append(path[:, 1])
                if cones is not None:
                    ax.plot(cones[:, 0], cones[:, 1], ls="none", marker="^", ms=3,
                            color="tab:orange" if same else col, label="cones" + suffix)
                for ov in overlays.values():
                    if ov.get("kind") == "region":
                        pts = np.asarray(ov["polygon"], float)
                        ax.fill(pts[:, 0], pts[:, 1], alpha=0.15, label=ov["name"] + suffix)
            for tr, col, lab in zip(self.traces, self.colors, self.labels, strict=True):
                pose = tr["pose"]
                ax.plot(pose[:, 0], pose[:, 1], color=col, lw=1.0, alpha=0.3)
                ax.plot([], [], color=col, lw=1.6, label=lab)  # the legend's run entry
                xs.append(pose[:, 0])
                ys.append(pose[:, 1])
            ax.set_aspect("equal", adjustable="box")
            ax.grid(alpha=0.3)
            x, y = np.concatenate(xs), np.concatenate(ys)
            x, y = x[np.isfinite(x)], y[np.isfinite(y)]
            pad = 3.0
            ax.set_xlim(x.min() - pad, x.max() + pad)  # fixed for every frame
            ax.set_ylim(y.min() - pad, y.max() + pad)
            # above the axes: inside, it covered the course's start
            ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=7, ncol=6,
                      frameon=False)
            ax.set_ylabel("Y [m]")
            self.ax_zoom.set_title("close-up following the first run", fontsize=8)
            self.ax_zoom.set_xticks([])
            self.ax_zoom.set_yticks([])
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
        list(self.panels.values())[-1].set_xlabel("t [s]")
        self.fig.suptitle(title, fontsize=10)
        self.fig.tight_layout()

    def _freeze(self) -> None:
        """Draws the static figure once and keeps its pixels and the axes' transforms
        (fixed from here on: no limit changes after this)."""
        canvas = self.fig.canvas
        canvas.draw()
        self.background = np.asarray(canvas.buffer_rgba())[..., :3].copy()
        self.height = self.background.shape[0]
        h = self.height

        def box(ax: Any) -> tuple[float, float, float, float]:
            b = ax.bbox  # display pixels, origin at the bottom left
            return b.x0, h - b.y1, b.x1, h - b.y0

        self.panel_boxes = {name: box(ax) for name, ax in self.panels.items()}
        self.panel_trans = {name: ax.transData.frozen() for name, ax in self.panels.items()}
        if self.ax_bird is not None:
            self.bird_trans = self.ax_bird.transData.frozen()
            left, top, right, bottom = box(self.ax_zoom)
            self.zoom_box = (int(left) + 1, int(top) + 1, int(right), int(bottom))
            zw = self.zoom_box[2] - self.zoom_box[0]
            self.zoom_k = zw / (2 * self.ZOOM_HALF_M)  # px per metre of the close-up
            self.zoom_courses = [(self.rgb[j] if len(self.courses) > 1 else None,
                                  *_course_arrays(ov)) for j, ov in self.courses]
            self.geometry = [tr.body_geometry() for tr in self.traces]

    def _pixels(self, trans: Any, xy: np.ndarray) -> list[float]:
        uv = trans.transform(xy)
        uv[:, 1] = self.height - uv[:, 1]
        return uv.ravel().tolist()

    # ---------------------------------------------------------------- one frame

    def frame(self, at: float) -> Any:
        """The figure at time ``at`` as a PIL RGB image: the static image with the time
        cursors, each run's path so far and body, and the close-up."""
        from PIL import Image, ImageDraw

        from vdsim_gym.render.frames import WorldView, draw_scene, scale_bar

        img = Image.fromarray(self.background)
        draw = ImageDraw.Draw(img)
        for name, (left, top, right, bottom) in self.panel_boxes.items():
            u = round(self.panel_trans[name].transform([[at, 0.0]])[0, 0])
            if left <= u <= right:
                draw.line((u, top, u, bottom), fill=(0, 0, 0), width=1)
        draw.text((8, 6), f"t = {at:6.2f} s", fill=(0, 0, 0))
        if self.ax_bird is None:
            return img
        poses, bodies = [], []
        for j, tr in enumerate(self.traces):
            i = _index(tr["t"], at)
            pose = tr["pose"]
            poses.append((_decimate(pose[: i + 1, :2]), self.rgb[j]))
            steer = tr["steer_applied"][i] if "steer_applied" in tr.channels \
                else tr["u_steer"][i]
            x, y, psi = pose[i]
            bodies.append(body_outline(self.geometry[j], x, y, psi, steer))
        for (xy, col), polys in zip(poses, bodies, strict=True):
            if len(xy) > 1:
                draw.line(self._pixels(self.bird_trans, xy), fill=col, width=2)
            for poly in polys:
                draw.line(self._pixels(self.bird_trans, poly), fill=col, width=1)
        # the close-up: a view of fixed scale centred on the first run's car
        left, top, right, bottom = self.zoom_box
        zoom = Image.new("RGB", (right - left, bottom - top), (255, 255, 255))
        zdraw = ImageDraw.Draw(zoom)
        x0, y0 = (float(v) for v in self.traces[0]["pose"][_index(self.traces[0]["t"], at),
                                                             :2])
        if math.isfinite(x0) and math.isfinite(y0):
            view = WorldView(x0, y0, self.zoom_k, (0, 0, right - left, bottom - top))
            for course_col, path, cones in self.zoom_courses:  # several courses: a colour each
                color: dict[str, Any] = {} if course_col is None else {"cone_color": course_col}
                draw_scene(zdraw, view, path=path, cones=cones, **color)
                if course_col is not None and path is not None:
                    view.polyline(zdraw, path, course_col, width=1)
            for (xy, col), polys in zip(poses, bodies, strict=True):
                view.polyline(zdraw, xy, col, width=2)
                for poly in polys:
                    zdraw.polygon(view.flat(poly[:-1]), outline=col, width=2)
            scale_bar(zdraw, self.zoom_k, 8, bottom - top - 12)
        img.paste(zoom, (left, top))
        return img

    def close(self) -> None:
        self.fig.clear()  # a standalone figure (no pyplot registry): clearing frees it


def _drawable(tr: Trace) -> bool:
    """Whether the bird's-eye view of ``tr`` has something to draw: a finite position, or
    a course overlay with a finite point."""
    pose = tr["pose"]
    if pose.ndim == 2 and pose.shape[1] >= 2 and np.isfinite(pose[:, :2]).all(axis=1).any():
        return True
    path, cones = _course_arrays(tr.overlays)
    regions = [np.asarray(ov["polygon"], float).reshape(-1, 2) for ov in tr.overlays.values()
               if ov.get("kind") == "region"]
    return any(a is not None and np.isfinite(a).all(axis=1).any()
               for a in (path, cones, *regions))


def _load(paths: Sequence[str | Path], labels: Sequence[str] | None
          ) -> tuple[list[Trace], list[str]]:
    if not paths:
        raise ConfigError("give at least one .vdtrace file")
    traces = [read_trace(p) for p in paths]
    if labels is None:
        labels = [Path(p).stem for p in paths]
    if len(labels) != len(traces):
        raise ConfigError(f"{len(labels)} labels for {len(traces)} traces; give one label per "
                          "trace (comma-separated)")
    birds = {"pose" in tr.channels for tr in traces}
    if len(birds) > 1:
        raise ConfigError("vehicle and dyno traces cannot share one view; render them apart")
    if birds == {True}:
        for tr in traces:
            tr.body_geometry()  # a null or non-finite geometry is named, not drawn
        if not any(_drawable(tr) for tr in traces):
            names = ", ".join(str(tr.path) for tr in traces)
            raise ConfigError(f"{names}: nothing to draw in the bird's-eye view: no finite "
                              "position in the pose channel and no course overlay "
                              "(reference, cones, region); render a trace whose run has a "
                              "pose, or attach its course (vdsim_gym.traces.trace.attach_overlay)")
    return traces, list(labels)


def render_png(paths: Sequence[str | Path], out: str | Path, *,
               labels: Sequence[str] | None = None, at: float | None = None,
               title: str = "") -> Path:
    """One frame at time ``at`` (default: the end, every run's whole path) as a PNG,
    written atomically."""
    traces, labels = _load(paths, labels)
    fig = _Figure(traces, labels, title or ", ".join(labels))
    try:
        image = fig.frame(fig.t_end if at is None else float(at))
    finally:
        fig.close()
    with atomic_path(out) as tmp:
        image.save(tmp, format="PNG")
    return Path(out)


class _GifStream:
    """An animated GIF written frame by frame: every frame quantized to one palette
    (taken from the last frame, which holds every run's colours) and LZW-encoded as it
    comes, with Pillow's GIF writer helpers (``GifImagePlugin.getheader`` /
    ``getdata``); nothing but the file grows with the number of frames."""

    def __init__(self, fh: Any, palette_image: Any, duration_ms: int) -> None:
        from PIL import GifImagePlugin, Image

        self._gif, self._image = GifImagePlugin, Image
        self.fh, self.duration = fh, duration_ms
        self.palette = palette_image.quantize(colors=255)
        self.started = False

    def add(self, image: Any) -> None:
        frame = image.quantize(palette=self.palette, dither=self._image.Dither.NONE)
        if not self.started:
            header, _ = self._gif.getheader(frame, None, {"loop": 0,
                                                          "duration": self.duration})
            for chunk in header:
                self.fh.write(chunk)
            self.started = True
        for chunk in self._gif.getdata(frame, duration=self.duration):
            self.fh.write(chunk)

    def close(self) -> None:
        self.fh.write(b";")  # the GIF trailer


class _Mp4Stream:
    """An H.264 MP4 written frame by frame through the ffmpeg of imageio-ffmpeg (the
    ``render`` extra brings it with moviepy)."""

    def __init__(self, path: str, size: tuple[int, int], fps: float) -> None:
        try:
            import imageio_ffmpeg
        except ImportError:
            raise ImportError("MP4 output needs imageio-ffmpeg: pip install "
                              "'vdsim-gym[render]' (or write a .gif)",
                              name="imageio_ffmpeg") from None
        w, h = size
        self.size = (w - w % 2, h - h % 2)  # yuv420p: even sides
        self._gen = imageio_ffmpeg.write_frames(path, self.size, fps=fps, codec="libx264",
                                                macro_block_size=1, output_params=["-f",
                                                                                   "mp4"])
        self._gen.send(None)

    def add(self, image: Any) -> None:
        if image.size != self.size:
            image = image.crop((0, 0, *self.size))
        self._gen.send(image.tobytes())

    def close(self) -> None:
        self._gen.close()


def _progress(total: int, enabled: bool) -> Any:
    """tqdm on stderr when installed, else a line at every tenth; None when disabled."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return _Lines(total)
    return tqdm(total=total, desc="render", unit="frame")


class _Lines:
    def __init__(self, total: int) -> None:
        self.total, self.done, self.next = total, 0, 0

    def update(self, n: int) -> None:
        import sys

        self.done += n
        if self.done >= self.next or self.done == self.total:
            print(f"[render] {self.done}/{self.total} frames", file=sys.stderr, flush=True)
            self.next = self.done + max(1, self.total // 10)

    def close(self) -> None:
        pass


VIDEO_SUFFIXES = (".gif", ".mp4")


def render_gif(paths: Sequence[str | Path], out: str | Path, *,
               labels: Sequence[str] | None = None, fps: float = 10.0,
               speed: float = 1.0, title: str = "", max_frames: int = 10000,
               progress: bool = False) -> Path:
    """An animation (``out`` ending in .gif, or .mp4 for H.264 video): a frame every
    ``speed / fps`` seconds of simulated time, played at ``fps``; a trace longer than
    ``max_frames`` frames is shown faster (the frames spread over it, played at ``fps``).
    Frames stream to the file (memory flat in the trace length), written atomically;
    ``progress``: a progress bar on stderr."""
    if not (isinstance(fps, (int, float)) and isinstance(speed, (int, float))
            and fps > 0 and speed > 0 and math.isfinite(fps) and math.isfinite(speed)):
        raise ConfigError(f"fps and speed must be positive numbers, got fps={fps!r}, "
                          f"speed={speed!r}")
    suffix = Path(out).suffix.lower()
    if suffix not in VIDEO_SUFFIXES:
        raise ConfigError(f"{out}: the animation's file must end in .gif or .mp4 (a PNG "
                          "frame: render_png / --png)")
    traces, labels = _load(paths, labels)
    fig = _Figure(traces, labels, title or ", ".join(labels))
    try:
        step = speed / fps
        n = min(int(math.floor(fig.t_end / step + 1e-9)) + 1, max(2, int(max_frames)))
        times = np.linspace(0.0, (n - 1) * step, n) if n * step <= fig.t_end + step else \
            np.linspace(0.0, fig.t_end, n)
        last = fig.frame(fig.t_end)
        bar = _progress(n, progress)
        try:
            with atomic_path(out) as tmp:
                if suffix == ".gif":
                    with open(tmp, "wb") as fh:
                        stream: Any = _GifStream(fh, last, max(20, round(1000.0 / fps)))
                        _write_frames(fig, times, stream, bar)
                else:
                    stream = _Mp4Stream(str(tmp), last.size, fps)
                    _write_frames(fig, times, stream, bar)
        finally:
            if bar is not None:
                bar.close()
    finally:
        fig.close()
    return Path(out)


def _write_frames(fig: _Figure, times: np.ndarray, stream: Any, bar: Any) -> None:
    try:
        for at in times.tolist():
            stream.add(fig.frame(at))
            if bar is not None:
                bar.update(1)
    finally:
        stream.close()


__all__ = ["body_outline", "render_gif", "render_png"]
