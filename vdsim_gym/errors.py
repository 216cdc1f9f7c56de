"""The package's errors: one base class, ``VDSimError``, and one subclass per kind of
failure, as ``gymnasium.error`` has. ``except vdsim_gym.errors.VDSimError`` catches every
error the package raises on purpose.

Each subclass also derives from the built-in class the package raised before
(``ValueError``, ``TypeError``, ``RuntimeError``), so code that catches those keeps
working; that is also what clients key on: stable-baselines3's ``make_vec_env`` retries
``gym.make`` without ``render_mode`` only on a ``TypeError``, and TorchRL's ``GymEnv``
retries without ``frameskip`` only on Python's wording "unexpected keyword argument
'frameskip'". Like Gymnasium's errors, each takes a single message (Gymnasium's ``make``
re-raises ``type(e)(message)``), ``ControllerError`` excepted (it names the sample).

=========================== ============================== ===========================
class                       also a                         raised for
=========================== ============================== ===========================
``InvalidActionError``      ``ValueError``,                an action (single or batch)
                            ``gymnasium.error.InvalidAction``  that is not finite reals in
                                                           [-1, 1] of the right shape; a
                                                           Plant command or controller
                                                           output that is not two finite
                                                           numbers within its bound
``ConfigError``             ``ValueError``                 an argument, option or file
                                                           value outside its domain
``TraceError``              ``ValueError``                 a file that is not a
                                                           readable .vdtrace, or content
                                                           the writer refuses (no ``t``,
                                                           ragged channels, bad overlay)
``UnknownKeywordError``     ``TypeError``                  a keyword the callee lacks
``UnsupportedEnvError``     ``TypeError``                  not a VDSim env where one is
                                                           needed (wrappers, vector env)
``UnsupportedRenderModeError`` ``TypeError``, ``ValueError`` a render mode not offered
``ArgumentTypeError``       ``TypeError``                  an argument of the wrong kind:
                                                           not callable, no predict(); an
                                                           env given to copy or pickle
``ConcurrentUseError``      ``RuntimeError``               one object used by two threads
``ActuatorError``           ``RuntimeError``               a robot driver's actuator hook
``ControllerError``         ``RuntimeError``               a controller or policy raised
``UsageError``              ``RuntimeError``               a call out of order (step_wait
                                                           without step_async, a measured
                                                           latency's step without
                                                           set_next_delay)
``SolverError``             ``RuntimeError``               a solver that cannot meet its
                                                           constraints (the smooth
                                                           reference line)
=========================== ============================== ===========================

``TrainingError`` (a training setup, run folder or model that cannot be used) is a
``ConfigError``. Built-in errors stay only where they say something else: a
``RuntimeError`` for a broken internal invariant (a bug, not an input; tests/test_checks.py
lists each), and ``KeyError``, ``AttributeError``, ``ImportError`` (a missing extra) and
``NotImplementedError`` where Python's own protocols expect them.

Warnings derive from ``VDSimWarning`` (a ``UserWarning``): ``DelayRoundingWarning``.
"""

from __future__ import annotations

from collections.abc import Iterable

from gymnasium.error import InvalidAction as _GymInvalidAction


class VDSimError(Exception):
    """Base of the package's own error classes."""


class InvalidActionError(VDSimError, _GymInvalidAction, ValueError):
    """An action that is not finite real numbers within [-1, 1] (``ACTION_TOL``) of the
    action space's shape: NaN, inf, out of range, booleans, strings, complex numbers or a
    wrong shape. Nothing was stepped (``vdsim_gym._checks.check_action``)."""


class ConfigError(VDSimError, ValueError):
    """A configuration file, argument or option is invalid; the message names where and
    why (and the fix). ``vdsim_gym.ConfigError`` is this class."""


class TraceError(VDSimError, ValueError):
    """A file that is not a readable .vdtrace; the message names the file and the cause
    (``vdsim_gym.traces.trace.TraceError`` is this class)."""


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


class UnsupportedEnvError(VDSimError, TypeError):
    """An env that is not a VDSim env (a ``CoreEnv`` underneath) given where one is needed:
    the package's wrappers, the vector env, ``ClosedLoopEval(env=...)``."""


class UnsupportedRenderModeError(VDSimError, TypeError, ValueError):
    """A render mode the env does not offer: a TypeError, so that SB3's make_vec_env
    retries without it, and a ValueError as before."""


class ArgumentTypeError(VDSimError, TypeError):
    """An argument of the wrong kind, not merely a wrong value: an actuator hook that is
    not callable, a policy without ``predict()`` (nor a factory of one); also an env or
    vector env given to ``copy``/``pickle`` (it holds C++ cores)."""


class ConcurrentUseError(VDSimError, RuntimeError):
    """One env, vector env or evaluation used from two threads at once (its step releases
    the GIL, so a second thread would interleave with it and corrupt it silently)."""

    @classmethod
    def of(cls, what: str) -> ConcurrentUseError:
        return cls(f"{what} is in use by another thread: its step releases the GIL, and two "
                   "threads stepping one object interleave and corrupt it. Use one object "
                   "per thread (gym.make one env each; docs/ENVS.md, \"Threads\")")


class ActuatorError(VDSimError, RuntimeError):
    """The actuator hook raised or returned something that is not two finite numbers
    (``vdsim_gym.dyno.RobotDriver``)."""


class ControllerError(VDSimError, RuntimeError):
    """The controller raised; ``k`` and ``t`` name the sample, ``__cause__`` is the error
    (``vdsim_gym.eval.ClosedLoopEval``)."""

    def __init__(self, message: str, k: int, t: float) -> None:
        super().__init__(message)
        self.k = k
        self.t = t

    def __reduce__(self) -> tuple:  # pickled with its sample (a worker process's error)
        return type(self), (str(self), self.k, self.t)


class UsageError(VDSimError, RuntimeError):
    """A call out of order: ``step_wait()`` without ``step_async()``, a step of an env
    with ``LatencyModel.measured()`` without ``set_next_delay()`` before it."""


class SolverError(VDSimError, RuntimeError):
    """A numerical solver that cannot meet its constraints for the given input (the
    smooth reference line of ``vdsim_gym.envs.reference_line``)."""


class VDSimWarning(UserWarning):
    """Base of the package's own warnings."""


class TrainingError(ConfigError):
    """A training configuration that cannot run, or a run folder or model that cannot be
    loaded, with the cause and the fix (a ConfigError, so a VDSimError and a ValueError)."""


class DelayRoundingWarning(VDSimWarning):
    """delay_s is not a whole number of the caller's steps: it is rounded to the nearest."""


__all__ = ["ActuatorError", "ArgumentTypeError", "ConcurrentUseError", "ConfigError",
           "ControllerError", "DelayRoundingWarning", "InvalidActionError", "SolverError",
           "TraceError", "TrainingError", "UnknownKeywordError", "UnsupportedEnvError",
           "UnsupportedRenderModeError", "UsageError", "VDSimError", "VDSimWarning"]
