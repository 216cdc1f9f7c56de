"""Rendering cost, side by side in one run (docs/BENCHMARKS.md, "Rendering
and traces"):

1. ``env.render()`` (rgb_array) of every env in CPU milliseconds a frame, interleaved in
   blocks with the path envs' previous renderer (a matplotlib figure built per frame, kept
   here as the baseline) on the same env state.
2. ``vdsim-gym render`` of a two-run trace to a GIF: the streaming renderer (the static
   figure drawn once, what moves drawn with Pillow, frames encoded as they come) against
   the previous pipeline (the whole figure drawn per frame, every frame kept until the GIF
   is saved), interleaved in blocks, CPU seconds; frames per second.
3. Peak memory (max RSS of a fresh process) of the streaming GIF for a 10 s and a 60 s
   trace: flat in the trace length.

    python benchmarks/bench_render.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval import ClosedLoopEval


def matplotlib_path_frame(env) -> np.ndarray:
    """The path envs' former renderer: a matplotlib figure per frame."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from vdsim_gym.render.frames import body_outline
    from vdsim_gym.traces.recording import geometry

    fig = Figure(figsize=(8, 4), dpi=80)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_aspect("equal")
    ax.set_axis_off()
    x, y, psi = (float(v) for v in env.state[:3])
    course = env.course
    ax.plot(course.path[:, 0], course.path[:, 1], "--", color="0.5", lw=1)
    hit = env.cone_hit_flags
    ax.plot(course.cones[~hit, 0], course.cones[~hit, 1], "o", color="orange", ms=4)
    ax.plot(course.cones[hit, 0], course.cones[hit, 1], "o", color="red", ms=6)
    traj = env.trajectory
    ax.plot(traj[:, 0], traj[:, 1], "-", color="tab:blue", lw=1.5)
    body = body_outline(geometry(env.vehicle), x, y, psi, 0.0)[0]
    ax.fill(body[:, 0], body[:, 1], color="tab:blue", alpha=0.6)
    ax.set_xlim(x - 20, x + 40)
    ax.set_ylim(y - 15, y + 15)
    canvas.draw()
    return np.ascontiguousarray(np.asarray(canvas.buffer_rgba())[..., :3])


def _stats(xs: list[float]) -> str:
    return f"{min(xs):.3g} / {statistics.median(xs):.3g} / {max(xs):.3g}"


def frame_costs(repeats: int, frames: int = 20) -> None:
    envs = {}
    for env_id in ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0"):
        env = gym.make(env_id, render_mode="rgb_array")
        obs, _ = env.reset(seed=0)
        policy = stanley_pi(env) if "Path" in env_id or "DLC" in env_id else None
        for _ in range(40):
            action = policy.predict(obs)[0] if policy else env.action_space.sample() * 0.3
            obs, *_ = env.step(action)
        envs[env_id] = env
    cases = {f"{k} (Pillow)": e.render for k, e in envs.items()}
    dlc = envs["VDSim-DLC-v0"].unwrapped
    cases["VDSim-DLC-v0 (matplotlib per frame, before)"] = lambda: matplotlib_path_frame(dlc)
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(repeats):  # interleaved blocks
        for name, fn in cases.items():
            t0 = time.thread_time()
            for _ in range(frames):
                fn()
            times[name].append(1e3 * (time.thread_time() - t0) / frames)
    print(f"## env.render() rgb_array, CPU ms a frame ({repeats} blocks of {frames} "
          "frames, min / median / max)")
    for name, xs in times.items():
        print(f"  {name:48s} {_stats(xs)}")
    before = times["VDSim-DLC-v0 (matplotlib per frame, before)"]
    now = times["VDSim-DLC-v0 (Pillow)"]
    ratios = [b / n for b, n in zip(before, now, strict=True)]
    print(f"  path frame, before / now per block: {_stats(ratios)}")


