"""Frames of every env as RGB arrays, drawn from the env's arrays with Pillow (no figure
layout per frame: one to three milliseconds a frame), and the pygame window of
``render_mode="human"``.

- ``path_frame``: the path envs' bird's-eye view (reference, cones, driven path, body and
  turned wheels) with a scale bar, the time, speed and steer, and with latency the command
  in force and the pending one on a time strip (the command applied is older than the
  observation).
- ``acc_frame``: ego and lead on the road, the gap, the desired gap, TTC and the mode of
  the baseline when it is known (``env.render_notes``).
- ``dyno_frame``: the drive cycle with its preview, the roller speed, the pedal commanded
  and the throttle/brake that reach the car after the robot's transport delay.

``WorldView`` and ``draw_scene`` are shared with the trace renderer (vdsim_gym.render.trace).
Imported lazily by the envs' ``render``; Pillow comes with the ``plot`` extra, pygame with
the ``render`` extra (only ``human`` needs it).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

WIDTH_PX, HEIGHT_PX = 640, 240  # ACC and Dyno frames
PATH_WIDTH_PX, PATH_HEIGHT_PX = 640, 320  # the path envs' bird's-eye frame
BG, ROAD, LINE, TEXT = (250, 250, 250), (90, 90, 95), (235, 235, 235), (20, 20, 20)
EGO, LEAD, DESIRED, PREVIEW = (31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14)
GROUND, PATH, CONE, CONE_HIT = (238, 241, 234), (150, 150, 150), (255, 140, 0), (214, 39, 40)
WHEEL, PANEL = (40, 40, 40), (255, 255, 255)
PATH_VIEW_M = 60.0  # ground width in view of the path frame [m]


def _image(width: int = WIDTH_PX, height: int = HEIGHT_PX, bg: tuple[int, int, int] = BG
           ) -> tuple[Any, Any]:
    try:
        from PIL import Image, ImageDraw
    except ImportError:  # pragma: no cover - pillow comes with matplotlib
        raise ImportError("rendering needs Pillow: pip install 'vdsim-gym[plot]'",
                          name="PIL") from None
    img = Image.new("RGB", (width, height), bg)
    draw = ImageDraw.Draw(img)
    draw.font = _font()
    return img, draw


_FONT: Any = None


def _font() -> Any:
    """Pillow's bitmap font (6 x 11 px a character): 0.02 ms a line where the FreeType
    default takes 0.6 ms (text was 60 % of a frame)."""
    global _FONT
    if _FONT is None:
        from PIL import ImageFont

        load = getattr(ImageFont, "load_default_imagefont", None)  # Pillow >= 10.1
        _FONT = load() if load is not None else ImageFont.load_default()
    return _FONT


def _info(env: Any) -> dict[str, float]:
    return dict(zip(env.info_names, env._info.tolist(), strict=True))


def _notes(env: Any) -> str:
    notes: Mapping[str, Any] = getattr(env, "render_notes", {})
    return "   ".join(f"{k} {v}" for k, v in notes.items())


# ------------------------------------------------------------------ bird's-eye drawing


class WorldView:
    """Ground metres -> pixels of a box: the world point (cx, cy) at the box's centre,
    ``px_per_m`` pixels a metre, x to the right and y up (north-up)."""

    def __init__(self, cx: float, cy: float, px_per_m: float,
                 box: tuple[float, float, float, float]) -> None:
        self.cx, self.cy, self.k = float(cx), float(cy), float(px_per_m)
        self.box = box
        left, top, right, bottom = box
        self.uc, self.vc = 0.5 * (left + right), 0.5 * (top + bottom)
        self.half_w = 0.5 * (right - left) / self.k  # half extents in metres
        self.half_h = 0.5 * (bottom - top) / self.k

    def flat(self, xy: np.ndarray) -> list[float]:
        """(N, 2) ground points as the flat pixel list Pillow draws [u0, v0, u1, ...]."""
        uv = np.empty((len(xy), 2))
        uv[:, 0] = self.uc + (xy[:, 0] - self.cx) * self.k
        uv[:, 1] = self.vc - (xy[:, 1] - self.cy) * self.k
        return uv.ravel().tolist()

    def point(self, x: float, y: float) -> tuple[float, float]:
        return self.uc + (x - self.cx) * self.k, self.vc - (y - self.cy) * self.k

    def inside(self, xy: np.ndarray, margin_m: float = 0.0) -> np.ndarray:
        return ((np.abs(xy[:, 0] - self.cx) <= self.half_w + margin_m)
                & (np.abs(xy[:, 1] - self.cy) <= self.half_h + margin_m))

    def polyline(self, draw: Any, xy: np.ndarray, color: Any, width: int = 1) -> None:
        """The polyline's runs that reach into the view (a course leaving and re-entering
        the view is drawn in pieces, never joined across the gap)."""
        if len(xy) < 2:
            return
        keep = self.inside(xy, margin_m=2.0)
        keep[:-1] |= keep[1:]  # a segment with one end inside is drawn whole
        keep[1:] |= keep[:-1].copy()
        if not keep.any():
            return
        edges = np.flatnonzero(np.diff(np.concatenate(([0], keep.view(np.int8), [0]))))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            if b - a >= 2:
                draw.line(self.flat(xy[a:b]), fill=color, width=width)


def body_outline(geo: Mapping[str, Any], x: float, y: float, psi: float, steer: float
                 ) -> list[np.ndarray]:
    """The body rectangle and four wheels (front ones turned by ``steer``) in the ground
    frame, as closed (5, 2) polygons; empty without the geometry
    (``vdsim_gym.traces.recording.geometry`` of the vehicle, or a trace manifest's)."""
    need = ("cg_to_front_m", "cg_to_rear_m", "body_width_m", "track_m")
    if not all(k in geo for k in need):
        return []
    a, b, w, track = (geo[k] for k in need)
    front = a + geo.get("front_overhang_m", 0.8)
    rear = b + geo.get("rear_overhang_m", 0.8)
    r = geo.get("wheel_radius_m", 0.3)
    c, s = math.cos(psi), math.sin(psi)

    def place(poly: np.ndarray) -> np.ndarray:
        return np.column_stack((x + c * poly[:, 0] - s * poly[:, 1],
                                y + s * poly[:, 0] + c * poly[:, 1]))

    def rect(cx: float, cy: float, length: float, width: float, angle: float) -> np.ndarray:
        ca, sa = math.cos(angle), math.sin(angle)
        pts = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1], [-1, -1]], float)
        pts *= [length / 2, width / 2]
        return np.column_stack((cx + ca * pts[:, 0] - sa * pts[:, 1],
                                cy + sa * pts[:, 0] + ca * pts[:, 1]))

    out = [place(np.array([[-rear, -w / 2], [front, -w / 2], [front, w / 2], [-rear, w / 2],
                           [-rear, -w / 2]]))]
    for cx, ang in ((a, steer), (-b, 0.0)):
        for side in (-1.0, 1.0):
            out.append(place(rect(cx, side * track / 2, 2 * r, 0.22, ang)))
    return out


