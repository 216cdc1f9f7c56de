"""DoubleLaneChangeEnv: a double lane change through cone gates at speed."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from vdsim_gym._checks import is_real
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.courses import dlc_course
from vdsim_gym.envs.path_env import SHARED_ARGS, SHARED_DOC, PathTrackingEnv
from vdsim_gym.errors import ConfigError

# Fastest entry speed [m/s] (252 km/h): past the tyres' grip on every preset's line by far.
MAX_SPEED = 70.0


class DoubleLaneChangeEnv(PathTrackingEnv):
    """Double lane change (ISO 3888 style) at a set speed.

    ## Description

    The vehicle enters a cone lane at ``speed``, changes into the offset lane and back,
    following the reference path of ``vdsim_gym.envs.courses.dlc_course(preset)``. Cone
    gates are scaled with the vehicle's ``body_width``. The agent steers and drives; the
    reference speed is ``speed`` throughout.
    """

    __doc__ = (__doc__ or "") + SHARED_DOC + """
    ## Starting State

    On the reference path at s = 0 (the lane's lead-in) with a seeded uniform offset of
    +-0.05 m lateral and +-0.5 deg heading, vx = ``speed``, vy = r = 0, wheels rolling.

    ## Arguments

    ``gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0, ...)``

    - ``preset="iso3888_1"``: "iso3888_1", "iso3888_2" or "lane_change_3p5_30".
    - ``speed=20.0``: entry and reference speed [m/s], in (0, 70].
    - ``time_limit="default"``: max(15 s, 1.5 x the course length / ``speed``), so the
      course can be driven to its end at any speed (15 s at 20 m/s, 54 s at 5 m/s on
      ISO 3888-1); seconds, or None for none.
""" + SHARED_ARGS + """
    ## Version History

    - v0: initial version.
"""

    # The default time limit: the course at the entry speed with room for slower drivers
    # (1.5 x its length / speed, at least 15 s: ~180 m take ~9 s at 20 m/s). A fixed 15 s
    # cut the baseline at 150 m of 180 at 10 m/s and at 75 m at 5 m/s.
    DEFAULT_TIME_LIMIT = 15.0
    TIME_LIMIT_MARGIN = 1.5  # [-] on length / speed
    RESETS_IN_CORE = True  # one course: the start is the whole draw (PathTask::draw_start)

    def __init__(self, *, preset: str = "iso3888_1", speed: float = 20.0, **kwargs: Any) -> None:
        time_limit = kwargs.get("time_limit", "default")
        if not is_real(speed):
            raise ConfigError(f"speed must be a number of m/s, got {type(speed).__name__} "
                              f"{speed!r}; e.g. speed=20.0 (72 km/h) for ISO 3888-1")
        if not math.isfinite(speed) or not 0 < speed <= MAX_SPEED:
            raise ConfigError(f"speed must be in (0, {MAX_SPEED:g}] m/s, got {speed!r}; "
                              "e.g. 20.0 (72 km/h) for ISO 3888-1")
        super().__init__(**kwargs)
        self.preset = preset
        self.speed = float(speed)
        v = self.vehicle
        self._course = _cached_dlc_course(
            preset, v.body_width, self.speed,
            (v.cg_to_front + v.front_overhang, v.cg_to_rear + v.rear_overhang), self.cone_radius,
        )
        if isinstance(time_limit, str) and time_limit == "default":
            self.time_limit = self.course_time_limit(self._course.length, self.speed)
            self._set_time_limit_ticks()
        self._set_course(self._course)  # on the core from the start: it resets in C++ too

    def _after_core_rebuild(self) -> None:
        self._set_course(self._course)

    @classmethod
    def course_time_limit(cls, length: float, speed: float) -> float:
        """The default time limit [s] of a course ``length`` [m] entered at ``speed`` [m/s]:
        max(15 s, 1.5 length / speed)."""
        return max(cls.DEFAULT_TIME_LIMIT, cls.TIME_LIMIT_MARGIN * length / speed)

    def _next_course(self) -> Course:
        return self._course


@lru_cache(maxsize=32)
def _cached_dlc_course(preset: str, body_width: float, speed: float,
                       body_extent: tuple[float, float], cone_radius: float) -> Course:
    """Built once per parameter set: the smooth reference line is an optimization (~12 ms),
    and a vector env builds one env per batch row. Course is frozen; envs only read it."""
    return dlc_course(preset, vehicle_width=body_width, speed=speed, body_extent=body_extent,
                      cone_radius=cone_radius)
