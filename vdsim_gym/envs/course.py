"""Course: a reference path with a speed profile and optional cone gates.

Built by vdsim_gym.envs.courses (double lane change presets, random smooth paths) and
consumed by the path-tracking environments and the C++ path task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError


@dataclass(frozen=True)
class Gate:
    """A pair of cones the vehicle must pass between, for reporting."""

    x: float  # longitudinal position of the gate [m]
    y_left: float  # left lane limit [m]; the cone base touches it from outside
    y_right: float  # right lane limit [m]
    section: int  # section number of the standard's layout (1-based)


@dataclass(frozen=True)
class Course:
    name: str
    path: np.ndarray  # (M, 2) reference polyline in the ground frame [m], M >= 2
    speed: np.ndarray  # (M,) reference speed at each path point [m/s]
    cones: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))  # (K, 2) cone centres [m]
    gates: tuple[Gate, ...] = ()
    corridor_half_width: float = 3.0  # |e_y| beyond this ends the episode [m]
    start_speed: float = 20.0  # initial vx [m/s]

    def __post_init__(self) -> None:
        path = np.asarray(self.path, dtype=float)
        speed = np.asarray(self.speed, dtype=float)
        cones = np.asarray(self.cones, dtype=float).reshape(-1, 2)
        if path.ndim != 2 or path.shape[1] != 2 or path.shape[0] < 2:
            raise ConfigError(f"Course.path must have shape (M >= 2, 2), got {path.shape}")
        if speed.shape != (path.shape[0],):
            raise ConfigError(f"Course.speed must have shape ({path.shape[0]},), got {speed.shape}")
        if not (np.all(np.isfinite(path)) and np.all(np.isfinite(speed))):
            raise ConfigError("Course.path and Course.speed must be finite")
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "speed", speed)
        object.__setattr__(self, "cones", cones)

    def core_data(self) -> Any:
        """The core's ``CourseData`` of this course (path, cones, corridor, start speed),
        built once and shared by every env that drives it (``set_course_data``: one copy
        for N envs)."""
        data = self.__dict__.get("_core_data")
        if data is None:
            from vdsim_gym import _core

            try:  # the path's checks (finite, no repeated points) are the C++ ones
                data = _core.CourseData(self.path, self.speed, self.cones,
                                        float(self.corridor_half_width),
                                        float(self.start_speed))
            except ValueError as exc:
                raise ConfigError(f"course {self.name!r}: {exc}") from None
            object.__setattr__(self, "_core_data", data)
        return data

    @classmethod
    def _trusted(cls, name: str, path: np.ndarray, speed: np.ndarray,
                 corridor_half_width: float, start_speed: float) -> Course:
        """A course without cones from arrays already as __post_init__ leaves them (float
        (M, 2) path and (M,) speed, finite): for random_course, whose checks they pass by
        construction and whose core data checks the path again."""
        course = object.__new__(cls)
        for key, value in (("name", name), ("path", path), ("speed", speed),
                           ("cones", np.zeros((0, 2))), ("gates", ()),
                           ("corridor_half_width", corridor_half_width),
                           ("start_speed", start_speed)):
            object.__setattr__(course, key, value)
        return course

    def __getstate__(self) -> dict[str, Any]:  # pickles and copies without the core data
        return {k: v for k, v in self.__dict__.items() if k != "_core_data"}

    @property
    def length(self) -> float:
        """Arc length of the reference path [m] (computed once: the course is frozen)."""
        length = self.__dict__.get("_length")
        if length is None:
            length = float(np.sum(np.hypot(*np.diff(self.path, axis=0).T)))
            object.__setattr__(self, "_length", length)
        return length