def draw_scene(draw: Any, view: WorldView, *, path: np.ndarray | None = None,
               cones: np.ndarray | None = None, hit: np.ndarray | None = None,
               cone_radius_m: float = 0.25, cone_color: Any = CONE,
               trails: Sequence[tuple[np.ndarray, Any]] = (),
               bodies: Sequence[tuple[list[np.ndarray], Any]] = ()) -> None:
    """The course (reference ``path`` grey, ``cones`` orange or ``cone_color``, hit ones
    red and larger),
    the driven ``trails`` [(xy, colour)] and the ``bodies`` [(body_outline polygons,
    colour)]: the body filled, the wheels dark."""
    if path is not None:
        view.polyline(draw, path, PATH, width=2)
    if cones is not None and len(cones):
        shown = view.inside(cones, margin_m=1.0)
        hit = np.zeros(len(cones), bool) if hit is None else np.asarray(hit, bool)
        rad = max(2.0, cone_radius_m * view.k)
        for j in np.flatnonzero(shown):
            u, v = view.point(*cones[j])
            q = 1.6 * rad if hit[j] else rad
            draw.ellipse((u - q, v - q, u + q, v + q), fill=CONE_HIT if hit[j] else cone_color)
    for xy, color in trails:
        view.polyline(draw, xy, color, width=2)
    for polys, color in bodies:
        if polys:
            draw.polygon(view.flat(polys[0][:-1]), fill=color, outline=WHEEL)
            for wheel in polys[1:]:
                draw.polygon(view.flat(wheel[:-1]), fill=WHEEL)


