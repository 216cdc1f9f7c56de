"""Running one batch of a sweep: a vector env of episodes, batched predict, one row each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.envs.vector import VDSimVectorEnv
from vdsim_gym.errors import ArgumentTypeError, InvalidActionError
from vdsim_gym.eval.sweeps.grid import _Job
from vdsim_gym.eval.sweeps.results import SUMMARY_BASE, SweepRow


def _make_batch(env_id: str, per_env_kwargs: Sequence[dict[str, Any]],
                env_kwargs: dict[str, Any], threads: int) -> VDSimVectorEnv:
    """A vector env of ``len(per_env_kwargs)`` envs on the core's vector session: env i
    behaves as ``gym.make(env_id, **env_kwargs, **per_env_kwargs[i])``, NEXT_STEP
    autoreset; one GIL-released call steps the whole batch on ``threads`` workers.
    """
    return VDSimVectorEnv(env_id, len(per_env_kwargs), threads=threads,
                          autoreset_mode="next_step", per_env_kwargs=list(per_env_kwargs),
                          **env_kwargs)


def _is_factory(policy: Any) -> bool:
    """A factory make_policy(env), not a PolicyPredictor itself."""
    return not isinstance(policy, PolicyPredictor)


def _predict(policy: Any, obs: np.ndarray, first: bool, mode: str, m: int) -> np.ndarray:
    if mode == "row":
        return np.concatenate([_predict(policy, obs[i:i + 1], first, "batch", m)
                               for i in range(len(obs))])
    n = len(obs)
    action, _ = policy.predict(obs, episode_start=np.full(n, first), deterministic=True)
    action = np.asarray(action)
    if action.shape != (n, m):
        raise InvalidActionError(f"policy.predict on a ({n}, {obs.shape[1]}) batch returned "
                                 f"shape {action.shape}; a sweep of this env needs ({n}, {m}) "
                                 "actions")
    return action


def _reset(venv: VDSimVectorEnv, seeds: list[int]) -> np.ndarray:
    consecutive = all(b - a == 1 for a, b in zip(seeds, seeds[1:], strict=False))
    obs, _ = venv.reset(seed=seeds[0] if consecutive else seeds)  # env i: seeds[i]
    return obs


def _follow_delays(venv: VDSimVectorEnv, policies: list[tuple[np.ndarray, Any]]) -> None:
    """A delay-compensating policy built without ``delay=`` (``follows_env``) predicts
    across each row's own loop delay when the episodes draw their delays
    (``randomize`` of latency, sensor or channel delays): this episode's, after the
    reset. With the delay fixed per cell the cell's env already gave it that delay."""
    from vdsim_gym.controllers.prediction import loop_delay

    r = getattr(venv.envs[0].unwrapped, "randomize", None)
    if r is None or not (r.changes_latency or r.changes_obs_delay or r.changes_channels):
        return
    for rows, pol in policies:
        if getattr(pol, "follows_env", False):
            pol.set_delays(np.array([loop_delay(venv.envs[i]) for i in rows.tolist()]))


def _info_array(infos: dict[str, Any], key: str) -> np.ndarray | None:
    value = infos.get(key)
    return None if value is None else np.asarray(value)


def _end_reason(infos: dict[str, Any], i: int, terminated: bool) -> str:
    outcome, mask = infos.get("outcome"), infos.get("_outcome")
    if outcome is not None and mask is not None and mask[i]:
        return str(outcome[i])
    # no outcome: the vector env's step limit (max_episode_steps, TimeLimit semantics)
    return "terminated" if terminated else "time_limit"


def _run_batch(job: _Job, batch: list[tuple[int, int]]) -> list[SweepRow]:
    """One episode per env of ``batch`` ((cell, seed) pairs); rows in batch order."""
    cells = job.cells
    per_env = [{"latency": cells[c].latency, **cells[c].scenario} for c, _ in batch]
    n = len(batch)
    # One predict call per cell present (a factory builds its policy from an env of that
    # cell: its scenario and latency, so a delay-compensating controller knows the delay);
    # with a policy object, one call for the batch.
    groups: dict[int, list[int]] = {}
    for i, (c, _) in enumerate(batch):
        groups.setdefault(c if _is_factory(job.policy) else -1, []).append(i)
    policies = []
    for members in groups.values():
        given = job.policy
        if isinstance(given, PolicyPredictor):
            pol = given
        else:
            cell = cells[batch[members[0]][0]]
            template = gym.make(job.env_id, **{**job.env_kwargs, **cell.scenario,
                                               "latency": cell.latency})
            try:
                pol = given(template)
            finally:
                template.close()
            if not isinstance(pol, PolicyPredictor):
                raise ArgumentTypeError(f"the policy factory returned {pol!r}, which has no "
                                        "predict()")
        policies.append((np.asarray(members), pol))

    venv = _make_batch(job.env_id, per_env, job.env_kwargs, job.threads)
    try:
        obs = _reset(venv, [s for _, s in batch])
        _follow_delays(venv, policies)
        active = np.ones(n, dtype=bool)
        n_over = np.zeros(n, dtype=np.int64)
        n_skip = np.zeros(n, dtype=np.int64)
        terminated_at = np.zeros(n, dtype=bool)
        ends: list[str] = [""] * n
        summaries: list[dict[str, Any]] = [{}] * n
        m = len(venv.action_names)
        first = True
        while active.any():
            actions = np.zeros((n, m))
            for rows, pol in policies:
                actions[rows] = _predict(pol, obs[rows], first, job.predict, m)
            actions[~active] = 0.0  # finished envs: this step is their autoreset, ignored
            obs, _, term, trunc, infos = venv.step(actions)
            first = False
            for key, acc in (("n_overrun", n_over), ("n_skipped", n_skip)):
                vals = _info_array(infos, key)
                if vals is not None:
                    mask = infos.get("_" + key)
                    take = active if mask is None else active & np.asarray(mask, dtype=bool)
                    acc[take] = vals[take]
            done = active & (np.asarray(term) | np.asarray(trunc))
            for i in np.flatnonzero(done).tolist():
                terminated_at[i] = bool(term[i])
                ends[i] = _end_reason(infos, i, bool(term[i]))
                # the row's core still holds the episode (NEXT_STEP resets it next step)
                summaries[i] = venv.episode_summary(i)
            active &= ~done
    finally:
        venv.close()

    out = []
    for i, (c, seed) in enumerate(batch):
        cell = cells[c]
        summary = summaries[i]
        out.append(SweepRow(
            cell=c, env_id=job.env_id, scenario=cell.key, latency=cell.label,
            mean_delay_ms=cell.delay_ms,
            overrun=job.env_kwargs["overrun"] if cell.latency is not None else "-",
            seed=seed, steps=int(summary["steps"]), episode_return=float(summary["return"]),
            n_overrun=int(n_over[i]), n_skipped=int(n_skip[i]),
            outcome="terminated" if terminated_at[i] else "truncated", end=ends[i],
            completed=not terminated_at[i] and ends[i] != "time_limit",
            metrics={k: v for k, v in summary.items() if k not in SUMMARY_BASE},
        ))
    return out


def _run_chunk(job: _Job, batches: list[list[tuple[int, int]]]) -> list[SweepRow]:
    return [row for batch in batches for row in _run_batch(job, batch)]
