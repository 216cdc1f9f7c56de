"""PathFollowEnv: random smooth paths and speed profiles, a new one every episode."""

from __future__ import annotations

import math
from typing import Any

from vdsim_gym._checks import is_real
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.courses import random_course
from vdsim_gym.envs.path_env import SHARED_ARGS, SHARED_DOC, PathTrackingEnv
from vdsim_gym.errors import ConfigError

# The longest random path [m] (a reset builds it whole: 0.09 s for 20 km here).
MAX_COURSE_LENGTH_M = 20_000.0

class PathFollowEnv(PathTrackingEnv):
    """Follow a random smooth path with a varying reference speed.

    ## Description

    Every ``reset`` draws a new course from ``vdsim_gym.envs.courses.random_course``
    with the env's ``np_random`` (so a seed fixes the course sequence): bounded
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
        super().__init__(**kwargs)
        self.course_length = float(course_length)
        self.speed_range = (lo, hi)

    def _next_course(self) -> Course:
        return random_course(self.np_random, length=self.course_length,
                             speed_range=self.speed_range)