def scale_bar(draw: Any, px_per_m: float, x0: float, y0: float, max_px: float = 120) -> None:
    """A bar of a round length (1, 2 or 5 x 10^n m) at most ``max_px`` long, labelled."""
    raw = max_px / px_per_m
    base = 10.0 ** math.floor(math.log10(raw))
    length = max(m * base for m in (1, 2, 5) if m * base <= raw)
    px = length * px_per_m
    draw.line((x0, y0, x0 + px, y0), fill=TEXT, width=3)
    for xe in (x0, x0 + px):
        draw.line((xe, y0 - 5, xe, y0 + 5), fill=TEXT, width=1)
    draw.text((x0 + px + 6, y0 - 6), f"{length:g} m", fill=TEXT)


# ------------------------------------------------------------------ the path envs


def _deg(rad: float) -> str:
    return f"{math.degrees(rad):+6.2f} deg"


def _lon_text(env: Any, value: float) -> str:
    mode = getattr(env, "longitudinal", "pedal")
    if mode == "force":
        return f"Fx {value:+7.0f} N"
    if mode == "accel":
        return f"ax {value:+5.2f} m/s^2"
    return f"pedal {value:+5.2f}"


def _command_lines(env: Any, t: float) -> tuple[list[str], tuple | None, tuple | None]:
    """The command in force now and the newest pending one, as the core's command schedule
    holds them (``core.command_in_force()``, ``core.pending_commands``: sample and apply
    ticks and the plant command): (text lines, in force (t_sample, t_apply), pending
    (t_sample, t_apply)), times in seconds on the substep clock."""
    core, dt = env._core, env.substep_dt
    k_sample, k_apply, steer, lon = core.command_in_force()
    pending = core.pending_commands
    head = f"in force: steer {_deg(steer)}   {_lon_text(env, lon)}   "
    lines = [head + ("(the reset command)" if k_sample < 0 else
                     f"sampled {1e3 * (t - k_sample * dt):4.0f} ms before this observation")]
    newest = None
    if pending:
        p_sample, p_apply, p_steer, p_lon = pending[-1]
        newest = (p_sample * dt, p_apply * dt)
        count = f" ({len(pending)} pending)" if len(pending) > 1 else ""
        lines.append(f"pending:  steer {_deg(p_steer)}   {_lon_text(env, p_lon)}   sampled "
                     f"{1e3 * (t - newest[0]):4.0f} ms ago, applies in "
                     f"{1e3 * (newest[1] - t):4.0f} ms{count}")
    return lines, (None if k_sample < 0 else (k_sample * dt, k_apply * dt)), newest


def _time_strip(draw: Any, box: tuple[float, float, float, float], t: float, span: float,
                in_force: tuple | None, pending: tuple | None) -> None:
    """[t - span, t + span/2]: the observation at now (black), the command in force from
    its sample to its apply time (blue) and the pending one (orange, applying later)."""
    left, top, right, bottom = box
    draw.rectangle(box, fill=PANEL, outline=(190, 190, 190))
    t0, t1 = t - span, t + 0.5 * span
    y = bottom - 14

    def u(time_s: float) -> float:
        return left + 8 + (min(max(time_s, t0), t1) - t0) / (t1 - t0) * (right - left - 16)

    draw.line((u(t0), y, u(t1), y), fill=(150, 150, 150), width=1)
    draw.line((u(t), top + 4, u(t), y + 4), fill=TEXT, width=2)
    draw.text((u(t) + 3, top + 3), "obs now", fill=TEXT)
    for k, (entry, color, label) in enumerate(((in_force, EGO, "in force"),
                                                (pending, PREVIEW, "pending"))):
        if entry is None:
            continue
        ts, ta = entry
        yy = y - 12 - 11 * k
        draw.line((u(ts), yy, u(ta), yy), fill=color, width=3)
        draw.ellipse((u(ts) - 3, yy - 3, u(ts) + 3, yy + 3), fill=color)
        draw.line((u(ta), yy - 5, u(ta), yy + 5), fill=color, width=2)
        draw.text((left + 6, yy - 6), label, fill=color)
    draw.text((left + 6, bottom - 12), f"-{1e3 * span:.0f} ms", fill=(110, 110, 110))
    draw.text((right - 44, bottom - 12), f"+{5e2 * span:.0f} ms", fill=(110, 110, 110))


