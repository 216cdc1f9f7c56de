"""The controllers and the env of a sweep command, checked before any work: controller
specs loaded (``load_controllers``: baselines with parameters, run folders, SB3 model
files; each baseline probed on the env) and the env id and its shared kwargs
(``check_env``, ``check_env_kwargs``), every error naming the command-line option it came
from. ``vdsim-gym sweep``, ``compare`` (``compare.run_sweep``), ``tolerance`` and
``seeds-report`` load through them.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps.grid import _check_env_id
from vdsim_gym.eval.sweeps.results import sweep_metrics
from vdsim_gym.policies.algos import check_model_algo
from vdsim_gym.policies.baselines import BASELINES
from vdsim_gym.policies.loading import load_controller


def _env_keys(cls: type) -> set[str]:
    """The keyword arguments gym.make accepts for an env class: gym.make's own and those
    of each __init__ up the MRO while they pass on **kwargs."""
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keys = {k for k, q in inspect.signature(gym.make).parameters.items()
            if q.kind in kinds and k != "id"}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters.values()
        keys |= {q.name for q in params if q.kind in kinds and q.name != "self"}
        if not any(q.kind is inspect.Parameter.VAR_KEYWORD for q in params):
            break
    kwarg_names = getattr(cls, "kwarg_names", None)  # a CoreEnv knows its physics keywords
    return keys | (kwarg_names() if callable(kwarg_names) else set())


def check_env(env_id: str) -> type:
    """The class of a VDSim env id (sweeps refuse other envs: they run on the core's
    vector session); the error names --env and lists the VDSim ids."""
    from gymnasium.envs.registration import load_env_creator

    try:
        bare = _check_env_id(env_id)
    except ValueError as exc:
        raise ConfigError(f"--env: {exc}") from None
    entry = gym.spec(bare).entry_point
    cls = load_env_creator(entry) if isinstance(entry, str) else entry
    assert isinstance(cls, type)  # _check_env_id: a CoreEnv subclass
    return cls


def check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, ...]:
    """Unknown keys and bad values of the shared env kwargs, before any work, naming
    --env-kwargs (the env's own message alone does not say where the value came from).
    Returns the metrics a sweep of the env tabulates (for --metric)."""
    for key in ("latency", "overrun"):
        if key in env_kwargs:
            raise ConfigError(f"--env-kwargs sets {key!r}, which the sweep sets: use --delays "
                              "for the latency and --overrun for the overrun policy")
    valid = _env_keys(check_env(env_id)) - {"latency", "overrun"}
    unknown = sorted(set(env_kwargs) - valid)
    if unknown:
        raise ConfigError(f"--env-kwargs: unknown key {unknown[0]!r} for {env_id}; valid keys: "
                          f"{', '.join(sorted(valid))}")
    try:
        probe = gym.make(env_id, **env_kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"--env-kwargs {json.dumps(env_kwargs, default=str)}: {exc}") from None
    try:
        base = probe.unwrapped
        assert isinstance(base, CoreEnv)  # check_env above: a VDSim env
        return sweep_metrics(base.summary_names)
    finally:
        probe.close()


def load_controllers(controllers: Sequence[str], algo: str | None = None,
                     options: tuple[str, str] = ("--controller", "--compare"),
                     env_id: str | None = None, env_kwargs: dict[str, Any] | None = None,
                     trust: bool = False) -> list[tuple[str, Any]]:
    """Each controller spec loaded; an error names the option it came from (``options``:
    the first spec's, the others'). With ``env_id`` each baseline is also built once on
    such an env, so that a missing extra (the MPC's OSQP) or a controller that does not
    fit the env fails before any work, not after the controllers before it ran.
    ``trust``: unpickle run folders as SB3 does (``load_policy``'s ``trust``)."""
    if algo is not None:
        check_model_algo(algo)
    loaded = []
    for k, spec in enumerate(controllers):
        try:
            loaded.append(load_controller(spec, algo, trust=trust))
        except ValueError as exc:
            raise ConfigError(f"{options[1] if k else options[0]} {exc}") from None
    names = [n for n, _ in loaded]
    if len(set(names)) != len(names):
        raise ConfigError(f"controllers have the same name: {names}; give each {options[1]} a "
                          "different spec or model file name")
    if env_id is not None and any(callable(pol) for _, pol in loaded):
        from vdsim_gym.policies.env_kwargs import required_env_kwargs

        for k, (name, pol) in enumerate(loaded):
            if not callable(pol):  # a trained model is loaded already
                continue
            option = options[1] if k else options[0]
            # a baseline's factory, or a residual run's (on the env its observation needs)
            env = gym.make(env_id, **required_env_kwargs(pol, env_kwargs,
                                                         f"{option} {name}: the env kwargs"))
            try:
                _probe(pol, env)
            except ImportError as exc:
                raise ConfigError(f"{option} {name}: {exc}") from None
            except (ValueError, KeyError, AttributeError, TypeError) as exc:
                drivers = _drivers(env)
                if name.partition(":")[0] in drivers:  # drives it; a bad parameter
                    raise ConfigError(f"{option} {name}: {_one_line(exc)}") from None
                raise ConfigError(
                    f"{option} {name}: does not drive {env_id} ({_one_line(exc)}); the "
                    f"baselines that drive it: {', '.join(drivers) or 'none'}") from None
            finally:
                env.close()
    return loaded


def _probe(factory: Any, env: Any) -> Any:
    """The controller ``factory`` builds for ``env``, after one action on its first
    observation: a controller built for another task's observation (Stanley on the ACC
    env) fails here, not deep in the sweep's first batch."""
    pol = factory(env)
    obs, _ = env.reset(seed=0)
    pol.predict(obs[None, :], deterministic=True)
    return pol


def _drivers(env: Any) -> list[str]:
    """The baselines (``policies.BASELINES``, in its order) that build for ``env`` and act
    on its observation."""
    out = []
    for spec in BASELINES:
        try:
            _probe(load_controller(spec)[1], env)
        except (ImportError, ValueError, KeyError, AttributeError, TypeError):
            continue
        out.append(spec)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split())


__all__ = ["check_env", "check_env_kwargs", "load_controllers"]
