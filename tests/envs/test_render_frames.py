"""Every env renders (vdsim_gym.render.frames): ``rgb_array`` frames declared in
metadata with render_fps from the control period, their size, dtype and content (the
colours of what each env draws where it draws it); the path frame's command in force and
pending ones against the core's command schedule; ``human`` in a headless pygame window
(SDL_VIDEODRIVER=dummy) with its real-time pacing and its missing-extra error;
Gymnasium's RecordVideo and SB3's make_vec_env on SubprocVecEnv for every env."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym
from vdsim_gym.render import frames as rf
from vdsim_gym.render.frames import (
    CONE,
    CONE_HIT,
    EGO,
    HEIGHT_PX,
    LEAD,
    PATH_HEIGHT_PX,
    PATH_WIDTH_PX,
    PREVIEW,
    WIDTH_PX,
)

ENV_IDS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0")
SIZES = {"VDSim-DLC-v0": (PATH_HEIGHT_PX, PATH_WIDTH_PX),
         "VDSim-PathFollow-v0": (PATH_HEIGHT_PX, PATH_WIDTH_PX),
         "VDSim-ACC-v0": (HEIGHT_PX, WIDTH_PX), "VDSim-Dyno-v0": (HEIGHT_PX, WIDTH_PX)}


def _has(frame: np.ndarray, color) -> bool:
    return bool(np.any(np.all(frame == np.array(color, np.uint8), axis=-1)))


def _count(frame: np.ndarray, color) -> int:
    return int(np.count_nonzero(np.all(frame == np.array(color, np.uint8), axis=-1)))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_every_env_declares_both_modes_and_renders_an_rgb_frame(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    assert env.metadata["render_modes"] == ["human", "rgb_array"]
    assert env.metadata["render_fps"] == round(1 / env.unwrapped.control_period)
    env.reset(seed=0)
    first = env.render()
    for _ in range(5):
        env.step(env.action_space.sample())
    frame = env.render()
    assert frame.shape == (*SIZES[env_id], 3) and frame.dtype == np.uint8
    assert frame.flags["C_CONTIGUOUS"] and frame.flags["OWNDATA"]
    assert _has(frame, EGO)
    assert not np.array_equal(first, frame)  # the time (at least) moved on
    plain = gym.make(env_id)
    plain.reset(seed=0)
    assert plain.render() is None  # no render_mode: nothing


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gymnasium_env_checker_accepts_the_render_modes(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id, render_mode="rgb_array").unwrapped)  # render check included


def test_path_frame_draws_the_course_the_car_and_hit_cones():
    env = gym.make("VDSim-DLC-v0", render_mode="rgb_array", terminate_on_cone=False)
    env.reset(seed=0)
    frame = env.render()
    assert _has(frame, CONE) and not _has(frame, CONE_HIT)  # the first gate ahead
    assert _count(frame, EGO) > 200  # the body (about 4.7 x 1.8 m at 10.7 px/m)
    hit = False
    for _ in range(200):  # a slight right steer drifts into the first gates' cones
        *_, term, trunc, info = env.step(np.array([-0.02, 0.0], np.float32))
        if info["cone_hits"]:
            hit = True
            break
    assert hit
    assert _has(env.render(), CONE_HIT)


def test_path_frame_shows_the_command_in_force_and_the_pending_one_as_the_core_has_them():
    """Queue policy, 30 ms on a 20 ms period: commands wait in the core's schedule. The
    core's record (``command_in_force``, ``pending_commands``) agrees at every step with a
    slow reference built from the steps' integer sample and apply ticks in info: after
    advancing to tick T, a command applied at tick a < T is in force (the newest such),
    one with a >= T is pending (the core applies at the start of a substep). The frame
    names both."""
    from vdsim_gym.controllers import stanley_pi

    env = gym.make("VDSim-DLC-v0", render_mode="rgb_array",
                   latency=vdsim_gym.LatencyModel.fixed(0.03), overrun="queue")
    base = env.unwrapped
    policy = stanley_pi(env)
    obs, _ = env.reset(seed=0)
    assert base._core.command_in_force()[0] == -1  # the reset command
    sent = []  # (sample_tick, apply_tick, plant command) of every step
    for k in range(60):
        action = policy.predict(obs)[0]
        obs, _, _, _, info = env.step(action)
        assert isinstance(info["apply_tick"], int) and isinstance(info["sample_tick"], int)
        assert info["apply_tick"] * base.substep_dt == pytest.approx(info["t_apply"], abs=1e-12)
        sent.append((info["sample_tick"], info["apply_tick"], base.action_to_command(action)))
        now = base._core.tick
        applied = [c for c in sent if c[1] < now]
        waiting = [c for c in sent if c[1] >= now]
        pending = base._core.pending_commands
        assert [p[:2] for p in pending] == [c[:2] for c in waiting] and len(waiting) >= 1
        for p, c in zip(pending, waiting, strict=True):
            assert np.allclose(p[2:], c[2])
        k_sample, k_apply, steer, lon = base._core.command_in_force()
        if not applied:  # the first command applies 10 ms into the second step
            assert k == 0 and k_sample == -1 and (steer, lon) == (0.0, 0.0)
            continue
        assert (k_sample, k_apply) == applied[-1][:2]
        assert np.allclose((steer, lon), applied[-1][2])
        assert (steer, lon) == base._core.session.command
        # during a later substep: the newest pending command due by then
        later = base._core.command_in_force(waiting[0][1])
        assert later[:2] == waiting[0][:2]
        assert base._core.command_in_force(now)[:2] == (
            waiting[0][:2] if waiting[0][1] == now else applied[-1][:2])
    lines, in_force, pending = rf._command_lines(base, base._core.time)
    assert lines[0].startswith("in force:") and lines[1].startswith("pending:")
    # in force: sampled before the observation, applied already; pending: applies later
    t = base._core.time
    assert in_force[0] < in_force[1] < t < pending[1] and pending[0] < t
    assert _has(env.render(), PREVIEW)  # the pending command's bar on the time strip


def test_acc_frame_shows_the_lead_and_the_mode_of_the_baseline():
    from vdsim_gym.controllers import acc_pid

    env = gym.make("VDSim-ACC-v0", scenario="follow", render_mode="rgb_array")
    policy = acc_pid(env)
    obs, _ = env.reset(seed=0)
    for _ in range(10):
        obs, *_ = env.step(policy.predict(obs)[0])
    base = env.unwrapped
    assert base.render_notes["mode"] in ("cruise", "follow", "emergency")
    frame = env.render()
    assert _has(frame, EGO) and _has(frame, LEAD)
    base.render_notes.clear()
    assert not np.array_equal(frame, env.render())  # the mode line is drawn


def test_dyno_frame_shows_the_cycle_preview_speed_and_pedals():
    env = gym.make("VDSim-Dyno-v0", render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.full(env.action_space.shape, 0.3, np.float32))
    frame = env.render()
    assert frame.shape == (HEIGHT_PX, WIDTH_PX, 3)
    assert _has(frame, PREVIEW) and _has(frame, EGO) and _has(frame, LEAD)


def test_scale_bar_has_a_round_length_within_its_budget():
    from PIL import Image, ImageDraw

    for k in (0.7, 3.3, 10.7, 42.0):
        img = Image.new("RGB", (400, 40), (255, 255, 255))
        rf.scale_bar(ImageDraw.Draw(img), k, 10, 20, max_px=120)
        row = np.asarray(img)[20]
        px = np.flatnonzero(np.all(row == np.array(rf.TEXT, np.uint8), axis=-1))
        length_m = (px.max() - px.min()) / k
        mantissa = length_m / 10 ** np.floor(np.log10(length_m))
        assert px.max() - px.min() <= 121
        assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 0.15, (k, length_m)


def test_world_view_draws_only_the_runs_in_view_and_never_joins_across_a_gap():
    from PIL import Image, ImageDraw

    view = rf.WorldView(0.0, 0.0, 10.0, (0, 0, 200, 100))  # 20 m x 10 m around the origin
    img = Image.new("RGB", (200, 100), (255, 255, 255))
    # out of view to the right and back: two runs; the gap (far away) must stay empty
    xy = np.array([[-9.0, 2.0], [0.0, 2.0], [50.0, 2.0], [50.0, -2.0], [0.0, -2.0],
                   [-9.0, -2.0]])
    view.polyline(ImageDraw.Draw(img), xy, (0, 0, 0))
    a = np.asarray(img)
    assert a[30, 50].sum() == 0 and a[70, 50].sum() == 0  # y = +2 and -2 drawn
    assert a[50, 50].sum() == 3 * 255  # nothing at y = 0 between them
    assert view.point(1.0, 1.0) == (110.0, 40.0)  # x right, y up


# ------------------------------------------------------------------ human


@pytest.fixture
def headless(monkeypatch):
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_human_mode_shows_every_frame_at_real_time_in_a_window(env_id, headless):
    import pygame

    env = gym.make(env_id, render_mode="human")
    base = env.unwrapped
    env.reset(seed=0)  # human: drawn after reset and every step
    window = base._window
    ticks = []
    window.clock = type("Clock", (), {"tick": lambda self, fps: ticks.append(fps)})()
    for _ in range(3):
        env.step(env.action_space.sample())
    assert env.render() is None
    assert ticks == [env.metadata["render_fps"]] * 4  # real time: the control rate
    assert pygame.display.get_surface().get_size() == SIZES[env_id][::-1]
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)
    assert np.array_equal(shown, base._frame())
    base.render_real_time = False
    env.step(env.action_space.sample())
    assert len(ticks) == 4  # as fast as the loop runs
    env.close()
    assert base._window is None and not pygame.display.get_init()
    env.reset(seed=1)  # usable after close: a new window
    assert base._window is not None
    env.close()


def test_human_window_closed_by_the_user_stops_showing(headless):
    import pygame

    env = gym.make("VDSim-ACC-v0", render_mode="human")
    env.reset(seed=0)
    window = env.unwrapped._window
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    env.step(env.action_space.sample())
    assert window.closed
    env.step(env.action_space.sample())  # the env goes on without a window
    env.close()


def test_human_mode_without_pygame_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)
    env = gym.make("VDSim-Dyno-v0", render_mode="human")
    with pytest.raises(ImportError, match=r"pip install 'vdsim-gym\[render\]'"):
        env.reset(seed=0)
    env.close()


# ------------------------------------------------------------------ clients


def _read_video(path) -> tuple[tuple[int, int], list[np.ndarray]]:
    """(height, width) and the RGB frames of a video, decoded by the ffmpeg that
    imageio-ffmpeg ships (moviepy's dependency)."""
    import re
    import subprocess

    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    run = subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-v", "info", "-i", str(path),
                          "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                         capture_output=True, check=True)
    w, h = map(int, re.search(rb"Video: .*?, (\d+)x(\d+)", run.stderr).groups())
    raw = np.frombuffer(run.stdout, np.uint8)
    assert raw.size % (h * w * 3) == 0
    return (h, w), list(raw.reshape(-1, h, w, 3))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_record_video_writes_an_episode_for_every_env(env_id, tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = gym.make(env_id, render_mode="rgb_array",
                   time_limit=2.0 if env_id == "VDSim-Dyno-v0" else 0.3)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda e: True,
                      disable_logger=True)
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        *_, term, trunc, _ = env.step(env.action_space.sample())
        steps, done = steps + 1, term or trunc
    env.close()
    (video,) = (tmp_path / "videos").glob("*.mp4")
    size, frames = _read_video(video)
    assert size == SIZES[env_id]
    assert len(frames) == steps + 1  # the reset frame and one a step
    # content survives the encoding: the ego's blue is where the env draws it
    last = frames[-1].astype(int)
    blue = np.all(np.abs(last - np.array(EGO)) < 40, axis=-1)
    assert np.count_nonzero(blue) > 50


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_sb3_make_vec_env_on_subprocesses_renders_every_env(env_id):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # "module:id": a forkserver worker imports vdsim_gym (which registers the ids) itself
    venv = make_vec_env(f"vdsim_gym:{env_id}", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    try:
        assert venv.render_mode == "rgb_array"
        venv.reset()
        venv.step(np.stack([venv.action_space.sample() for _ in range(2)]))
        h, w = SIZES[env_id]
        images = venv.get_images()
        assert [im.shape for im in images] == [(h, w, 3)] * 2
        tiled = venv.render()
        assert tiled.shape == (2 * h, w, 3)  # SB3 tiles two frames in a column
        assert np.array_equal(tiled[:h], images[0]) and np.array_equal(tiled[h:], images[1])
        assert _has(images[0], EGO) and _has(images[1], EGO)
    finally:
        venv.close()
