"""The generators of an env's episodes (a part of ``CoreEnv``, split from core_env.py by
job): a vector env's row taking over the generators its C++ session seeded
(``_take_row_rng``, for ``CoreEnv.np_random``), the latency seed stream derived from the
reset seed (``_latency_seed``), what a reset in C++ draws from (``episode_rng``,
``resets_in_core``) and the state a seeded reset in the vector env leaves
(``_reset_in_vector``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym.config.latency import LatencyModel

# Tag of the latency seed stream derived from the reset seed (independent of np_random).
_LATENCY_STREAM = 0x1A7E_5EED


def _numpy_pcg64(state: dict[str, Any]) -> np.random.Generator:
    """A numpy Generator on a PCG64 in ``state`` (numpy's PCG64.state)."""
    bit_generator = np.random.PCG64()
    bit_generator.state = state  # type: ignore[assignment]
    return np.random.Generator(bit_generator)


class EnvSeeding:
    """The episode-generator part of ``CoreEnv`` (its base): the attributes below are the
    env's, set by ``CoreEnv``."""

    # Whether the task's whole episode draw is its core's draw_start (the start drawn in
    # C++ from np_random; nothing drawn in Python): the vector env then resets its rows
    # in C++ (resets_in_core).
    RESETS_IN_CORE: bool = False
    _row_rng: tuple[Any, int] | None
    _episode_drawn: bool
    _np_random: np.random.Generator | None
    _np_random_seed: int | None
    _latency_rng: np.random.Generator | None
    latency: LatencyModel | None
    _next_delay: float | None
    _needs_reset: bool

    if TYPE_CHECKING:  # CoreEnv's (Gymnasium's np_random, EnvLatency's reports_timing)
        @property
        def np_random(self) -> np.random.Generator: ...
        @property
        def np_random_seed(self) -> int: ...
        @property
        def reports_timing(self) -> bool: ...

    def _take_row_rng(self) -> None:
        """The row's generators from the C++ session (seed_rows), as numpy ones."""
        assert self._row_rng is not None
        session, i = self._row_rng
        states = session.row_rng_state(i)
        if states is None:
            return
        task, latency = states
        self._np_random = rng = _numpy_pcg64(task)
        self._latency_rng = lat = None if latency is None else _numpy_pcg64(latency)
        model = self._latency_model()
        session.set_row_rng(i, rng.bit_generator, None if lat is None else lat.bit_generator,
                            0 if model is None or lat is None else model.seed)

    def _reset_in_vector(self, seed: int | None) -> None:
        """What reset(seed=seed) leaves in this env when its vector env seeded and reset it
        in C++ (VectorEnvCore.seed_rows): the seed, the generators left in the session
        (np_random takes them over), the episode started."""
        self._np_random = None
        self._np_random_seed = seed
        self._latency_rng = None
        self._next_delay = None
        self._needs_reset = False
        self._episode_drawn = True

    def _latency_model(self) -> LatencyModel | None:
        """The model whose seed an episode's delays start from (None: no timing reported,
        no latency seed drawn)."""
        if self.latency is not None:
            return self.latency
        return LatencyModel.fixed(0.0) if self.reports_timing else None

    def _latency_seed(self, model: LatencyModel, seed: int | None) -> int:
        """Seed of this episode's delays: a stream derived from the reset seed, so the
        env's own ``np_random`` (scenarios, start noise) draws the same with or without
        latency. The draw is the C++ one a reset in C++ makes (``_core.draw_latency_seed``:
        ``model.seed ^ integers(2**63)``)."""
        if seed is not None or self._latency_rng is None:
            base = self.np_random_seed
            self._latency_rng = np.random.default_rng(
                [base, _LATENCY_STREAM] if base >= 0 else None)
        return _core.draw_latency_seed(self._latency_rng.bit_generator, model.seed)

    @property
    def resets_in_core(self) -> bool:
        """Whether this env's whole episode draw is its core's (``draw_start``, the
        randomization's draws, the latency seed): true for tasks with ``RESETS_IN_CORE``.
        The vector env resets such rows inside its C++ batch step."""
        return self.RESETS_IN_CORE

    def episode_rng(self) -> tuple[Any, Any, int]:
        """What a reset in C++ draws from, after this env's last reset: ``np_random``'s bit
        generator, the latency stream's (None: no latency seed drawn) and the latency
        model's seed (``VectorEnvCore.set_row_rng``)."""
        model = self._latency_model()
        if model is None or self._latency_rng is None:
            return self.np_random.bit_generator, None, 0
        return self.np_random.bit_generator, self._latency_rng.bit_generator, model.seed


__all__ = ["EnvSeeding"]
