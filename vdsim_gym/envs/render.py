"""Bird's-eye rendering of a path-tracking env as an RGB array.

Imported lazily by ``PathTrackingEnv.render`` so that the physics and env modules never
import matplotlib. Uses an Agg canvas on a standalone Figure: no pyplot global state, no
GUI backend, safe in worker processes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from vdsim_gym.envs.path_env import PathTrackingEnv

WIDTH_PX, HEIGHT_PX, DPI = 640, 320, 80
VIEW_BEHIND, VIEW_AHEAD = 20.0, 40.0  # visible ground distance around the vehicle [m]


def vehicle_outline(env: PathTrackingEnv, x: float, y: float, psi: float) -> np.ndarray:
    """Corners (5, 2) of the body rectangle at pose (x, y, psi), closed [m] (this
    episode's vehicle: a randomized CG moves the body around the CG)."""
    v = env.episode_params.vehicle
    front, rear = v.cg_to_front + v.front_overhang, v.cg_to_rear + v.rear_overhang
    hw = 0.5 * v.body_width
    body = np.array([[front, hw], [-rear, hw], [-rear, -hw], [front, -hw], [front, hw]])
    c, s = math.cos(psi), math.sin(psi)
    return body @ np.array([[c, s], [-s, c]]) + (x, y)


def render_rgb(env: PathTrackingEnv) -> np.ndarray:
    """(H, W, 3) uint8 image: path, cones (hit ones red), driven trajectory, vehicle."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_aspect("equal")
    ax.set_axis_off()
    state = env.state
    x, y, psi = (float(v) for v in state[:3])
    course = env.course
    if course is not None:
        ax.plot(course.path[:, 0], course.path[:, 1], "--", color="0.5", lw=1)
        if len(course.cones):
            hit = env.cone_hit_flags
            ok = course.cones[~hit]
            bad = course.cones[hit]
            ax.plot(ok[:, 0], ok[:, 1], "o", color="orange", ms=4)
            ax.plot(bad[:, 0], bad[:, 1], "o", color="red", ms=6)
    traj = env.trajectory
    if len(traj):
        ax.plot(traj[:, 0], traj[:, 1], "-", color="tab:blue", lw=1.5)
    if math.isfinite(x) and math.isfinite(y) and math.isfinite(psi):
        outline = vehicle_outline(env, x, y, psi)
        ax.fill(outline[:, 0], outline[:, 1], color="tab:blue", alpha=0.6)
        half_h = 0.5 * (VIEW_BEHIND + VIEW_AHEAD) * HEIGHT_PX / WIDTH_PX
        ax.set_xlim(x - VIEW_BEHIND, x + VIEW_AHEAD)
        ax.set_ylim(y - half_h, y + half_h)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    return np.ascontiguousarray(rgba[..., :3])
