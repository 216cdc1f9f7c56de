"""PPO with a KL term toward an anchor policy (docs/TRAINING.md, "Imitation, then
fine-tuning"): the fine-tuning after ``--imitate`` pays ``kl_coef * KL(pi || pi_anchor)``
per observation for leaving the imitated policy, so the reinforcement signal improves on
the expert's behaviour instead of forgetting it in the first noisy updates (KL-regularized
RL toward a behaviour prior; in delay RL, DIDA's imitated policy is the start).

``train`` is stable-baselines3's ``PPO.train`` (2.x) with the one term added to the loss;
with ``kl_coef`` 0 (or no anchor) it is SB3's, bit for bit
(tests/agents/test_imitation.py trains both side by side). The anchor is a frozen copy of
the policy, not saved with the model: a saved run loads as plain PPO for prediction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import PPO
from stable_baselines3.common.utils import explained_variance
from torch.nn import functional as F  # noqa: N812


class AnchoredPPO(PPO):
    """SB3's PPO; ``anchor_to(policy, kl_coef)`` adds the KL term (logged as
    ``train/anchor_kl``)."""

    anchor: Any = None
    kl_coef: float = 0.0
    critic_warmup: int = 0  # updates left that train the value net only

    def anchor_to(self, policy: Any, kl_coef: float, critic_warmup: int = 0) -> None:
        """Penalize KL(pi || ``policy``) with weight ``kl_coef`` (a frozen copy is kept);
        the first ``critic_warmup`` updates (one per rollout) train the value net only,
        so the policy's first steps follow advantages of a critic that has seen it."""
        self.critic_warmup = int(critic_warmup)
        # rebuilt as SB3's BaseModel.load does (a deepcopy trips on the distribution's
        # tensors of the last forward pass); its initialization draws from torch's
        # generator, so the draws happen on a fork: the training's stream stays as it was
        with th.random.fork_rng(devices=[]):
            self.anchor = type(policy)(**policy._get_constructor_parameters())
        self.anchor.to(policy.device)
        self.anchor.load_state_dict(policy.state_dict())
        self.anchor.set_training_mode(False)
        for p in self.anchor.parameters():
            p.requires_grad_(False)
        self.kl_coef = float(kl_coef)

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "anchor", "kl_coef", "critic_warmup"]

    def train(self) -> None:  # SB3 2.x PPO.train, with the anchor's KL term
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(  # type: ignore[operator]
                self._current_progress_remaining)
        anchored = self.anchor is not None and self.kl_coef > 0.0
        warmup = self.critic_warmup > 0
        if warmup:
            self.critic_warmup -= 1
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        anchor_kls: list[float] = []
        approx_kl_divs: list[Any] = []
        continue_training = True
        loss: Any = None
        for epoch in range(self.n_epochs):
            approx_kl_divs = []
            for rollout_data in self.rollout_buffer.get(self.batch_size):
                actions = rollout_data.actions
                if isinstance(self.action_space, spaces.Discrete):
                    actions = rollout_data.actions.long().flatten()
                values, log_prob, entropy = self.policy.evaluate_actions(
                    rollout_data.observations, actions)
                values = values.flatten()
                advantages = rollout_data.advantages
                if self.normalize_advantage and len(advantages) > 1:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                ratio = th.exp(log_prob - rollout_data.old_log_prob)
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
                pg_losses.append(policy_loss.item())
                clip_fractions.append(
                    th.mean((th.abs(ratio - 1) > clip_range).float()).item())
                if self.clip_range_vf is None:
                    values_pred = values
                else:
                    values_pred = rollout_data.old_values + th.clamp(
                        values - rollout_data.old_values, -clip_range_vf, clip_range_vf)
                value_loss = F.mse_loss(rollout_data.returns, values_pred)
                value_losses.append(value_loss.item())
                if entropy is None:
                    entropy_loss = -th.mean(-log_prob)
                else:
                    entropy_loss = -th.mean(entropy)
                entropy_losses.append(entropy_loss.item())
                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
                if warmup:  # the critic learns the imitated policy's values first
                    loss = self.vf_coef * value_loss
                elif anchored:  # the one addition: KL(pi || anchor) on the batch
                    obs = rollout_data.observations
                    pi = self.policy.get_distribution(obs).distribution
                    with th.no_grad():
                        ref = self.anchor.get_distribution(obs).distribution
                    kl = th.distributions.kl_divergence(pi, ref)  # type: ignore[arg-type]
                    kl = (kl.sum(dim=-1) if kl.dim() > 1 else kl).mean()
                    anchor_kls.append(kl.item())
                    loss = loss + self.kl_coef * kl
                with th.no_grad():
                    log_ratio = log_prob - rollout_data.old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(approx_kl_div)
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    if self.verbose >= 1:
                        print(f"Early stopping at step {epoch} due to reaching max kl: "
                              f"{approx_kl_div:.2f}")
                    break
                self.policy.optimizer.zero_grad()
                loss.backward()
                th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.policy.optimizer.step()
            self._n_updates += 1
            if not continue_training:
                break
        explained_var = explained_variance(self.rollout_buffer.values.flatten(),
                                           self.rollout_buffer.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        if anchor_kls:
            self.logger.record("train/anchor_kl", np.mean(anchor_kls))
        if hasattr(self.policy, "log_std"):
            self.logger.record("train/std", th.exp(self.policy.log_std).mean().item())
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if self.clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)


__all__ = ["AnchoredPPO"]
