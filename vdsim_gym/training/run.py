"""``train``: one training run, from the hyperparameter block and the options to the run
folder (the package docstring lists what it holds). SIGTERM is raised as an exception while
SB3 learns, so a stopped run (Ctrl-C or SIGTERM) still saves its model and statistics."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._signals import raise_on_sigterm, restore_sigterm
from vdsim_gym.policies import TrainingError, algo_class, check_algo
from vdsim_gym.training.callbacks import _callbacks, _with_summary_keys
from vdsim_gym.training.hyperparams import (
    _eval_policy_kwargs,
    _normalize_kwargs,
    load_hyperparams,
)
from vdsim_gym.training.options import (
    _check_extras,
    _option_from_env_kwargs,
    _probe_env,
    check_select_by,
    parse_latency,
    parse_randomize,
)

ON_POLICY = ("ppo",)


@dataclasses.dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    model: Any  # the trained SB3 model (in memory)
    timesteps: int
    wall_time_s: float
    metric_labels: dict[str, str] = dataclasses.field(default_factory=dict)  # the task's


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def train(algo: str, env_id: str, *, timesteps: int | None = None, seed: int = 0,
          latency: str | None = None, randomize: str | Mapping[str, Any] | None = None,
          action_history: int = 0, env_kwargs: Mapping[str, Any] | None = None,
          hyperparams: Mapping[str, Any] | None = None,
          hyperparams_file: str | Path | None = None, out: str | Path = "runs",
          eval_freq: int = 10_000, eval_episodes: int = 5, checkpoint_freq: int = 50_000,
          progress_bar: bool = True, tensorboard: bool | None = None, verbose: int = 0,
          run_name: str | None = None, num_threads: int | None = 1,
          residual: str | None = None, residual_scale: Any = 0.1,
          select_by: str = "return") -> TrainResult:
    """Train ``algo`` on ``env_id``; returns the run folder and the model.

    ``timesteps`` overrides the file's n_timesteps; ``hyperparams`` overrides single keys
    of the file's block (as rl-zoo3's ``--hyperparams``); ``latency``: a spec for
    ``parse_latency``, applied to the training and the evaluation env; ``randomize``:
    domain randomization (``parse_randomize``: text, a .yml file or a mapping), and
    ``action_history``: past actions in the observation, both env options of the training
    and the evaluation env, recorded in config.yml (``load_policy`` rebuilds the
    observation from it); ``eval_freq`` and
    ``checkpoint_freq`` count total env steps (over all envs); ``tensorboard=None`` logs
    for TensorBoard when it is installed (True: required); ``progress_bar`` needs tqdm
    and rich (the ``train`` extra). ``num_threads``: torch's intra-op threads (rl-zoo3's
    ``--num-threads``); 1 by default, since a 64x64 network gains nothing from more and
    several trainings on one machine then do not fight over the cores (None: torch's
    default, one per core). ``residual``: a base controller spec ("stanley",
    "stanley_dc", "acc_pid", "cycle_follower", ...): the agent learns a correction of at
    most ``residual_scale`` (action units; one number or one per action) on top of it
    (``vdsim_gym.residual``), recorded in config.yml so that ``load_policy``
    rebuilds base + correction. ``select_by``: which evaluation's model is
    best_model.zip: "return" (EvalCallback's rule, the highest mean return) or a task
    metric of the env ("rms_e_y", "rms_speed_error", ...: the lowest mean over the
    evaluation episodes, evaluations with fewer failed episodes first); best.json says
    which evaluation it was."""
    import time

    import stable_baselines3 as sb3
    import yaml
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize

    from vdsim_gym.sb3_vec_env import make_sb3_vec_env
    from vdsim_gym.traces.provenance import VERSION

    algo = check_algo(algo)
    cls = algo_class(algo)  # sb3-contrib's TQC and CrossQ: missing is an error before work
    block = load_hyperparams(algo, env_id, hyperparams_file)
    for key, value in (hyperparams or {}).items():
        block[key] = (_eval_policy_kwargs(value, "hyperparams") if key == "policy_kwargs"
                      and isinstance(value, str) else value)
    n_envs = int(block.pop("n_envs", 1))
    if algo not in ON_POLICY and n_envs != 1:
        raise TrainingError(f"{algo} trains on a single env; remove n_envs: {n_envs}")
    file_timesteps = block.pop("n_timesteps", 0)
    n_timesteps = int(timesteps if timesteps is not None else file_timesteps)
    if n_timesteps <= 0:
        raise TrainingError("timesteps must be a positive number of env steps")
    if not (isinstance(seed, int) and seed >= 0):
        raise TrainingError(f"seed must be an integer >= 0, got {seed!r}")
    if num_threads is not None and not (isinstance(num_threads, int) and num_threads >= 1):
        raise TrainingError(f"num_threads must be an integer >= 1 or None, got "
                            f"{num_threads!r}")
    if num_threads is not None:
        import torch

        torch.set_num_threads(num_threads)
    policy = block.pop("policy", "MlpPolicy")
    norm = _normalize_kwargs(block.pop("normalize", False))
    kwargs_env = {**dict(block.pop("env_kwargs", None) or {}), **dict(env_kwargs or {})}
    noise_type, noise_std = block.pop("noise_type", None), block.pop("noise_std", None)
    latency_model = parse_latency(latency)
    if latency_model is not None:
        kwargs_env["latency"] = latency_model
    rand = parse_randomize(randomize)
    history = _option_from_env_kwargs(kwargs_env, "action_history", action_history, 0)
    rand = _option_from_env_kwargs(kwargs_env, "randomize", rand, None)
    from vdsim_gym.envs.core_env import check_action_history
    from vdsim_gym.sim.randomization import Randomization

    try:
        history = check_action_history(history)
        rand = Randomization.parse(rand)
    except ValueError as exc:
        raise TrainingError(str(exc)) from None
    if rand is not None and rand.changes_latency and "latency" in kwargs_env:
        raise TrainingError("--latency and --randomize latency=... both set the delay: the "
                            "randomization draws a latency model per episode; give one")
    if rand is not None:
        kwargs_env["randomize"] = rand
    if history:
        kwargs_env["action_history"] = history

    # the options' own errors first, then a missing extra (the progress bar's tqdm and
    # rich, tensorboard); bad env options (and --select-by) fail before the run folder exists
    tensorboard = _check_extras(tensorboard, progress_bar)
    metric_labels, success_outcome = _probe_env(env_id, kwargs_env)
    select_by = check_select_by(select_by, metric_labels)
    residual_cfg = None if residual is None else _residual_config(env_id, kwargs_env,
                                                                  residual, residual_scale)

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = Path(out) / (run_name or f"{env_id}_{algo}_s{seed}_{stamp}")
    run_dir.mkdir(parents=True, exist_ok=False)

    base: VecEnv = make_sb3_vec_env(env_id, n_envs, seed=seed, **kwargs_env)
    metrics = tuple(base.get_attr("METRIC_LABELS", [0])[0])
    base_eval: VecEnv = make_sb3_vec_env(env_id, 1, seed=seed + 10_000, **kwargs_env)
    if residual_cfg is not None:
        from vdsim_gym.residual import ResidualVecEnv

        base = ResidualVecEnv(base, residual_cfg["base"], residual_cfg["scale"])
        base_eval = ResidualVecEnv(base_eval, residual_cfg["base"], residual_cfg["scale"])
    # The task's metrics (e_y RMSE, min gap, ...) as monitor.csv columns beside r, l, t.
    venv: VecEnv = VecMonitor(_with_summary_keys(base, metrics),
                              filename=str(run_dir / "monitor.csv"), info_keywords=metrics)
    eval_env: VecEnv = VecMonitor(_with_summary_keys(   # wrapped alike: SB3 syncs the chains
        base_eval, metrics))
    if norm is not None:
        venv = VecNormalize(venv, **{"gamma": block.get("gamma", 0.99), **norm})
        eval_env = VecNormalize(eval_env, training=False, norm_reward=False,
                                **{k: v for k, v in norm.items() if k != "norm_reward"})
    algo_kwargs = dict(block)
    if noise_type is not None:
        from stable_baselines3.common.noise import NormalActionNoise

        if noise_type != "normal":
            raise TrainingError(f"noise_type {noise_type!r}: only 'normal' is supported")
        shape = venv.action_space.shape
        assert shape is not None  # a Box: every VDSim env's action space
        dim = shape[0]
        algo_kwargs["action_noise"] = NormalActionNoise(np.zeros(dim),
                                                        float(noise_std) * np.ones(dim))
    requested = n_timesteps
    if algo in ON_POLICY:  # PPO collects whole rollouts of n_steps x n_envs env steps
        rollout = int(algo_kwargs.get("n_steps", 2048)) * n_envs
        n_timesteps = -(-n_timesteps // rollout) * rollout
        if n_timesteps != requested:
            sys.stderr.write(f"note: {algo} collects whole rollouts of n_steps x n_envs = "
                             f"{rollout} env steps; training {n_timesteps} steps for the "
                             f"{requested} asked\n")
    try:
        model = cls(policy, venv, seed=seed, verbose=verbose,
                    tensorboard_log=str(run_dir / "tb") if tensorboard else None,
                    **algo_kwargs)
    except TypeError as exc:
        raise TrainingError(f"{algo} hyperparameters: {exc}") from None

    config = {
        "algo": algo, "env_id": env_id, "seed": seed, "timesteps": n_timesteps,
        **({"timesteps_requested": requested} if requested != n_timesteps else {}),
        "n_envs": n_envs, "policy": policy, "normalize": norm, "latency": latency,
        "randomize": None if rand is None else rand.as_dict(),
        "action_history": history, "residual": residual_cfg,
        "env_kwargs": _jsonable({k: v for k, v in kwargs_env.items()
                                 if k not in ("latency", "randomize", "action_history")}),
        "hyperparams": _jsonable(algo_kwargs), "eval_freq": eval_freq,
        "eval_episodes": eval_episodes, "select_by": select_by, "num_threads": num_threads,
        "hyperparams_file": str(hyperparams_file or f"agents/hyperparams/{algo}.yml"),
        "versions": {"vdsim_gym": VERSION, "stable_baselines3": sb3.__version__,
                     "python": platform.python_version(), "numpy": np.__version__},
        "command": " ".join(sys.argv),
        "started": stamp,
    }
    t0 = time.perf_counter()
    previous = raise_on_sigterm()  # from here on a stop writes the run folder
    try:
        (run_dir / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        model.learn(n_timesteps, callback=_callbacks(run_dir, venv, eval_env, norm, n_envs,
                                                     eval_freq, eval_episodes,
                                                     checkpoint_freq, verbose, metrics,
                                                     select_by, success_outcome,
                                                     seed + 10_000),
                    progress_bar=progress_bar)
    finally:  # an interrupted (Ctrl-C) or terminated (SIGTERM) run keeps what it learned
        restore_sigterm(previous)
        model.save(run_dir / "model.zip")
        if norm is not None:
            assert isinstance(venv, VecNormalize)  # wrapped so above when norm is given
            venv.save(str(run_dir / "vecnormalize.pkl"))
        wall = time.perf_counter() - t0
        (run_dir / "train_time.json").write_text(json.dumps(
            {"wall_time_s": wall, "timesteps_done": int(model.num_timesteps)}))
        venv.close()
        eval_env.close()
    return TrainResult(run_dir, model, int(model.num_timesteps), wall, metric_labels)


def _residual_config(env_id: str, kwargs_env: Mapping[str, Any], spec: str,
                     scale: Any) -> dict[str, Any]:
    """The residual run's base spec and scale, checked on the run's env (a
    delay-compensating base without ``delay=`` follows each episode's delay)."""
    import gymnasium as gym

    from vdsim_gym.controllers.residual import check_scale
    from vdsim_gym.policies import base_controller

    spec = str(spec).strip()
    env = gym.make(env_id, **kwargs_env)
    try:
        base = base_controller(env, spec)  # a bad spec fails before the run folder exists
        obs, _ = env.reset(seed=0)
        try:  # and so does a base that cannot drive this env (Stanley on the ACC)
            base.predict(np.asarray(obs)[None], episode_start=np.array([True]))
        except KeyError as exc:
            raise TrainingError(f"it cannot drive {env_id}: "
                                f"{exc.args[0] if exc.args else exc}") from None
        m = len(env.unwrapped.action_names)  # type: ignore[attr-defined]
        s = check_scale(scale, m)
    except ValueError as exc:
        raise TrainingError(f"--residual {spec!r}: {exc}") from None
    finally:
        env.close()
    return {"base": spec, "scale": [float(v) for v in s]}
