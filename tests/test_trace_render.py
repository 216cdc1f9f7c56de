"""The trace renderer (vdsim_gym.render.trace, ``vdsim-gym render``): the static figure
drawn once and the moving parts per frame at the right pixels (time cursor, bodies, the
close-up), each run's own course when runs drove different courses, animations streamed
frame by frame to a GIF (one palette, every frame in the file) or an MP4, written
atomically, with progress on stderr and clear errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.render.frames import WorldView
from vdsim_gym.traces.trace import attach_overlay, read_trace

pytest.importorskip("matplotlib")
from vdsim_gym.render import trace as trace_render  # noqa: E402
from vdsim_gym.render.trace import _Figure, render_gif, render_png  # noqa: E402


def hold(obs, t):
    return (0.02, 800.0 * (20.0 - obs["vx"]))


def _trace(tmp_path, name, duration=1.0, **kw):
    path = tmp_path / f"{name}.vdtrace"
    ClosedLoopEval(plant_kwargs=dict(level="L2", longitudinal="force"), controller=hold,
                   control_period=0.02, duration=duration, initial_state={"vx": 18.0},
                   trace_path=path, **kw).run()
    return path


def _course(path, shift_y, cones):
    attach_overlay(path, {"name": "reference", "kind": "path2d",
                          "points": [[0.0, shift_y], [40.0, shift_y]]})
    attach_overlay(path, {"name": "cones", "kind": "path2d", "style": "points",
                          "points": cones})


def _near(image: np.ndarray, uv, color, r=4) -> bool:
    u, v = (int(round(c)) for c in uv)
    patch = image[max(0, v - r): v + r + 1, max(0, u - r): u + r + 1].astype(int)
    return bool(np.any(np.all(np.abs(patch - np.array(color)) <= 30, axis=-1)))


def test_frames_move_the_cursor_and_the_car_over_one_static_image(tmp_path):
    a = _trace(tmp_path, "a")
    fig = _Figure([read_trace(a)], ["a"], "a")
    try:
        bg = fig.background.copy()
        f0, f1 = np.asarray(fig.frame(0.1)), np.asarray(fig.frame(0.9))
        assert np.array_equal(fig.background, bg)  # frames never touch the static image
        assert f0.shape == bg.shape and not np.array_equal(f0, f1)
        for name, (_left, top, _right, bottom) in fig.panel_boxes.items():
            u = fig.panel_trans[name].transform([[0.9, 0.0]])[0, 0]
            col = f1[int(top) + 5: int(bottom) - 5, int(round(u))]
            assert np.all(col.max(axis=-1) < 60), name  # the black cursor at t = 0.9
        tr = read_trace(a)
        i = int(np.searchsorted(tr["t"], 0.9))
        x, y = tr["pose"][i, :2]
        u, v = fig.bird_trans.transform([[x, y]])[0]
        assert _near(f1, (u, fig.height - v), fig.rgb[0])  # the body where the car is
        left, top, right, bottom = fig.zoom_box  # the close-up centred on the car
        centre = f1[(top + bottom) // 2 - 15:(top + bottom) // 2 + 15,
                    (left + right) // 2 - 30:(left + right) // 2 + 30]
        assert np.any(np.all(np.abs(centre.astype(int) - fig.rgb[0]) <= 30, axis=-1))
    finally:
        fig.close()


def test_runs_on_different_courses_each_get_their_course(tmp_path):
    a, b = _trace(tmp_path, "a"), _trace(tmp_path, "b")
    _course(a, 0.0, [[10.0, 2.0], [20.0, 2.0]])
    _course(b, -6.0, [[15.0, -3.0], [30.0, -9.0]])
    fig = _Figure([read_trace(a), read_trace(b)], ["a", "b"], "ab")
    try:
        assert len(fig.courses) == 2
        img = fig.background
        for cone, color in (((10.0, 2.0), fig.rgb[0]), ((30.0, -9.0), fig.rgb[1])):
            u, v = fig.bird_trans.transform([cone])[0]
            assert _near(img, (u, fig.height - v), color), cone  # in its run's colour
        # the close-up too: centred on the first run's car at t = 0.5
        frame = np.asarray(fig.frame(0.5))
        tr = read_trace(a)
        x0, y0 = tr["pose"][int(np.searchsorted(tr["t"], 0.5)), :2]
        left, top, right, bottom = fig.zoom_box
        view = WorldView(x0, y0, fig.zoom_k, (0, 0, right - left, bottom - top))
        for cone, color in (((10.0, 2.0), fig.rgb[0]), ((15.0, -3.0), fig.rgb[1])):
            u, v = view.point(*cone)
            assert _near(frame, (left + u, top + v), color, r=2), cone
    finally:
        fig.close()
    _course(b, 0.0, [[10.0, 2.0], [20.0, 2.0]])  # the same course: drawn once
    fig = _Figure([read_trace(a), read_trace(b)], ["a", "b"], "ab")
    assert len(fig.courses) == 1
    fig.close()


def test_gif_streams_every_frame_to_the_file_as_it_is_drawn(tmp_path, monkeypatch):
    from PIL import Image

    a = _trace(tmp_path, "a")
    sizes = []
    real_add = trace_render._GifStream.add

    def add(self, image):
        real_add(self, image)
        sizes.append(self.fh.tell())

    monkeypatch.setattr(trace_render._GifStream, "add", add)
    out = render_gif([a], tmp_path / "run.gif", fps=20)
    assert len(sizes) == 21  # 1 s at 20 frames a second, and t = 0
    assert sizes[0] > 0 and all(b > a for a, b in itertools.pairwise(sizes))  # written as drawn
    with Image.open(out) as gif:
        assert gif.n_frames == 21 and gif.info["duration"] == 50 and gif.info["loop"] == 0
        gif.seek(0)
        first = np.asarray(gif.convert("RGB"))
        gif.seek(20)
        last = np.asarray(gif.convert("RGB"))
    fig = _Figure([read_trace(a)], ["run"], "run")
    try:
        want = np.asarray(fig.frame(1.0))
    finally:
        fig.close()
    assert last.shape == want.shape and not np.array_equal(first, last)
    # one palette of 255 colours: the frame comes back within quantization error
    assert np.mean(np.abs(last.astype(int) - want)) < 3.0
    assert not list(tmp_path.glob(".run.gif.*"))  # no temporary file left


def test_speed_and_max_frames(tmp_path):
    from PIL import Image

    a = _trace(tmp_path, "a")
    with Image.open(render_gif([a], tmp_path / "fast.gif", fps=10, speed=2.0)) as gif:
        assert gif.n_frames == 6  # 1 s at 0.2 s a frame
    with Image.open(render_gif([a], tmp_path / "capped.gif", fps=10, max_frames=4)) as gif:
        assert gif.n_frames == 4


def test_mp4_output(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    a = _trace(tmp_path, "a", duration=0.3)
    out = render_gif([a], tmp_path / "run.mp4", fps=10)
    assert out.read_bytes()[4:8] == b"ftyp"


def test_bad_output_and_numbers_are_named(tmp_path):
    a = _trace(tmp_path, "a", duration=0.2)
    with pytest.raises(ValueError, match="must end in .gif or .mp4"):
        render_gif([a], tmp_path / "run.avi")
    with pytest.raises(ValueError, match="fps and speed must be positive"):
        render_gif([a], tmp_path / "run.gif", fps=float("nan"))


def test_an_interrupted_render_leaves_no_file(tmp_path, monkeypatch):
    a = _trace(tmp_path, "a", duration=0.2)
    calls = []

    def boom(self, image):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(trace_render._GifStream, "add", boom)
    with pytest.raises(KeyboardInterrupt):
        render_gif([a], tmp_path / "run.gif")
    assert list(tmp_path.iterdir()) == [a]


def test_cli_progress_goes_to_stderr(tmp_path, capsys):
    from vdsim_gym.cli import main

    a = _trace(tmp_path, "a", duration=0.3)
    assert main(["render", str(a), "--out", str(tmp_path / "a.gif")]) == 0
    out, err = capsys.readouterr()
    assert "wrote" in out and "render" in err and "frame" in err
    assert main(["render", str(a), "--out", str(tmp_path / "b.gif"), "--no-progress"]) == 0
    assert "frame" not in capsys.readouterr().err


def test_png_frame(tmp_path):
    from PIL import Image

    a = _trace(tmp_path, "a", duration=0.3)
    with Image.open(render_png([a], tmp_path / "f.png", at=0.2)) as img:
        assert img.format == "PNG" and img.mode == "RGB"
