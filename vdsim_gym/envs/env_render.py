"""The rendering of an env (a part of ``CoreEnv``, split from core_env.py by job): the
render mode and its state (``_init_render``), ``render`` (the task's frame as an array, or
shown in a pygame window) and ``close`` (the window)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.errors import UnsupportedRenderModeError


class EnvRender(gym.Env[np.ndarray, np.ndarray]):
    """The rendering part of ``CoreEnv`` (its base); a task that renders lists its modes
    (``metadata["render_modes"]``) and defines ``_frame``."""

    def _init_render(self, render_mode: str | None) -> None:
        """The render mode, checked against the task's ``metadata["render_modes"]``, and
        the render state (what ``CoreEnv.__init__`` sets first)."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UnsupportedRenderModeError(
                f"{type(self).__name__}: render_mode must be None or one of "
                f"{self.metadata['render_modes']}, got {render_mode!r} (a TypeError, so "
                "that stable-baselines3's make_vec_env retries without it)")
        self.render_mode = render_mode
        # Short labelled notes a frame shows (e.g. {"mode": "follow"}: acc_pid sets its
        # mode on the env it was built for); anyone may set or clear them.
        self.render_notes: dict[str, Any] = {}
        # The human window (the frames read the command in force and the pending ones
        # from the core's schedule).
        self._window: Any = None
        # render_mode="human": wait between frames to show the episode at real time.
        self.render_real_time = True

    def render(self) -> Any:
        """``render_mode="rgb_array"``: this moment's frame, an (H, W, 3) uint8 array
        (the task's ``_frame``, vdsim_gym.render.frames); ``"human"``: the frame
        shown in a pygame window at ``metadata["render_fps"]`` (real time;
        ``render_real_time = False``: as fast as the loop runs), drawn after every reset
        and step, returns None; no render mode: None."""
        if self.render_mode is None:
            return None
        frame = self._frame()
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            from vdsim_gym.render.frames import Window  # pygame only for "human"

            self._window = Window(f"{type(self).__name__} (vdsim_gym)")
        self._window.show(frame, self.metadata["render_fps"] if self.render_real_time else None)
        return None

    def _frame(self) -> np.ndarray:
        """The task's frame now (a task that lists render modes defines it)."""
        raise NotImplementedError(f"{type(self).__name__} does not render")

    def close(self) -> None:
        """Closes the human window if one is open; the env stays usable."""
        if self._window is not None:
            self._window.close()
            self._window = None
        super().close()


__all__ = ["EnvRender"]
