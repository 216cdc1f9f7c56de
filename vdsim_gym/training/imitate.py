"""``train --imitate CONTROLLER``: DAgger from a classical expert, then PPO fine-tuning
anchored to the imitated policy (docs/TRAINING.md, "Imitation, then fine-tuning").

DAgger (Ross, Gordon and Bagnell, AISTATS 2011): round 0 drives the run's envs with the
expert; each later round drives them with a mixture (each env and step: the expert's
action with probability beta, the learner's otherwise; beta falls linearly to 0 over the
rounds), labels every visited observation with the expert's action, adds them to the data
set and refits the learner on all of it. The learner is the PPO policy's mean action
(its network as PPO builds it, the value net and log std untouched), fitted by mean
squared error on the observation as the policy sees it (features, privileged columns,
normalized with the run's running statistics at the fit). After the last round the
run's ``VecNormalize`` statistics are frozen: the fine-tuning keeps the normalization the
imitated policy was fitted with. The rollouts run in the run's
own vector envs, so ``VecNormalize``'s statistics start from them, and each batch of rows
is one call of the batched expert (``ResidualCore.base_actions``, the residual bases'
machinery: one predict for every row, per-row delays and PI state).

The ``imitation`` package (HumanCompatibleAI) implements DAgger over SB3 too, but its last
release (1.0.1) requires gymnasium ~0.29 and stable-baselines3 ~2.2.1, which pip cannot
install beside this package's gymnasium 1.x and SB3 2.x (a ResolutionImpossible); the
loop here is the algorithm's few lines over the run's own envs.

The expert reads the env's plain observation (the run's first columns) and may be
privileged: ``stanley_dc`` or ``mpc`` without ``delay=`` follow each episode's true delay
(DIDA, Liotet et al. ICML 2022, imitates an undelayed expert); ``mpc:delay=0.03`` is told
the nominal one.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError, TrainingError


@dataclasses.dataclass(frozen=True)
class ImitationConfig:
    """``--imitate``'s settings: the ``expert`` spec, the DAgger ``rounds`` of
    ``round_steps`` env steps each (over all envs), the fit's ``epochs`` per round,
    ``batch_size`` and learning rate ``lr``; the fine-tuning's ``kl_coef``, its
    exploration ``explore_std`` (PPO's action std set after the fit, in action units:
    the default log std of -1, 0.37, would throw a precise imitation off the road) and
    ``critic_warmup`` (PPO updates that train the value net only)."""

    expert: str
    rounds: int = 8
    round_steps: int = 8192
    epochs: int = 10
    batch_size: int = 256
    lr: float = 1e-3
    kl_coef: float = 0.5
    explore_std: float = 0.1
    critic_warmup: int = 4

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def check_imitation(env_id: str, kwargs_env: Mapping[str, Any], spec: str, *, algo: str,
                    residual: Any, rounds: int, round_steps: int, kl_coef: float
                    ) -> ImitationConfig:
    """``--imitate``'s options checked before any work: PPO, no residual, an expert that
    drives the run's env, whole numbers and a finite ``kl_coef`` >= 0."""
    import gymnasium as gym

    from vdsim_gym.policies.loading import base_controller

    if algo != "ppo":
        raise TrainingError(f"--imitate fine-tunes with PPO (its KL term toward the imitated "
                            f"policy is PPO's loss); use --algo ppo, not {algo}")
    if residual is not None:
        raise TrainingError("--imitate and --residual both start from a controller: give one")
    for name, value in (("--imitate-rounds", rounds), ("--imitate-steps", round_steps)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TrainingError(f"{name} must be a whole number >= 1, got {value!r}")
    if isinstance(kl_coef, bool) or not isinstance(kl_coef, (int, float)) \
            or not math.isfinite(kl_coef) or kl_coef < 0:
        raise TrainingError(f"--kl-coef must be a finite number >= 0 (0: plain PPO after "
                            f"the imitation), got {kl_coef!r}")
    spec = str(spec).strip()
    env = gym.make(env_id, **kwargs_env)
    try:
        try:  # an expert for another env fails on its columns or attributes
            expert = base_controller(env, spec)
            obs, _ = env.reset(seed=0)
            expert.predict(np.asarray(obs)[None], episode_start=np.array([True]))
        except (KeyError, AttributeError) as exc:
            raise TrainingError(f"--imitate {spec!r}: it cannot drive {env_id}: "
                                f"{exc.args[0] if exc.args else exc}") from None
    except ConfigError as exc:
        raise TrainingError(f"--imitate {spec!r}: {exc}") from None
    finally:
        env.close()
    return ImitationConfig(spec, rounds=rounds, round_steps=round_steps,
                           kl_coef=float(kl_coef))


class _Expert:
    """The expert over the run's rows: one batched predict per step on the plain
    observation (the first ``n_obs`` raw columns), per-row delays followed."""

    def __init__(self, venv: Any, spec: str) -> None:
        from vdsim_gym.controllers.residual import ResidualCore
        from vdsim_gym.policies.loading import base_controller
        from vdsim_gym.residual import row_envs

        self.envs = row_envs(venv)
        base: Any = self.envs[0].unwrapped
        self.n_obs = len(base.obs_names)
        self.core = ResidualCore(base_controller(self.envs[0], spec), 1.0, base.action_names)

    def actions(self, raw: np.ndarray, starts: np.ndarray) -> np.ndarray:
        rows = np.flatnonzero(starts).tolist()
        if rows:
            self.core.follow_delays(self.envs, None if len(rows) == len(starts) else rows)
        return self.core.base_actions(np.ascontiguousarray(raw[:, :self.n_obs]), starts)


def _raw(venv: Any, obs: np.ndarray) -> np.ndarray:
    """The observation before ``VecNormalize`` (its original), else ``obs``."""
    get = getattr(venv, "get_original_obs", None)
    return np.asarray(get() if get is not None else obs, np.float32)


def _normalized(venv: Any, raw: np.ndarray) -> np.ndarray:
    norm = getattr(venv, "normalize_obs", None)
    return np.asarray(norm(raw) if norm is not None else raw, np.float32)


def _actor_parameters(policy: Any) -> list[Any]:
    """The parameters of the policy's mean action: its features extractor (when it has
    any), the policy net, the action head; not the value net or the log std."""
    out: list[Any] = []
    for module in (policy.pi_features_extractor, policy.mlp_extractor.policy_net,
                   policy.action_net):
        out.extend(p for p in module.parameters() if all(p is not q for q in out))
    return out


def _fit(model: Any, venv: Any, raw: np.ndarray, target: np.ndarray, cfg: ImitationConfig,
         optimizer: Any, rng: np.random.Generator) -> float:
    """``cfg.epochs`` passes of mean squared error between the policy's mean action and
    the expert's, over the whole data set; the last epoch's mean loss."""
    import torch as th

    policy = model.policy
    x = th.as_tensor(_normalized(venv, raw), device=policy.device)
    y = th.as_tensor(target, device=policy.device)
    policy.set_training_mode(True)
    last = math.nan
    for _ in range(cfg.epochs):
        order = rng.permutation(len(x))
        losses = []
        for start in range(0, len(order), cfg.batch_size):
            idx = th.as_tensor(order[start:start + cfg.batch_size], device=policy.device)
            mean = policy.get_distribution(x[idx]).distribution.mean
            loss = th.nn.functional.mse_loss(mean, y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        last = float(np.mean(losses))
    policy.set_training_mode(False)
    return last


def run_dagger(model: Any, venv: Any, cfg: ImitationConfig, run_dir: Path, seed: int,
               progress_bar: bool = False) -> list[dict[str, Any]]:
    """DAgger on ``model``'s policy in its training ``venv`` (module doc), then the model
    anchored to the result (``AnchoredPPO.anchor_to``, ``cfg.kl_coef``). Writes
    ``imitation.json`` into ``run_dir`` (each round: its beta, the samples so far, the
    learner's mean |action - expert| on the round's states before the refit, the fit's
    loss) and returns those rows."""
    import torch as th

    from vdsim_gym._files import write_atomic

    rng = np.random.default_rng(seed + 20_000)
    expert = _Expert(venv, cfg.expert)
    n = venv.num_envs
    per_round = max(1, -(-cfg.round_steps // n))  # vector steps per round
    optimizer = th.optim.Adam(_actor_parameters(model.policy), lr=cfg.lr)
    data_x: list[np.ndarray] = []
    data_y: list[np.ndarray] = []
    rows: list[dict[str, Any]] = []
    bar = None
    if progress_bar:
        from tqdm import tqdm

        bar = tqdm(total=cfg.rounds, desc="DAgger rounds", unit="round")
    obs = venv.reset()
    starts = np.ones(n, bool)
    try:
        for r in range(cfg.rounds):
            beta = 1.0 if r == 0 else max(0.0, 1.0 - r / max(1, cfg.rounds - 1))
            gaps = []
            for _ in range(per_round):
                raw = _raw(venv, obs)
                a_exp = expert.actions(raw, starts)
                a_learn, _ = model.policy.predict(obs, deterministic=True)
                a_learn = np.asarray(a_learn, np.float32).reshape(a_exp.shape)
                gaps.append(np.abs(a_learn - a_exp).mean())
                data_x.append(raw)
                data_y.append(a_exp)
                use_expert = rng.uniform(size=n) < beta
                act = np.where(use_expert[:, None], a_exp, a_learn).astype(np.float32)
                obs, _, dones, _ = venv.step(act)
                starts = np.asarray(dones, bool)
            x, y = np.concatenate(data_x), np.concatenate(data_y)
            loss = _fit(model, venv, x, y, cfg, optimizer, rng)
            rows.append({"round": r, "beta": beta, "samples": int(len(x)),
                         "learner_gap": float(np.mean(gaps)), "fit_mse": loss})
            write_atomic(run_dir / "imitation.json", json.dumps(
                {"config": cfg.as_dict(), "rounds": rows}, indent=1))
            if bar is not None:
                bar.update(1)
                bar.set_postfix(gap=f"{rows[-1]['learner_gap']:.3f}", mse=f"{loss:.4f}")
    finally:
        if bar is not None:
            bar.close()
    with th.no_grad():
        model.policy.log_std.fill_(math.log(cfg.explore_std))
    model.anchor_to(model.policy, cfg.kl_coef, cfg.critic_warmup)
    # The normalization the learner was fitted with stays: statistics that went on
    # moving with the fine-tuning's exploration would shift every input of the imitated
    # policy (and of its anchor alike, which the KL term cannot see). The reward's scale
    # stays the one the imitated policy earns.
    if hasattr(venv, "obs_rms"):
        venv.training = False
    return rows


__all__ = ["ImitationConfig", "check_imitation", "run_dagger"]
