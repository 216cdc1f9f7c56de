"""How an env's episode ends (a part of ``CoreEnv``, split from core_env.py by job): the
flag bits every env core shares, a core spec's own (``task_flags``), the outcome they name
(``outcome``), the episode summary (``episode_summary``, ``summary_of``) and what an
episode end adds to info (``episode_end_info``; the task's extras: ``_episode_end``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vdsim_gym import _core

FLAGS: dict[str, int] = dict(_core.ENV_FLAGS)  # the bits every env core shares
TERMINATED, TRUNCATED, TIME_LIMIT = FLAGS["terminated"], FLAGS["truncated"], FLAGS["time_limit"]


def task_flags(spec: Any) -> tuple[tuple[str, int], ...]:
    """A core spec's own flag bits (name, bit), in the spec's order: all but the ones
    every env core shares (terminated, truncated, time_limit)."""
    return tuple((str(n), int(b)) for n, b in dict(spec.flags).items() if n not in FLAGS)


class EnvOutcome:
    """The episode-end part of ``CoreEnv`` (its base): the class attributes below are the
    task's to set, ``_core`` and ``summary_names`` are set by ``CoreEnv.__init__``."""

    _core: Any
    summary_names: tuple[str, ...]
    # Episode-summary fields (the core's summary_names) that are counts (reported as int).
    SUMMARY_INT_KEYS: tuple[str, ...] = ("steps",)
    # The task's own flag bits, (name, bit) in the order an outcome names them when
    # several are set: its core's spec (task_flags(XEnvCore.default_spec())).
    TASK_FLAGS: tuple[tuple[str, int], ...] = ()
    # What a truncation is called: by the env's time limit, and by the task itself (its
    # course, scenario or cycle ended).
    TIME_LIMIT_OUTCOME: str = "time_limit"
    TRUNCATED_OUTCOME: str = "truncated"

    def _episode_end(self, outcome: str | None, summary: dict[str, Any]) -> dict[str, Any]:
        """What an episode end adds to info besides ``outcome`` and ``episode_summary``
        (e.g. the path env's ``pass_speed``); values are Python scalars, the same type
        in every episode (Gymnasium's vector envs batch them by the first one seen)."""
        return {}

    def episode_summary(self) -> dict[str, Any]:
        """The episode so far, by name (``summary_names``): ``steps``, ``return`` (sum of
        rewards), ``time`` [s], then the task's fields; NaN where undefined."""
        return self.summary_of(self._core.summary())

    def summary_of(self, values: np.ndarray) -> dict[str, Any]:
        """A core's summary row (``summary()``: ``summary_names``) by name, counts as
        ints."""
        ints = self.SUMMARY_INT_KEYS
        return {name: int(v) if name in ints else v
                for name, v in zip(self.summary_names, values.tolist(), strict=True)}

    def episode_end_info(self, flags: int, summary: np.ndarray | None = None
                         ) -> dict[str, Any]:
        """What an episode end adds to ``info``: ``outcome``, the task's extras and
        ``episode_summary`` (``outcome`` first, then ``episode_summary()``). ``summary``:
        another core's summary row instead of this env's (the vector env reports the same
        for its ended rows, from their cores)."""
        outcome = self.outcome(flags)
        fields = self.episode_summary() if summary is None else self.summary_of(summary)
        return {"outcome": outcome, **self._episode_end(outcome, fields),
                "episode_summary": {"outcome": outcome, **fields}}

    @classmethod
    def outcome(cls, flags: int) -> str | None:
        """Why the env ended an episode, from the core's flag bits (None: it goes on): the
        first of the task's flags (``TASK_FLAGS``, the spec's order) set in a termination,
        else "terminated"; ``TIME_LIMIT_OUTCOME`` for the env's time limit,
        ``TRUNCATED_OUTCOME`` for the task's own truncation."""
        if flags & TERMINATED:
            return next((name for name, bit in cls.TASK_FLAGS if flags & bit), "terminated")
        if flags & TIME_LIMIT:
            return cls.TIME_LIMIT_OUTCOME
        if flags & TRUNCATED:
            return cls.TRUNCATED_OUTCOME
        return None


__all__ = ["FLAGS", "TERMINATED", "TIME_LIMIT", "TRUNCATED", "EnvOutcome", "task_flags"]
