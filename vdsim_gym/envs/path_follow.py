"""PathFollowEnv: random smooth paths and speed profiles, a new one every episode."""

from __future__ import annotations

import math
from typing import Any

from vdsim_gym._checks import is_real
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.courses import (
    RANDOM_CORRIDOR_HALF_WIDTH,
    random_course_error,
    random_course_spec,
)
from vdsim_gym.envs.path_env import SHARED_ARGS, SHARED_DOC, PathTrackingEnv
from vdsim_gym.errors import ConfigError

# The longest random path [m] (a reset builds it whole: 0.09 s for 20 km here).
MAX_COURSE_LENGTH_M = 20_000.0

class PathFollowEnv(PathTrackingEnv):
    """Follow a random smooth path with a varying reference speed.

    ## Description

    Every ``reset`` draws a new course (``vdsim_gym.envs.courses.random_course``'s, drawn by
    the core) from the env's ``np_random`` (so a seed fixes the course sequence): bounded
    curvature, a speed profile within ``speed_range`` limited by lateral acceleration.
    No cones. Meant for training policies that generalize beyond one manoeuvre.
    """

    __doc__ = (__doc__ or "") + SHARED_DOC + """
    ## Starting State

    On the new path at s = 0 with a seeded uniform offset of +-0.05 m lateral and
    +-0.5 deg heading, vx = the course's start speed, vy = r = 0, wheels rolling.

    ## Arguments

    ``gym.make("VDSim-PathFollow-v0", course_length=300.0, speed_range=(8, 25), ...)``

    - ``course_length=300.0``: path length [m].
    - ``speed_range=(8.0, 25.0)``: bounds of the reference speed [m/s].
""" + SHARED_ARGS + """
    ## Version History

    - v0: initial version.
"""

    # 300 m at the lowest reference speed (8 m/s) takes 37.5 s.
    DEFAULT_TIME_LIMIT = 40.0

    def __init__(
        self,
        *,
        course_length: float = 300.0,
        speed_range: tuple[float, float] = (8.0, 25.0),
        **kwargs: Any,
    ) -> None:
        if not is_real(course_length) \
                or not math.isfinite(course_length) or course_length <= 0:
            raise ConfigError(f"course_length must be a positive number of m, got "
                              f"{course_length!r}")
        if course_length > MAX_COURSE_LENGTH_M:  # each reset builds the whole path
            raise ConfigError(f"course_length = {course_length!r} m is longer than the bound of "
                              f"{MAX_COURSE_LENGTH_M:g} m (a reset builds the whole path: "
                              "time and memory grow with it); use a shorter course")
        try:
            lo, hi = (float(v) for v in speed_range)
        except (TypeError, ValueError):
            raise ConfigError(
                f"speed_range must be (low, high) in m/s, got {speed_range!r}"
            ) from None
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ConfigError(f"speed_range must satisfy 0 < low <= high, got {speed_range!r}")
        self._course_spec = random_course_spec(length=float(course_length),
                                               speed_range=(lo, hi))
        super().__init__(**kwargs)
        self.course_length = float(course_length)
        self.speed_range = (lo, hi)

    RESETS_IN_CORE = True  # the course and the start are the core's draws

    def _new_core(self, physics: Any) -> Any:
        """The path core, set to draw a new random course every episode."""
        core = super()._new_core(physics)
        core.set_random_course(*self._course_spec, RANDOM_CORRIDOR_HALF_WIDTH)
        return core

    @property
    def course(self) -> Course | None:
        """This episode's course (None before the first reset): the one the core drew,
        as a Course (built from the core's path when first asked for after a reset)."""
        core: Any = self.__dict__.get("_core")
        serial = 0 if core is None else core.course_serial
        if serial == 0:
            return None
        view = self.__dict__.get("_course_view")
        if view is None or view[0] != serial or view[1] is not core:
            path, speed, start = core.course_arrays()
            view = (serial, core, Course._trusted("random", path, speed,
                                                  RANDOM_CORRIDOR_HALF_WIDTH, start))
            self.__dict__["_course_view"] = view
        return view[2]

    @course.setter
    def course(self, value: Course | None) -> None:
        """The core holds the course (PathTrackingEnv's assignments are its own)."""

    def _reset_task(self, seed: int | None) -> tuple[float, ...]:
        """The episode's course and start, drawn by the core (``PathTask::draw_start``
        with a random course: vdsim/random_course.hpp, then the start on it)."""
        try:
            return self._core.draw_start(self.np_random.bit_generator)
        except ValueError:
            raise random_course_error(self._course_spec, spacing=0.5) from None
