"""The sweep grid: cells (latency model x scenario), seeds, argument checks, labels."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.config.latency import LatencyModel, check_latency
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.errors import ConfigError


def latency_label(latency: LatencyModel | None) -> str:
    """The scenario key's latency part: the model's label, "none" without one."""
    return "none" if latency is None else latency.label()


def mean_delay_ms(latency: LatencyModel | None) -> float:
    """Mean computation delay of the model [ms] (``LatencyModel.mean_delay``)."""
    return 0.0 if latency is None else 1e3 * latency.mean_delay


def scenario_key(scenario: dict[str, Any]) -> str:
    if not scenario:
        return "default"
    return ",".join(f"{k}={latency_label(v) if isinstance(v, LatencyModel) else v}"
                    for k, v in sorted(scenario.items()))


@dataclass(frozen=True)
class _Cell:
    latency: LatencyModel | None
    scenario: dict[str, Any]
    key: str
    label: str
    delay_ms: float


@dataclass(frozen=True)
class _Job:
    """What a worker needs to run batches (picklable, for Ray)."""

    env_id: str
    env_kwargs: dict[str, Any]  # shared kwargs, overrun included
    cells: tuple[_Cell, ...]
    policy: PolicyPredictor | Callable[[gym.Env], PolicyPredictor]
    threads: int
    predict: str = "batch"


def _check_env_id(env_id: Any) -> str:
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(f"env_id must be a registered env id string, got {env_id!r}")
    if ":" in env_id:  # "module:Id", as gym.make accepts
        module, env_id = env_id.split(":", 1)
        importlib.import_module(module)
    ids = ", ".join(sorted(i for i in gym.registry if i.startswith("VDSim")))
    if env_id not in gym.registry:
        raise ConfigError(f"unknown env id {env_id!r}; registered VDSim ids: {ids}")
    if core_env_class(env_id) is None:
        raise ConfigError(f"{env_id!r} is not a VDSim env: a sweep runs on the core's vector "
                          f"session, so it needs an env on vdsim_gym.envs.CoreEnv, e.g. {ids}")
    return env_id


def core_env_class(env_id: str) -> type | None:
    """The registered env's class when it is a CoreEnv (a core-backed env), else None."""
    from vdsim_gym.envs.core_env import CoreEnv

    entry = gym.spec(env_id).entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        try:
            entry = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return None
    return entry if isinstance(entry, type) and issubclass(entry, CoreEnv) else None


def _check_latencies(latencies: Any) -> list[LatencyModel | None]:
    if isinstance(latencies, LatencyModel) or latencies is None:
        raise ConfigError("latencies must be a sequence of LatencyModel or None, e.g. "
                          "[None, LatencyModel.fixed(0.01)]")
    out = list(latencies)
    if not out:
        raise ConfigError("latencies is empty: give at least one LatencyModel (or None for "
                          "no latency)")
    for lat in out:
        if lat is not None:
            check_latency(lat, "each latency (or None)")
        if lat is not None and not lat.reproducible:
            raise ConfigError("LatencyModel.measured() times the controller's wall clock and "
                              "is not reproducible; a sweep needs fixed, uniform or normal")
    if len(set(out)) != len(out):
        raise ConfigError(f"latencies has duplicates: {[latency_label(x) for x in out]}")
    return out


def _check_seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ConfigError(f"seeds must be >= 1 (the number of seeds 0..n-1) or a "
                              f"sequence of seeds, got {seeds}")
        return list(range(int(seeds)))
    try:
        out = list(seeds)
    except TypeError:
        raise ConfigError(f"seeds must be an int (count) or a sequence of ints, "
                          f"got {seeds!r}") from None
    if not out:
        raise ConfigError("seeds is empty: give a count (seeds=8) or a list of seeds")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ConfigError(f"each seed must be an integer >= 0, got {s!r}")
    if len(set(out)) != len(out):
        raise ConfigError("seeds has duplicates; each (cell, seed) is one episode")
    return [int(s) for s in out]


def _check_scenarios(scenarios: Any) -> list[dict[str, Any]]:
    out = [{}] if scenarios is None else list(scenarios)
    if not out:
        raise ConfigError("scenarios is empty: pass None for the env's defaults, or dicts "
                          "of env kwargs")
    for sc in out:
        if not isinstance(sc, dict):
            raise ConfigError(f"each scenario must be a dict of env kwargs, got {sc!r}")
        bad = {"latency", "overrun"} & set(sc)
        if bad:
            raise ConfigError(f"scenario {sc!r} sets {sorted(bad)}: these are sweep "
                              "arguments (latencies=, overrun=)")
    keys = [scenario_key(sc) for sc in out]
    if len(set(keys)) != len(keys):
        raise ConfigError(f"scenarios has duplicates: {keys}")
    return out


def _grid(cells: Sequence[_Cell], seeds: Sequence[int]) -> list[tuple[int, int]]:
    """Episodes (cell index, seed) in grid order."""
    return [(c, s) for c in range(len(cells)) for s in seeds]


def _batches(episodes: list[tuple[int, int]], num_envs: int) -> list[list[tuple[int, int]]]:
    return [episodes[i:i + num_envs] for i in range(0, len(episodes), num_envs)]