def path_frame(env: Any) -> np.ndarray:
    """The path envs' bird's-eye view around the car (north-up, 60 m of ground across):
    the course, the driven path, the body with the front wheels at the actuator's angle,
    a scale bar, the figures (time, speed, e_y, cone hits, steer at the wheels), and with
    latency the command in force and the pending one, with a time strip from their sample
    to their apply times."""
    w, h = PATH_WIDTH_PX, PATH_HEIGHT_PX
    img, draw = _image(w, h, GROUND)
    info = _info(env)
    x, y, psi = info["X"], info["Y"], info["psi"]
    t = info["t"]
    finite = all(math.isfinite(v) for v in (x, y, psi))
    cx, cy = (x + 12.0 * math.cos(psi), y + 12.0 * math.sin(psi)) if finite else (0.0, 0.0)
    view = WorldView(cx, cy, w / PATH_VIEW_M, (0, 0, w, h))
    course = env.course
    geo = _geometry(env)
    steer_wheels = env._core.session.realized_steer
    draw_scene(draw, view,
               path=None if course is None else course.path,
               cones=None if course is None else course.cones,
               hit=env.cone_hit_flags if course is not None and len(course.cones) else None,
               cone_radius_m=env.cone_radius,
               trails=[(env.trajectory, EGO)],
               bodies=[(body_outline(geo, x, y, psi, steer_wheels), EGO)] if finite else ())
    latency = env.latency is not None
    lines = [f"t {t:6.2f} s   v {info['vx']:5.2f} m/s   e_y {info['e_y']:+6.3f} m   cones hit "
             f"{int(info['cone_hits'])}",
             f"steer at the wheels {_deg(steer_wheels)}"]
    in_force = pending = None
    if latency:
        more, in_force, pending = _command_lines(env, t)
        lines += more
    if note := _notes(env):
        lines.append(note)
    box_h = 8 + 14 * len(lines)
    draw.rectangle((4, 4, 4 + 8 + 6.2 * max(len(s) for s in lines), 4 + box_h), fill=PANEL)
    for k, text in enumerate(lines):
        draw.text((10, 8 + 14 * k), text, fill=TEXT)
    scale_bar(draw, view.k, 12, h - 16)
    if latency:
        d = env.latency.mean_delay
        d = d if math.isfinite(d) else env.control_period  # measured: unknown in advance
        span = 0.05 * math.ceil(max(0.1, 2.0 * (d + env.control_period)) / 0.05)
        _time_strip(draw, (w - 250, h - 62, w - 6, h - 6), t, span, in_force, pending)
    return np.asarray(img, dtype=np.uint8).copy()


def _geometry(env: Any) -> dict[str, Any]:
    """The body geometry of this episode's vehicle (cached per vehicle object)."""
    vehicle = env.episode_params.vehicle
    cached = getattr(env, "_render_geometry", None)
    if cached is None or cached[0] is not vehicle:
        from vdsim_gym.traces.recording import geometry

        cached = (vehicle, geometry(vehicle))
        env._render_geometry = cached
    return cached[1]


# ------------------------------------------------------------------ ACC and Dyno


