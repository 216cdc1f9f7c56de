"""A training run's observation beyond the env's (docs/TRAINING.md): the controller's
features (``--features``, across ``--known-delay``) and the privileged critic's columns
(``--critic privileged``), checked before the run folder exists, applied to the run's
VecEnvs in one order (the env's observation, a residual base's command, the features, the
privileged columns) and recorded in config.yml, from which ``load_policy`` rebuilds the
actor's input."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from vdsim_gym.errors import ConfigError, TrainingError

CRITICS = ("plain", "privileged")


def parse_known_delay(value: Any) -> float | None:
    """``--known-delay``: None, seconds, or a text such as "30ms" or "0.03s"."""
    if value is None:
        return None
    from vdsim_gym.controllers.features import check_known_delay

    if isinstance(value, str):
        from vdsim_gym.config.delays import parse_delays

        try:
            models = parse_delays(value)
        except ConfigError as exc:
            raise TrainingError(f"--known-delay {value!r}: {exc}") from None
        if len(models) != 1 or (models[0] is not None and models[0].kind != "fixed"):
            raise TrainingError(f"--known-delay {value!r}: give one fixed delay, e.g. 30ms")
        return 0.0 if models[0] is None else float(models[0].mean_delay)
    try:
        return check_known_delay(value)
    except ConfigError as exc:
        raise TrainingError(str(exc)) from None


@dataclasses.dataclass
class ObservationPlan:
    """What a run appends: ``features`` (an ``ObservationFeatures`` or None) and
    ``privileged`` (a ``PrivilegedColumns`` or None), with the ``known_delay`` [s]."""

    features: Any = None
    privileged: Any = None
    known_delay: float | None = None

    def wrap(self, venv: Any) -> Any:
        """``venv`` with the features, then the privileged columns, appended."""
        from vdsim_gym.training.observation import FeatureVecEnv, PrivilegedVecEnv

        if self.features is not None:
            venv = FeatureVecEnv(venv, self.features)
        if self.privileged is not None:
            venv = PrivilegedVecEnv(venv, self.privileged)
        return venv

    def policy(self, algo: str, policy: Any, policy_kwargs: Any, n_obs: int
               ) -> tuple[Any, dict[str, Any]]:
        """The policy class and keywords for a model on ``n_obs`` columns: with a
        privileged critic, the asymmetric class of ``algo`` with ``actor_columns``."""
        kwargs = dict(policy_kwargs or {})
        if self.privileged is None:
            return policy, kwargs
        from vdsim_gym.policies.asymmetric import privileged_policy_class

        if policy != "MlpPolicy":
            raise TrainingError(f"--critic privileged builds its own MlpPolicy; the "
                                f"hyperparameters' policy {policy!r} is not one")
        try:
            cls = privileged_policy_class(algo)
        except ConfigError as exc:
            raise TrainingError(str(exc)) from None
        kwargs["actor_columns"] = n_obs - len(self.privileged)
        return cls, kwargs

    def config(self) -> dict[str, Any]:
        """config.yml's entries (what ``load_policy`` reads back)."""
        return {"critic": "plain" if self.privileged is None else "privileged",
                "features": list(self.features.features) if self.features else [],
                "known_delay": self.known_delay,
                "privileged_columns": list(self.privileged.names) if self.privileged
                else []}


def observation_plan(env_id: str, kwargs_env: Mapping[str, Any], rand: Any, *, algo: str,
                     critic: str, features: Any, known_delay: Any) -> ObservationPlan:
    """The run's ``ObservationPlan``, every option checked on the run's env; errors are
    TrainingErrors naming the option and the fix."""
    import gymnasium as gym

    from vdsim_gym.controllers.features import ObservationFeatures, check_features

    if critic not in CRITICS:
        raise TrainingError(f"--critic {critic!r}: use plain or privileged")
    try:
        names = check_features(features)
    except ConfigError as exc:
        raise TrainingError(f"--features: {exc}") from None
    delay = parse_known_delay(known_delay)
    if delay is not None and not names:
        raise TrainingError("--known-delay is the delay the features predict across: give "
                            "--features predicted_state with it (or drop --known-delay)")
    plan = ObservationPlan(known_delay=delay)
    if not names and critic == "plain":
        return plan
    env = gym.make(env_id, **{k: v for k, v in kwargs_env.items() if k != "randomize"})
    try:
        base: Any = env.unwrapped
        if names:
            try:  # applies to this env (checked before its delay is looked for)
                ObservationFeatures(env, names, 0.0)
            except ConfigError as exc:
                raise TrainingError(f"--features {','.join(names)} on {env_id}: {exc}") \
                    from None
            if delay is None:
                delay = _default_delay(env, rand)
            plan.features = ObservationFeatures(env, names, delay)
            plan.known_delay = delay
        if critic == "privileged":
            from vdsim_gym.policies.asymmetric import privileged_policy_class
            from vdsim_gym.training.observation import PrivilegedColumns

            try:
                privileged_policy_class(algo)
            except ConfigError as exc:
                raise TrainingError(str(exc)) from None
            timed = any(getattr(base, n, None) is not None
                        for n in ("latency", "network", "obs_delay"))
            if rand is None and not timed:
                raise TrainingError(
                    "--critic privileged: this run has no randomization and no delay, so "
                    "the critic would see nothing the actor does not; give --randomize or "
                    "--latency (or drop --critic)")
            plan.privileged = PrivilegedColumns(rand, float(base.control_period))
    finally:
        env.close()
    return plan


def _default_delay(env: Any, rand: Any) -> float:
    """The env's own loop delay (computation, sensor, steering channel) when fixed."""
    from vdsim_gym.controllers.prediction import loop_delay

    if rand is not None and (rand.changes_latency or rand.changes_obs_delay
                             or rand.changes_channels):
        raise TrainingError("--features predicted_state: the run draws its delay per episode "
                            "(--randomize), so give the delay the controller is told: "
                            "--known-delay 30ms (e.g. the middle of the range)")
    try:
        return loop_delay(env)
    except ConfigError as exc:
        raise TrainingError(f"--features predicted_state: {exc}; give --known-delay") \
            from None


__all__ = ["CRITICS", "ObservationPlan", "observation_plan", "parse_known_delay"]
