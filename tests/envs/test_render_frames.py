"""rgb_array frames of the ACC and Dyno envs (vdsim_gym.envs.render_frames): declared in
metadata with render_fps from the control period, the frame's size and dtype, and its
content (the ego's colour where the ego is, the lead's once a lead is present)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401
from vdsim_gym.envs.render_frames import EGO, HEIGHT_PX, LEAD, PREVIEW, WIDTH_PX


def _has(frame: np.ndarray, color) -> bool:
    return bool(np.any(np.all(frame == np.array(color, np.uint8), axis=-1)))


def test_acc_frames_show_ego_lead_and_desired_gap():
    env = gym.make("VDSim-ACC-v0", scenario="follow", render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    assert env.metadata["render_fps"] == round(1 / env.unwrapped.control_period)
    env.reset(seed=0)
    env.step(np.zeros(1, np.float32))
    frame = env.render()
    assert frame.shape == (HEIGHT_PX, WIDTH_PX, 3) and frame.dtype == np.uint8
    assert _has(frame, EGO) and _has(frame, LEAD)  # "follow" has its lead from the start
    plain = gym.make("VDSim-ACC-v0")
    plain.reset(seed=0)
    assert plain.render() is None  # no render_mode: nothing


def test_dyno_frames_show_the_cycle_preview_speed_and_pedals():
    env = gym.make("VDSim-Dyno-v0", render_mode="rgb_array")
    assert env.metadata["render_fps"] == round(1 / env.unwrapped.control_period)
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.full(env.action_space.shape, 0.3, np.float32))
    frame = env.render()
    assert frame.shape == (HEIGHT_PX, WIDTH_PX, 3)
    assert _has(frame, PREVIEW) and _has(frame, EGO) and _has(frame, LEAD)