def acc_frame(env: Any) -> np.ndarray:
    """The road seen from the side: ego (blue) and lead (red) at their gap, the desired
    gap (green: min_distance + time_headway * v), and the figures: time, speeds, gap,
    desired gap, TTC."""
    img, draw = _image()
    info = _info(env)
    v, gap = info["ego_speed"], info["gap"]
    lead = info["lead_present"] > 0.5 and math.isfinite(gap)
    desired = env.min_distance + env.time_headway * max(v, 0.0)
    view = max(60.0, 1.3 * max(desired, gap if lead else 0.0) + 10.0)  # metres in view
    px_per_m = (WIDTH_PX - 40) / view
    road_top, road_bot = 120, 200
    draw.rectangle((0, road_top, WIDTH_PX, road_bot), fill=ROAD)
    for x in range(0, WIDTH_PX, 40):
        draw.line((x, 160, x + 20, 160), fill=LINE, width=2)
    car_len, car_h = 4.7 * px_per_m, 26
    ego_front = 20 + car_len
    draw.rectangle((20, 147, ego_front, 147 + car_h), fill=EGO)
    x_des = ego_front + desired * px_per_m
    draw.line((x_des, road_top - 6, x_des, road_bot), fill=DESIRED, width=3)
    if lead:
        x_lead = ego_front + gap * px_per_m
        draw.rectangle((x_lead, 147, x_lead + car_len, 147 + car_h), fill=LEAD)
        draw.line((ego_front, 138, x_lead, 138), fill=TEXT, width=1)
    ttc = info["ttc"]
    lines = [f"t {info['t']:6.2f} s   ego {v:5.2f} m/s   a {info['ax']:+5.2f} m/s^2",
             (f"lead {info['lead_speed']:5.2f} m/s   gap {gap:6.2f} m   desired "
              f"{desired:6.2f} m   TTC {ttc:5.2f} s" if lead and math.isfinite(ttc) and ttc > 0
              else f"lead {info['lead_speed']:5.2f} m/s   gap {gap:6.2f} m   desired "
              f"{desired:6.2f} m   not closing" if lead else "no lead: cruise")]
    if note := _notes(env):  # e.g. the baseline's mode (acc_pid sets it when it knows)
        lines.append(note)
    for k, text in enumerate(lines):
        draw.text((12, 12 + 18 * k), text, fill=TEXT)
    scale_bar(draw, px_per_m, 12, HEIGHT_PX - 16)
    return np.asarray(img, dtype=np.uint8).copy()


