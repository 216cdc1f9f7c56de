"""The C++ draws from a numpy BitGenerator (vdsim/numpy_draws.hpp) against numpy's Generator.

An env's episode draw runs in C++ (``draw_start``; the vector env's in-batch resets) on the
env's own ``np_random`` bit generator. These tests hold the C++ distributions to numpy's,
bit for bit, and the generator's state after them to numpy's, so a reset in C++ and one
in Python leave the env's generator where the other would.
"""

from __future__ import annotations

import numpy as np
import pytest

from vdsim_gym import _core

# Ranges across numpy's branches: 32-bit Lemire (n - 1 < 2^32 - 1), the full 32-bit
# range, 64-bit Lemire, and n = 2^63 (the latency seed's draw).
SIZES = [1, 2, 3, 5, 7, 100, 1000003, 2**31 + 5, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 7,
         2**52 + 3, 2**63]


def _state(g: np.random.Generator) -> dict:
    return g.bit_generator.state


@pytest.mark.parametrize("seed", [0, 1, 7, 12345, 2**40 + 3])
def test_integers_match_numpy_in_every_branch(seed: int) -> None:
    ours, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    for n in SIZES:
        got = _core.numpy_draws(ours.bit_generator, "integers", float(n), 0.0, 5)
        want = [int(ref.integers(n)) for _ in range(5)]
        assert got == want, n
        assert _state(ours) == _state(ref), n  # the 32-bit buffer included


@pytest.mark.parametrize("seed", [0, 3, 99])
def test_uniform_and_random_match_numpy(seed: int) -> None:
    ours, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    for lo, hi in [(-0.05, 0.05), (0.0, 1.0), (20.0, 30.0), (-1e9, 3.5), (2.0, 2.0)]:
        got = _core.numpy_draws(ours.bit_generator, "uniform", lo, hi, 7)
        assert got == [float(ref.uniform(lo, hi)) for _ in range(7)]
    assert _core.numpy_draws(ours.bit_generator, "random", 0.0, 0.0, 9) == list(ref.random(9))
    assert _state(ours) == _state(ref)


def test_interleaved_draws_share_numpy_state() -> None:
    """A C++ draw and a numpy draw interleave on one generator as numpy's alone would
    (odd counts of 32-bit draws leave numpy's half-word buffer full)."""
    ours, ref = np.random.default_rng(5), np.random.default_rng(5)
    rng = np.random.default_rng(0)
    for _ in range(200):
        kind = int(rng.integers(3))
        n = int(rng.choice(SIZES))
        if kind == 0:
            got = _core.numpy_draws(ours.bit_generator, "integers", float(n), 0.0, 1)[0]
            assert got == int(ref.integers(n))
        elif kind == 1:
            assert _core.numpy_draws(ours.bit_generator, "uniform", -2.0, 3.0, 1)[0] \
                == float(ref.uniform(-2.0, 3.0))
        else:  # numpy itself draws on the shared generator
            assert int(ours.integers(n)) == int(ref.integers(n))
    assert _state(ours) == _state(ref)


def test_latency_seed_is_the_models_seed_xor_a_63_bit_draw() -> None:
    for model_seed in (0, 1, 2**64 - 1, 0xDEADBEEF):
        g, ref = np.random.default_rng([3, 0x1A7E_5EED]), np.random.default_rng([3, 0x1A7E_5EED])
        assert _core.draw_latency_seed(g.bit_generator, model_seed) \
            == model_seed ^ int(ref.integers(2**63))


def test_bad_generators_and_ranges_are_refused() -> None:
    with pytest.raises(TypeError, match="numpy BitGenerator"):
        _core.numpy_draws(object(), "random")
    g = np.random.default_rng(0).bit_generator
    with pytest.raises(ValueError, match="kind"):
        _core.numpy_draws(g, "normal")
    with pytest.raises(ValueError, match="integers"):
        _core.numpy_draws(g, "integers", 0.0)


def _words(entropy) -> list[int]:
    from vdsim_gym.envs.vector_resets import _entropy_words

    if isinstance(entropy, list):
        return [w for v in entropy for w in _entropy_words(v)]
    return _entropy_words(entropy)


@pytest.mark.parametrize("entropy", [0, 1, 7, 2**32 - 1, 2**32, 2**64 + 5, 2**127 + 12345,
                                     [3, 0x1A7E_5EED], [0, 0], [2**40, 1, 2, 3, 4, 5]],
                         ids=str)
def test_core_pcg64_is_numpys_seeded_by_seed_sequence(entropy) -> None:
    """The core's PCG64 from SeedSequence's entropy words (a vector env's rows seeded in
    C++) is numpy's PCG64(SeedSequence(entropy)): the same state, the same draws, the same
    state after them (the 32-bit half kept between integers() calls)."""
    ours = _core.Pcg64(_words(entropy))
    ref = np.random.PCG64(np.random.SeedSequence(entropy))
    assert ours.state == ref.state
    g = np.random.Generator(ref)
    assert _core.numpy_draws(ours, "random", 0.0, 0.0, 5) == list(g.random(5))
    assert _core.numpy_draws(ours, "integers", 7.0, 0.0, 3) == \
        [int(g.integers(7)) for _ in range(3)]
    assert ours.state == ref.state
    assert _core.numpy_draws(ours, "integers", float(2**63), 0.0, 2) == \
        [int(g.integers(2**63)) for _ in range(2)]
    assert ours.state == ref.state


def test_entropy_words_are_seed_sequences() -> None:
    for value in (0, 1, 2**32 - 1, 2**32, 2**100 + 3):
        assert np.random.SeedSequence(value).entropy == value
        assert _core.Pcg64(_words(value)).state == np.random.PCG64(value).state
