"""Asymmetric actor-critic policies (docs/TRAINING.md, "A privileged critic"): the critic
reads the whole observation, the actor only its first ``actor_columns`` columns.

Training with ``--critic privileged`` appends columns the controller cannot have on the
car (this episode's friction, mass, delay, the delay the last command really had) after
the observation the actor acts on; the critic, which is not needed to act, sees them too
(asymmetric actor-critic: Pinto et al. 2018; under delay, BPQL, Kim et al. NeurIPS 2023).
The actor's network is built on ``actor_columns`` inputs and is given only those, so a
saved policy acts with the plain observation: ``load_policy`` pads the privileged columns
with zeros, which no actor weight reads.

- ``PrivilegedActorCriticPolicy`` (PPO): one flatten extractor, and an MLP extractor whose
  policy net takes the first ``actor_columns`` features and whose value net takes all.
- ``PrivilegedSACPolicy`` and ``PrivilegedTQCPolicy``: the actor's feature extractor keeps
  the first ``actor_columns`` columns; the critics' (their own, as SAC's default) keep all.

SB3 saves ``actor_columns`` with the policy's keywords and rebuilds the class on load;
the safe loader (``vdsim_gym.policies.model_files``) allows these classes by name.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch as th
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor
from stable_baselines3.sac.policies import SACPolicy

from vdsim_gym.errors import ConfigError


def _check_columns(space: gym.Space, actor_columns: Any) -> int:
    shape = getattr(space, "shape", None)
    if not isinstance(space, gym.spaces.Box) or shape is None or len(shape) != 1:
        raise ConfigError(f"a privileged critic needs a flat Box observation, got {space}")
    if isinstance(actor_columns, bool) or not isinstance(actor_columns, int) \
            or not 0 < actor_columns < shape[0]:
        raise ConfigError(f"actor_columns must be a whole number in [1, {shape[0] - 1}] (the "
                          f"actor's columns, before the privileged ones), got "
                          f"{actor_columns!r}")
    return actor_columns


class LeadingColumns(BaseFeaturesExtractor):
    """The first ``columns`` entries of a flat observation (the actor's part)."""

    def __init__(self, observation_space: gym.spaces.Box, columns: int) -> None:
        super().__init__(observation_space, columns)
        self.columns = columns

    def forward(self, observations: th.Tensor) -> th.Tensor:
        return observations[..., :self.columns]


class ActorSliceMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` (separate policy and value nets) whose policy net reads only
    the first ``actor_columns`` features."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type[th.nn.Module],
                 device: Any, actor_columns: int) -> None:
        super().__init__(feature_dim, net_arch=net_arch, activation_fn=activation_fn,
                         device=device)
        actor = MlpExtractor(actor_columns, net_arch=net_arch, activation_fn=activation_fn,
                             device=device)
        self.policy_net = actor.policy_net
        self.latent_dim_pi = actor.latent_dim_pi
        self.actor_columns = actor_columns

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.policy_net(features[..., :self.actor_columns])


class PrivilegedActorCriticPolicy(ActorCriticPolicy):
    """PPO's ``MlpPolicy`` with the actor on the first ``actor_columns`` columns."""

    def __init__(self, observation_space: gym.spaces.Box, action_space: gym.Space,
                 lr_schedule: Any, *args: Any, actor_columns: int = 0, **kwargs: Any) -> None:
        self.actor_columns = _check_columns(observation_space, actor_columns)
        if kwargs.get("share_features_extractor") is False:
            raise ConfigError("a privileged critic shares the (flatten) feature extractor; "
                              "drop share_features_extractor=False")
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ActorSliceMlpExtractor(
            self.features_dim, self.net_arch, self.activation_fn, self.device,
            self.actor_columns)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "actor_columns": self.actor_columns}


class _PrivilegedActorMixin:
    """SAC-family policies: the actor's own extractor keeps the first ``actor_columns``;
    the critics' (their own: SAC's default) keep all."""

    actor_columns: int

    def __init__(self, observation_space: gym.spaces.Box, action_space: gym.spaces.Box,
                 lr_schedule: Any, *args: Any, actor_columns: int = 0, **kwargs: Any) -> None:
        self.actor_columns = _check_columns(observation_space, actor_columns)
        if kwargs.get("share_features_extractor"):
            raise ConfigError("a privileged critic needs the actor's own feature extractor; "
                              "drop share_features_extractor=True")
        super().__init__(observation_space, action_space, lr_schedule,  # type: ignore[call-arg]
                         *args, **kwargs)

    def make_actor(self, features_extractor: BaseFeaturesExtractor | None = None) -> Any:
        extractor = LeadingColumns(self.observation_space,  # type: ignore[attr-defined]
                                   self.actor_columns)
        return super().make_actor(extractor)  # type: ignore[misc]

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(),  # type: ignore[misc]
                "actor_columns": self.actor_columns}


class PrivilegedSACPolicy(_PrivilegedActorMixin, SACPolicy):
    """SAC's ``MlpPolicy`` with the actor on the first ``actor_columns`` columns."""


def privileged_policy_class(algo: str) -> type:
    """The asymmetric policy class of ``algo`` (ppo, sac, tqc); a ConfigError otherwise."""
    if algo == "ppo":
        return PrivilegedActorCriticPolicy
    if algo == "sac":
        return PrivilegedSACPolicy
    if algo == "tqc":
        return _tqc_policy()
    raise ConfigError(f"--critic privileged supports ppo, sac and tqc (their actor and critic "
                      f"networks are separate), not {algo}")


_TQC: list[type] = []


def _tqc_policy() -> type:
    """``PrivilegedTQCPolicy``, built on sb3-contrib's TQC policy at the first use."""
    if not _TQC:
        from sb3_contrib.tqc.policies import TQCPolicy

        class PrivilegedTQCPolicy(_PrivilegedActorMixin, TQCPolicy):
            """TQC's ``MlpPolicy`` with the actor on the first ``actor_columns`` columns."""

        PrivilegedTQCPolicy.__module__ = __name__
        PrivilegedTQCPolicy.__qualname__ = "PrivilegedTQCPolicy"
        _TQC.append(PrivilegedTQCPolicy)
    return _TQC[0]


def __getattr__(name: str) -> Any:
    if name == "PrivilegedTQCPolicy":  # pickled by name; sb3-contrib imported on demand
        return _tqc_policy()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


POLICY_CLASSES = ("PrivilegedActorCriticPolicy", "PrivilegedSACPolicy", "PrivilegedTQCPolicy")

__all__ = ["ActorSliceMlpExtractor", "LeadingColumns", "POLICY_CLASSES",
           "PrivilegedActorCriticPolicy", "PrivilegedSACPolicy", "privileged_policy_class"]