def dyno_frame(env: Any, behind_s: float = 20.0, ahead_s: float = 10.0) -> np.ndarray:
    """The drive cycle around now (past grey, the preview ahead orange), the roller speed
    (blue dot), and bars of the pedal the robot commands and the throttle and brake that
    reach the car after its transport delay."""
    img, draw = _image()
    info = _info(env)
    t = info["t"]
    speeds = env._speeds[env.cycle_index] if env.cycle is not None else np.zeros(2)
    dt = env.control_period
    from vdsim_gym.timing import floor_ticks  # (this module imports no core at load)

    k0 = max(0, floor_ticks(t - behind_s, dt))
    k1 = min(len(speeds), floor_ticks(t + ahead_s, dt) + 1)
    window = speeds[k0:k1]
    v_max = max(5.0, float(np.max(speeds)), info["speed"]) * 1.1
    left, right, top, bottom = 50, WIDTH_PX - 120, 50, HEIGHT_PX - 22

    def xy(time_s: float, v: float) -> tuple[float, float]:
        x = left + (time_s - (t - behind_s)) / (behind_s + ahead_s) * (right - left)
        return x, bottom - v / v_max * (bottom - top)

    draw.rectangle((left, top, right, bottom), outline=(180, 180, 180))
    pts = [xy((k0 + j) * dt, float(s)) for j, s in enumerate(window)]
    past = [p for p in pts if p[0] <= xy(t, 0.0)[0]]
    ahead = [p for p in pts if p[0] >= xy(t, 0.0)[0]]
    if len(past) > 1:
        draw.line(past, fill=(120, 120, 120), width=2)
    if len(ahead) > 1:
        draw.line(ahead, fill=PREVIEW, width=3)
    x_now = xy(t, 0.0)[0]
    draw.line((x_now, top, x_now, bottom), fill=(200, 200, 200), width=1)
    x, y = xy(t, info["speed"])
    draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=EGO)
    # pedal bars: command (fresh) and what reaches the car (delayed throttle - brake)
    mid = (top + bottom) / 2
    half = (bottom - top) / 2 - 4
    for j, (value, color, label) in enumerate((
            (info["pedal"], EGO, "cmd"),
            (info["throttle"] - info["brake"], LEAD, "car"))):
        xb = right + 30 + 40 * j
        draw.rectangle((xb, mid - half, xb + 22, mid + half), outline=(180, 180, 180))
        end = mid - max(-1.0, min(1.0, value)) * half
        draw.rectangle((xb, min(mid, end), xb + 22, max(mid, end)), fill=color)
        draw.text((xb, bottom + 4), label, fill=TEXT)
        draw.text((xb - 4, top - 12), f"{value:+.2f}", fill=TEXT)
    draw.text((right + 12, top - 4), "+1", fill=(110, 110, 110))
    draw.text((right + 12, bottom - 8), "-1", fill=(110, 110, 110))
    for v_tick in (0.0, 0.5 * v_max / 1.1, v_max / 1.1):  # speed axis
        _, yt = xy(t, v_tick)
        draw.line((left - 4, yt, left, yt), fill=(150, 150, 150))
        draw.text((6, yt - 6), f"{v_tick:4.1f}", fill=(110, 110, 110))
    draw.text((left + 4, bottom + 4), f"-{behind_s:g} s", fill=(110, 110, 110))
    draw.text((x_now - 10, bottom + 4), "now", fill=(110, 110, 110))
    draw.text((right - 30, bottom + 4), f"+{ahead_s:g} s", fill=(110, 110, 110))
    physics = env.physics
    draw.text((12, 6), f"t {t:6.1f} s   speed {info['speed']:5.2f} m/s   cycle "
                       f"{info['cycle_speed']:5.2f} m/s   error {info['speed_error']:+5.2f} "
                       f"m/s", fill=TEXT)
    draw.text((12, 20), f"speed [m/s]: cycle grey, preview orange, roller blue   robot: "
                        f"{physics.longitudinal} command, {1e3 * physics.delay_s:.0f} ms "
                        "delay", fill=(90, 90, 90))
    if note := _notes(env):
        draw.text((left + 6, top + 4), note, fill=TEXT)
    return np.asarray(img, dtype=np.uint8).copy()


# ------------------------------------------------------------------ render_mode="human"


class Window:
    """A pygame window that shows frames; ``show(frame, fps)`` waits so that frames
    follow each other at ``fps`` (the env's ``metadata["render_fps"]``: real time; 0 or
    None: as fast as frames come). Closing the window (its close button) stops the
    display for the rest of the env's life; ``close()`` closes it."""

    def __init__(self, title: str) -> None:
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        try:
            import pygame
        except ImportError:
            raise ImportError("render_mode='human' shows frames in a pygame window: pip "
                              "install 'vdsim-gym[render]' (or render_mode='rgb_array' for "
                              "frames as arrays)", name="pygame") from None
        self._pg = pygame
        pygame.display.init()
        self.title = title
        self.screen: Any = None
        self.clock = pygame.time.Clock()
        self.closed = False

    def show(self, frame: np.ndarray, fps: float | None) -> None:
        if self.closed:
            return
        pg = self._pg
        h, w = frame.shape[:2]
        if self.screen is None or self.screen.get_size() != (w, h):
            self.screen = pg.display.set_mode((w, h))
            pg.display.set_caption(self.title)
        if pg.event.get(pg.QUIT):  # the user closed the window
            self.close()
            return
        pg.event.pump()
        surface = pg.image.frombuffer(np.ascontiguousarray(frame).tobytes(), (w, h), "RGB")
        self.screen.blit(surface, (0, 0))
        pg.display.flip()
        if fps:
            self.clock.tick(fps)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._pg.display.quit()



__all__ = ["HEIGHT_PX", "PATH_HEIGHT_PX", "PATH_WIDTH_PX", "WIDTH_PX", "Window", "WorldView",
           "acc_frame", "body_outline", "draw_scene", "dyno_frame", "path_frame", "scale_bar"]
