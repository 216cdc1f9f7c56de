"""Frames of the car-following and dyno envs as RGB arrays, drawn from the env's arrays
with Pillow (no figure layout per frame: about a millisecond a frame).

Imported lazily by ``ACCEnv.render`` and ``DynoEnv.render``; Pillow comes with the
``plot`` extra (matplotlib needs it too).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

WIDTH_PX, HEIGHT_PX = 640, 240
BG, ROAD, LINE, TEXT = (250, 250, 250), (90, 90, 95), (235, 235, 235), (20, 20, 20)
EGO, LEAD, DESIRED, PREVIEW = (31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14)


def _image() -> tuple[Any, Any]:
    try:
        from PIL import Image, ImageDraw
    except ImportError:  # pragma: no cover - pillow comes with matplotlib
        raise ImportError("rendering needs Pillow: pip install 'vdsim-gym[plot]'") from None
    img = Image.new("RGB", (WIDTH_PX, HEIGHT_PX), BG)
    return img, ImageDraw.Draw(img)


def _info(env: Any) -> dict[str, float]:
    return dict(zip(env.info_names, env._info.tolist(), strict=True))


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
    for k, text in enumerate(lines):
        draw.text((12, 12 + 18 * k), text, fill=TEXT)
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
    k0, k1 = max(0, int((t - behind_s) / dt)), min(len(speeds), int((t + ahead_s) / dt) + 1)
    window = speeds[k0:k1]
    v_max = max(5.0, float(np.max(speeds)), info["speed"]) * 1.1
    left, right, top, bottom = 50, WIDTH_PX - 120, 40, HEIGHT_PX - 25

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
    draw.text((12, 10), f"t {t:6.1f} s   speed {info['speed']:5.2f} m/s   cycle "
                        f"{info['cycle_speed']:5.2f} m/s   error {info['speed_error']:+5.2f} "
                        f"m/s", fill=TEXT)
    return np.asarray(img, dtype=np.uint8).copy()


__all__ = ["HEIGHT_PX", "WIDTH_PX", "acc_frame", "dyno_frame"]
