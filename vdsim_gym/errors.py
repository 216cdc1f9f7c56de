"""Errors the package raises where a client keys on the exception's type or wording.

Clients retry or fall back on Python's own conventions: stable-baselines3's
``make_vec_env`` retries ``gym.make`` without ``render_mode`` only on a ``TypeError``, and
TorchRL's ``GymEnv`` retries without ``frameskip`` only on Python's wording
"unexpected keyword argument 'frameskip'". These classes keep those conventions and stay
``ValueError``s where the package raised one before.
"""

from __future__ import annotations

from collections.abc import Iterable


class VDSimError(Exception):
    """Base of the package's own error classes."""


class UnknownKeywordError(VDSimError, TypeError):
    """A keyword argument the callee does not take, worded as Python's own message
    (``UnknownKeywordError.of``). Like every class here it takes a single message, as
    Gymnasium's ``make`` re-raises ``type(e)(message)``."""

    @classmethod
    def of(cls, callee: str, names: Iterable[str], valid: Iterable[str]
           ) -> UnknownKeywordError:
        names = sorted(names)
        if len(names) == 1:
            head = f"{callee}() got an unexpected keyword argument {names[0]!r}"
        else:
            head = (f"{callee}() got unexpected keyword arguments "
                    + ", ".join(repr(n) for n in names))
        return cls(f"{head}; valid keywords: {', '.join(sorted(valid))}")


class UnsupportedRenderModeError(VDSimError, TypeError, ValueError):
    """A render mode the env does not offer: a TypeError, so that SB3's make_vec_env
    retries without it, and a ValueError as before."""


class ConcurrentUseError(VDSimError, RuntimeError):
    """One env, vector env or evaluation used from two threads at once (its step releases
    the GIL, so a second thread would interleave with it and corrupt it silently)."""

    @classmethod
    def of(cls, what: str) -> ConcurrentUseError:
        return cls(f"{what} is in use by another thread: its step releases the GIL, and two "
                   "threads stepping one object interleave and corrupt it. Use one object "
                   "per thread (gym.make one env each; docs/ENVS.md, \"Threads\")")


__all__ = ["ConcurrentUseError", "UnknownKeywordError", "UnsupportedRenderModeError",
           "VDSimError"]
