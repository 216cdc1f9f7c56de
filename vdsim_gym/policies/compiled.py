"""A trained policy's actor in C++, for one decision at the cost of its arithmetic
(docs/TRAINING.md, "A decision in microseconds").

SB3's ``predict`` on one observation spends about 100 us around a 64x64 network's few
thousand multiply-adds (tensors made, gradients off, shapes checked); a controller on the
car decides once per period on one observation. ``compile_policy(policy)`` reads the
actor's layers out of the model (PPO's policy net and action head; SAC's and TQC's
latent net and mean, squashed by tanh) and its observation statistics into
``_core.MlpPolicyKernel`` (vdsim/mlp.hpp), which computes the run's features
(``--features``: the same prediction ``TrainedPolicy`` appends, in the kernel's feature
stage), normalizes, evaluates the layers in float32 (as torch does) and clips (or
squashes) the action in one call. The privileged critic's columns are not read at all
(the actor's first layer is narrower).

torch and the kernel sum and round in their own orders (and the kernel's tanh is its own,
within 1e-8 of libm's): the two agree to float32's rounding
(``tests/agents/test_compiled_policy.py``: within 1e-5 of the action range on the
observations of an episode), not bit for bit, so ``load_policy`` stays torch's and the
compiled form is asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError


def _layers(modules: Any) -> tuple[list[Any], str | None]:
    """The Linear layers of an ``nn.Sequential`` of Linear and one activation kind, and
    that activation's name (None: no hidden layer)."""
    import torch.nn as nn

    linear, acts = [], set()
    for mod in modules:
        if isinstance(mod, nn.Linear):
            linear.append(mod)
        elif isinstance(mod, nn.Tanh):
            acts.add("tanh")
        elif isinstance(mod, nn.ReLU):
            acts.add("relu")
        else:
            raise ConfigError(f"the actor has a {type(mod).__name__} layer; a compiled "
                              "policy takes Linear layers with Tanh or ReLU between them")
    if len(acts) > 1:
        raise ConfigError("the actor mixes activations; a compiled policy takes one kind")
    return linear, (acts.pop() if acts else None)


def _actor(model: Any) -> tuple[list[Any], str, bool]:
    """The actor's Linear layers (input to action), its hidden activation and whether
    the action is tanh-squashed."""
    from stable_baselines3.common.policies import ActorCriticPolicy

    policy = model.policy
    if isinstance(policy, ActorCriticPolicy):
        if getattr(policy, "squash_output", False) or getattr(policy, "use_sde", False):
            raise ConfigError("a compiled policy takes a Gaussian actor's mean (no gSDE)")
        hidden, act = _layers(policy.mlp_extractor.policy_net)
        return [*hidden, policy.action_net], act or "tanh", False
    actor = getattr(policy, "actor", None)
    if actor is not None and hasattr(actor, "latent_pi") and hasattr(actor, "mu"):
        if getattr(actor, "use_sde", False):
            raise ConfigError("a compiled policy takes SAC's Gaussian actor (no gSDE)")
        hidden, act = _layers(actor.latent_pi)
        return [*hidden, actor.mu], act or "relu", True
    raise ConfigError(f"a compiled policy takes PPO, SAC or TQC models, not "
                      f"{type(model).__name__}")


class CompiledPolicy:
    """``TrainedPolicy.predict`` in one C++ call (module doc): the same ``predict`` and
    ``required_env_kwargs``; one observation or a batch."""

    def __init__(self, policy: Any) -> None:
        from vdsim_gym.sim.baselines import MlpPolicyKernel

        self.source = policy
        self.name = policy.name
        self.required_env_kwargs = policy.required_env_kwargs
        self.env_kwargs = policy.env_kwargs
        self.features = policy.features
        layers, act, squash = _actor(policy.model)
        weights = [ly.weight.detach().double().cpu().numpy() for ly in layers]
        biases = [ly.bias.detach().double().cpu().numpy() for ly in layers]
        widths = [weights[0].shape[1]] + [w.shape[0] for w in weights]
        n_in = widths[0]
        mean: list[float] = []
        inv_std: list[float] = []
        clip = 0.0
        if policy.obs_rms is not None:
            mean = np.asarray(policy.obs_rms.mean, float)[:n_in].tolist()
            inv_std = (1.0 / np.sqrt(np.asarray(policy.obs_rms.var, float)[:n_in]
                                     + policy.epsilon)).tolist()
            clip = float(policy.clip_obs)
        self.kernel = MlpPolicyKernel(
            [w.ravel().tolist() for w in weights], [b.tolist() for b in biases], widths, act,
            mean, inv_std, clip, squash)
        if self.features is not None:  # in the kernel: one call per decision
            parts = self.features.parts
            if len(parts) != 1:
                raise ConfigError("a compiled policy computes one feature set")
            kind, kwargs = parts[0].stage()
            if kind == "path":
                self.kernel.set_path_features(**kwargs)
            else:
                self.kernel.set_gap_features(**kwargs)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        try:  # a float32 or float64 array straight to the kernel
            return self.kernel(observation), state
        except (TypeError, ValueError):  # anything else as TrainedPolicy takes it
            return self.kernel(np.asarray(observation, dtype=np.float32)), state


def compile_policy(policy: Any) -> CompiledPolicy:
    """The compiled form of a ``TrainedPolicy`` (``load_policy``'s result for a run
    without a residual base); a ConfigError for what it cannot take."""
    from vdsim_gym.policies.trained import TrainedPolicy

    if not isinstance(policy, TrainedPolicy):
        raise ConfigError(f"compile_policy takes a TrainedPolicy (load_policy of a run "
                          f"without --residual), got {type(policy).__name__}")
    return CompiledPolicy(policy)


__all__ = ["CompiledPolicy", "compile_policy"]