def _traces(folder: Path, duration: float) -> list[Path]:
    out = []
    for name, latency in (("a", None), ("b", vdsim_gym.LatencyModel.fixed(0.02))):
        path = folder / f"{name}_{duration:g}.vdtrace"
        kw = {} if latency is None else {"mode": "virtual_async", "latency": latency}
        ClosedLoopEval(plant_kwargs=dict(level="L2", longitudinal="force"),
                       controller=lambda obs, t: (0.02 * math.sin(t), 800.0 * (20 - obs["vx"])),
                       control_period=0.02, duration=duration, initial_state={"vx": 20.0},
                       trace_path=path, **kw).run()
        out.append(path)
    return out


def previous_gif(paths: list[Path], out: Path, fps: float) -> int:
    """The previous pipeline: the whole figure drawn for every frame (time cursors moved,
    the close-up's limits set), every frame kept, one save at the end."""
    from PIL import Image

    from vdsim_gym.render.trace import _Figure
    from vdsim_gym.traces.trace import read_trace

    traces = [read_trace(p) for p in paths]
    fig = _Figure(traces, ["a", "b"], "a, b")
    cursors = [ax.axvline(0.0, color="k", lw=0.8) for ax in fig.panels.values()]
    pose = traces[0]["pose"]
    t = traces[0]["t"]
    frames = []
    for at in np.arange(0.0, fig.t_end + 1e-9, 1.0 / fps):
        for c in cursors:
            c.set_xdata([at, at])
        i = int(np.searchsorted(t, at))
        i = min(i, len(t) - 1)
        fig.ax_zoom.set_xlim(pose[i, 0] - 25, pose[i, 0] + 25)
        fig.ax_zoom.set_ylim(pose[i, 1] - 7, pose[i, 1] + 7)
        fig.fig.canvas.draw()
        frames.append(Image.fromarray(np.asarray(fig.fig.canvas.buffer_rgba())[..., :3].copy()))
    frames[0].save(out, save_all=True, append_images=frames[1:], duration=1000 / fps, loop=0)
    fig.close()
    return len(frames)


def gif_speed(repeats: int, folder: Path) -> None:
    from vdsim_gym.render.trace import render_gif

    paths = _traces(folder, 2.0)
    fps = 10.0
    times = {"streaming (now)": [], "whole figure per frame (before)": []}
    n = 0
    for _ in range(repeats):
        t0 = time.thread_time()
        render_gif(paths, folder / "now.gif", fps=fps)
        times["streaming (now)"].append(time.thread_time() - t0)
        t0 = time.thread_time()
        n = previous_gif(paths, folder / "before.gif", fps)
        times["whole figure per frame (before)"].append(time.thread_time() - t0)
    print(f"## GIF of a 2 s two-run trace at {fps:g} frames/s ({n} frames), CPU s, "
          f"{repeats} interleaved blocks, min / median / max")
    for name, xs in times.items():
        fr = [n / x for x in xs]
        print(f"  {name:34s} {_stats(xs)} s   {_stats(fr)} frames/s")
    ratios = [b / a for a, b in zip(*times.values(), strict=True)]
    print(f"  before / now per block: {_stats(ratios)}")


MEMORY = """
import resource, sys
from vdsim_gym.render.trace import render_gif
render_gif(sys.argv[1:3], sys.argv[3], fps=10)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def gif_memory(folder: Path) -> None:
    print("## streaming GIF, peak memory of a fresh process (max RSS, MiB) and CPU s")
    for duration in (10.0, 60.0):
        paths = _traces(folder, duration)
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", MEMORY, *map(str, paths),
                              str(folder / f"m{duration:g}.gif")],
                             capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        rss = int(out.stdout.split()[-1]) / 1024
        frames = int(duration * 10) + 1
        print(f"  {duration:4.0f} s trace, {frames:4d} frames: {rss:6.0f} MiB, {wall:5.1f} s "
              "wall (with start-up)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    load = __import__("os").getloadavg()[0]
    print(f"load average {load:.2f} on {__import__('os').cpu_count()} CPUs")
    frame_costs(args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        gif_speed(max(3, args.repeats // 2), Path(tmp))
        gif_memory(Path(tmp))


if __name__ == "__main__":
    main()
