"""What a training run adds around SB3's loop: the task metrics of each finished episode
as monitor.csv columns (``_with_summary_keys``), and the callbacks that evaluate, keep the
best model with its normalization statistics and the evaluation episodes' metrics, and
save checkpoints (``_callbacks``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np


def _with_summary_keys(venv: Any, keys: tuple[str, ...]) -> Any:
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class SummaryKeys(VecEnvWrapper):
        """Copies the task metrics of each finished episode's ``episode_summary`` into
        flat info keys, which ``VecMonitor(info_keywords=...)`` writes to monitor.csv (NaN
        for an episode that ends without a summary)."""

        def __init__(self, venv: Any, keys: tuple[str, ...]) -> None:
            super().__init__(venv)
            self.keys = keys

        def reset(self) -> Any:
            return self.venv.reset()

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            for i in np.flatnonzero(dones):
                summary = infos[i].get("episode_summary") or {}
                for k in self.keys:  # a step key of the same name (cone_hits) stays
                    infos[i].setdefault(k, float(summary.get(k, np.nan)))
            return obs, rewards, dones, infos

    return SummaryKeys(venv, keys)


def selection_score(episodes: list[dict[str, Any]], metric: str, success_outcome: str
                    ) -> tuple[int, float]:
    """How ``select_by=metric`` ranks one evaluation (lower is better, compared as a
    tuple): the number of failed episodes first (not ended by the task's own end
    ``success_outcome``, or with a cone hit or a collision), then the metric's mean over
    the episodes (NaN counts as infinite)."""
    failed = sum(1 for e in episodes if e.get("outcome") != success_outcome
                 or e.get("cone_hits", 0) or e.get("collision", 0))
    values = np.array([float(e.get(metric, np.nan)) for e in episodes], dtype=float)
    mean = float(values.mean()) if values.size and np.isfinite(values).all() else np.inf
    return failed, mean


def _callbacks(run_dir: Path, venv: Any, eval_env: Any, norm: Any, n_envs: int,
               eval_freq: int, eval_episodes: int, checkpoint_freq: int, verbose: int,
               metrics: tuple[str, ...] = (), select_by: str = "return",
               success_outcome: str = "", eval_seed: int | None = None) -> Any:
    """EvalCallback (best_model.zip with the statistics of its moment; the evaluation
    episodes' task metrics in eval_metrics.npz) and checkpoints; frequencies in total env
    steps. ``select_by``: "return" (EvalCallback's own rule: the highest mean return) or a
    task metric, lower is better, failed episodes first (``selection_score``); the pick
    is written to best.json either way. By a metric every evaluation reseeds the
    evaluation env with ``eval_seed`` first, so that all of them drive the same episodes
    and the pick compares the models, not the episodes (EvalCallback's own rule goes on
    through new episodes, as in SB3)."""
    from stable_baselines3.common.callbacks import (
        BaseCallback,
        CallbackList,
        CheckpointCallback,
        EvalCallback,
    )

    per_env = max(1, n_envs)
    by_return = select_by == "return"
    on_best = None
    if norm is not None:

        class _SaveBestStats(BaseCallback):
            def _on_step(self) -> bool:
                venv.save(str(run_dir / "best_vecnormalize.pkl"))
                return True

        on_best = _SaveBestStats()

    class _EvalWithMetrics(EvalCallback):
        """EvalCallback that also keeps each evaluation episode's task metrics
        (``episode_summary``) and writes them to eval_metrics.npz beside evaluations.npz:
        ``timesteps``, ``failed_episodes`` (per evaluation: ``selection_score``'s count)
        and one (evaluations, episodes) array per metric."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._episode: list[dict[str, float]] = []
            self._log: dict[str, list[list[float]]] = {k: [] for k in metrics}
            self._steps: list[int] = []
            self._best_score: tuple[int, float] | None = None  # select_by a metric
            self._failed: list[int] = []  # failed episodes per evaluation

        def _log_success_callback(self, locals_: dict[str, Any], globals_: Any) -> None:
            super()._log_success_callback(locals_, globals_)
            if locals_["done"] and "episode_summary" in locals_["info"]:
                self._episode.append(locals_["info"]["episode_summary"])

        def _on_step(self) -> bool:
            self._episode = []
            best_return = self.best_mean_reward
            if not by_return and eval_seed is not None and self.eval_freq > 0 \
                    and self.n_calls % self.eval_freq == 0:
                self.eval_env.seed(eval_seed)  # the same episodes at every evaluation
            go_on = super()._on_step()
            if not self._episode:
                return go_on
            failed = self._select(best_return)
            if metrics:
                self._steps.append(self.num_timesteps)
                self._failed.append(failed)
                for k in metrics:
                    self._log[k].append([float(e.get(k, np.nan)) for e in self._episode])
                n = min(len(v) for v in self._log[metrics[0]])
                # The arrays are numbers: no pickling (stated, the checker also knows no
                # metric name fills that keyword)
                np.savez(run_dir / "eval_metrics.npz", allow_pickle=False,
                         timesteps=np.array(self._steps),
                         failed_episodes=np.array(self._failed),
                         **{k: np.array([row[:n] for row in v]) for k, v in self._log.items()})
            return go_on

        def _select(self, best_return: float) -> int:
            """The pick by ``select_by`` after an evaluation (by return EvalCallback has
            saved it; by a metric it is saved here, model and statistics), best.json for
            a new one; returns the evaluation's failed episodes."""
            score = selection_score(self._episode, select_by, success_outcome)
            if by_return:
                new = self.best_mean_reward > best_return
            else:
                new = self._best_score is None or score < self._best_score
                if new:
                    self._best_score = score
                    self.model.save(run_dir / "best_model.zip")
                    if norm is not None:
                        venv.save(str(run_dir / "best_vecnormalize.pkl"))
                    if self.verbose >= 1:
                        print(f"New best {select_by}: {score[1]:.5g} ({score[0]} failed "
                              "episodes)")
            if new:
                (run_dir / "best.json").write_text(json.dumps({
                    "select_by": select_by, "timesteps": int(self.num_timesteps),
                    "mean_return": float(self.last_mean_reward),
                    "failed_episodes": score[0], "episodes": len(self._episode),
                    **({} if by_return else {select_by: score[1]})}, indent=1))
            return score[0]

    eval_cb = _EvalWithMetrics(eval_env, n_eval_episodes=eval_episodes,
                               eval_freq=max(1, eval_freq // per_env),
                               best_model_save_path=str(run_dir) if by_return else None,
                               log_path=str(run_dir), deterministic=True, verbose=verbose,
                               callback_on_new_best=on_best if by_return else None)
    callbacks: list[BaseCallback] = [eval_cb]
    if checkpoint_freq > 0:
        callbacks.append(CheckpointCallback(max(1, checkpoint_freq // per_env),
                                            str(run_dir / "checkpoints"), name_prefix="model",
                                            save_vecnormalize=norm is not None))
    return CallbackList(callbacks)
