"""``train``: one training run, from the hyperparameter block and the options to the run
folder (the package docstring lists what it holds). SIGTERM is raised as an exception
from the start of ``train``: a stop during the start-up removes the folder it made, a stop
while SB3 learns saves the model and statistics, and signals during that final save wait
until it is done (``signals_held``). ``vdsim_gym.training.run_folder`` says what a folder
holds and trains it again."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import json
import math
import platform
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._files import atomic_path, clean_stale_temps, write_atomic
from vdsim_gym._signals import raise_on_sigterm, restore_sigterm, signals_held
from vdsim_gym.errors import TrainingError
from vdsim_gym.policies.algos import algo_class, check_algo
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
    check_run_name,
    check_select_by,
    parse_latency,
    parse_randomize,
)
from vdsim_gym.training.pipeline import observation_plan

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
          eval_freq: int = 10_000, eval_episodes: int | None = None,
          checkpoint_freq: int = 50_000,
          progress_bar: bool = True, tensorboard: bool | None = None, verbose: int = 0,
          run_name: str | None = None, num_threads: int | None = 1,
          residual: str | None = None, residual_scale: Any = 0.1,
          select_by: str = "return",
          eval_scenarios: Sequence[Mapping[str, Any]] | None = None,
          critic: str = "plain", features: Any = None,
          known_delay: Any = None, imitate: str | None = None, imitate_rounds: int = 8,
          imitate_steps: int = 8192, kl_coef: float = 0.5,
          select_min_gap: float | None = None) -> TrainResult:
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
    which evaluation it was. ``eval_scenarios``: the evaluation runs one episode per
    scenario (a mapping of env kwargs over the training env's, without its
    ``randomize``: a fixed grid, e.g. each training cycle at each end of a delay range),
    all of them at every evaluation, so the pick compares the models on the same,
    representative episodes; ``eval_episodes`` is then their number (giving another is
    an error). ``critic``: "plain" or "privileged" (PPO, SAC, TQC: the critic also sees
    the episode's draws and the step's realized delay, the actor does not);
    ``features``: controller features appended to the observation ("predicted_state":
    the single-track prediction across ``known_delay`` [s, or "30ms"; default the env's
    own fixed loop delay]); both recorded in config.yml and rebuilt by ``load_policy``
    (``vdsim_gym.training.pipeline``). ``imitate``: a controller spec (PPO only): DAgger
    from it for ``imitate_rounds`` rounds of ``imitate_steps`` env steps before the PPO
    steps, which then pay ``kl_coef`` times the KL toward the imitated policy
    (``vdsim_gym.training.imitate``; imitation.json in the run folder).
    ``select_min_gap`` [m]: with ``select_by`` a metric, an evaluation episode whose
    smallest gap (``min_gap``, the ACC's) falls below it counts as failed, so the pick
    scores near misses, not only collisions."""
    # what reproduces the run (``rerun``): this call's options, the run folder's aside
    call = {k: v for k, v in locals().items()  # every option, as given (first statement)
            if k not in ("out", "run_name", "progress_bar", "tensorboard", "verbose")}
    call.update(env_kwargs=dict(env_kwargs or {}), hyperparams=dict(hyperparams or {}),
                hyperparams_file=None if hyperparams_file is None else str(hyperparams_file),
                eval_scenarios=None if eval_scenarios is None else list(eval_scenarios))
    previous = raise_on_sigterm()  # first: a stop during the start-up is an interrupt
    try:
        return _train(algo, env_id, call=call, timesteps=timesteps, seed=seed, latency=latency,
                      randomize=randomize, action_history=action_history,
                      env_kwargs=env_kwargs, hyperparams=hyperparams,
                      hyperparams_file=hyperparams_file, out=out, eval_freq=eval_freq,
                      eval_episodes=eval_episodes, checkpoint_freq=checkpoint_freq,
                      progress_bar=progress_bar, tensorboard=tensorboard, verbose=verbose,
                      run_name=run_name, num_threads=num_threads, residual=residual,
                      residual_scale=residual_scale, select_by=select_by,
                      eval_scenarios=eval_scenarios, critic=critic, features=features,
                      known_delay=known_delay, imitate=imitate,
                      imitate_rounds=imitate_rounds, imitate_steps=imitate_steps,
                      kl_coef=kl_coef, select_min_gap=select_min_gap)
    finally:
        restore_sigterm(previous)


def _eval_scenarios(scenarios: Sequence[Mapping[str, Any]] | None,
                    eval_episodes: int | None) -> list[dict[str, Any]]:
    """``train``'s ``eval_scenarios`` checked: a non-empty list of mappings (or None:
    none), with no ``eval_episodes`` other than their number."""
    if scenarios is None:
        return []
    if isinstance(scenarios, Mapping) or not isinstance(scenarios, Sequence) or not scenarios \
            or not all(isinstance(sc, Mapping) for sc in scenarios):
        raise TrainingError(f"eval_scenarios must be a non-empty list of env-kwargs mappings, "
                            f"e.g. [{{\"cycle\": \"highway\"}}], got {scenarios!r}")
    out = [dict(sc) for sc in scenarios]
    if eval_episodes is not None and eval_episodes != len(out):
        raise TrainingError(f"--eval-scenarios runs one episode per scenario ({len(out)}); "
                            f"drop --eval-episodes {eval_episodes}")
    return out


def _train(algo: str, env_id: str, *, call: dict[str, Any], timesteps: int | None, seed: int,
           latency: str | None,
           randomize: Any, action_history: int, env_kwargs: Mapping[str, Any] | None,
           hyperparams: Mapping[str, Any] | None, hyperparams_file: str | Path | None,
           out: str | Path, eval_freq: int, eval_episodes: int | None, checkpoint_freq: int,
           progress_bar: bool, tensorboard: bool | None, verbose: int,
           run_name: str | None, num_threads: int | None, residual: str | None,
           residual_scale: Any, select_by: str,
           eval_scenarios: Sequence[Mapping[str, Any]] | None, critic: str,
           features: Any, known_delay: Any, imitate: str | None, imitate_rounds: int,
           imitate_steps: int, kl_coef: float,
           select_min_gap: float | None) -> TrainResult:
    import time

    import stable_baselines3 as sb3
    import yaml
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor, VecNormalize

    from vdsim_gym.sb3_vec_env import make_sb3_vec_env
    from vdsim_gym.traces.provenance import VERSION

    algo = check_algo(algo)
    if run_name is not None:  # a name that leaves --out: refused before any work
        check_run_name(run_name, out)
    cls = algo_class(algo)  # sb3-contrib's TQC and CrossQ: missing is an error before work
    block = load_hyperparams(algo, env_id, hyperparams_file)
    file_block = _jsonable(block)  # recorded: a rerun checks the file still says this
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
    from vdsim_gym._checks import check_action_history
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
    call = {**call, "randomize": None if rand is None else rand.as_dict(),
            "action_history": history,
            "env_kwargs": {k: v for k, v in call["env_kwargs"].items()
                           if k not in ("randomize", "action_history")}}
    scenarios = _eval_scenarios(eval_scenarios, eval_episodes)
    eval_episodes = len(scenarios) if scenarios else 5 if eval_episodes is None \
        else eval_episodes
    # the evaluation env: the training one, or a fixed grid of scenarios over it
    kwargs_eval = dict(kwargs_env) if not scenarios else {
        **{k: v for k, v in kwargs_env.items() if k != "randomize"},
        "per_env_kwargs": scenarios}

    # the options' own errors first, then a missing extra (the progress bar's tqdm and
    # rich, tensorboard); bad env options (and --select-by) fail before the run folder exists
    tensorboard = _check_extras(tensorboard, progress_bar)
    metric_labels, success_outcome = _probe_env(env_id, kwargs_env)
    shared_eval = {a: b for a, b in kwargs_eval.items() if a != "per_env_kwargs"}
    for k, sc in enumerate(scenarios):  # each evaluation env too, with the env's message
        try:
            _probe_env(env_id, {**shared_eval, **sc})
        except TrainingError as exc:
            raise TrainingError(f"--eval-scenarios [{k}] {sc}: {exc}") from None
    select_by = check_select_by(select_by, metric_labels)
    if select_min_gap is not None:
        if select_by == "return" or "min_gap" not in metric_labels:
            raise TrainingError("--select-min-gap counts near misses in a metric's pick: "
                                "give --select-by METRIC on an env with a min_gap (the ACC)")
        if isinstance(select_min_gap, bool) or not isinstance(select_min_gap, (int, float)) \
                or not math.isfinite(select_min_gap) or select_min_gap < 0:
            raise TrainingError(f"--select-min-gap must be a finite number of metres >= 0, "
                                f"got {select_min_gap!r}")
    residual_cfg = None if residual is None else _residual_config(env_id, kwargs_env,
                                                                  residual, residual_scale)
    plan = observation_plan(env_id, kwargs_env, rand, algo=algo, critic=critic,
                            features=features, known_delay=known_delay)
    imitation = None
    if imitate is not None:
        from vdsim_gym.training.imitate import check_imitation

        imitation = check_imitation(env_id, kwargs_env, imitate, algo=algo,
                                    residual=residual, rounds=imitate_rounds,
                                    round_steps=imitate_steps, kl_coef=kl_coef)
        from vdsim_gym.training.anchored_ppo import AnchoredPPO

        cls = AnchoredPPO

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = check_run_name(run_name or f"{env_id}_{algo}_s{seed}_{stamp}", out)
    # The start-up (the envs, the model, config.yml) owns the folder it makes: a stop or
    # an error before the training starts removes it, so the name stays free.
    made = started = False
    outcome = "failed"
    envs: list[Any] = []
    try:
        with signals_held():  # made and recorded as one step
            run_dir.mkdir(parents=True, exist_ok=False)
            made = True
        base: VecEnv = make_sb3_vec_env(env_id, n_envs, seed=seed, **kwargs_env)
        envs.append(base)
        metrics = tuple(base.get_attr("METRIC_LABELS", [0])[0])
        base_eval: VecEnv = make_sb3_vec_env(env_id, len(scenarios) or 1,
                                             seed=seed + 10_000, **kwargs_eval)
        envs.append(base_eval)
        if residual_cfg is not None:
            from vdsim_gym.residual import ResidualVecEnv

            base = ResidualVecEnv(base, residual_cfg["base"], residual_cfg["scale"])
            base_eval = ResidualVecEnv(base_eval, residual_cfg["base"], residual_cfg["scale"])
        base, base_eval = plan.wrap(base), plan.wrap(base_eval)
        # The task's metrics (e_y RMSE, min gap, ...) as monitor.csv columns beside r, l, t.
        venv: VecEnv = VecMonitor(_with_summary_keys(base, metrics),
                                  filename=str(run_dir / "monitor.csv"), info_keywords=metrics)
        eval_env: VecEnv = VecMonitor(_with_summary_keys(   # wrapped alike: SB3 syncs the chains
            base_eval, metrics))
        if norm is not None:
            venv = VecNormalize(venv, **{"gamma": block.get("gamma", 0.99), **norm})
            eval_env = VecNormalize(eval_env, training=False, norm_reward=False,
                                    **{k: v for k, v in norm.items() if k != "norm_reward"})
        envs = [venv, eval_env]
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
        if plan.privileged is not None:
            shape = venv.observation_space.shape
            assert shape is not None
            policy, algo_kwargs["policy_kwargs"] = plan.policy(
                algo, policy, algo_kwargs.get("policy_kwargs"), shape[0])
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
            "n_envs": n_envs, "policy": getattr(policy, "__name__", policy),
            "normalize": norm, "latency": latency,
            "randomize": None if rand is None else rand.as_dict(),
            "action_history": history, "residual": residual_cfg,
            "env_kwargs": _jsonable({k: v for k, v in kwargs_env.items()
                                     if k not in ("latency", "randomize", "action_history")}),
            "hyperparams": _jsonable(algo_kwargs), "eval_freq": eval_freq,
            "eval_episodes": eval_episodes,
            **({"eval_scenarios": _jsonable(scenarios)} if scenarios else {}),
            "select_by": select_by, "select_min_gap": select_min_gap,
            "num_threads": num_threads, **plan.config(),
            "imitate": None if imitation is None else imitation.as_dict(),
            "hyperparams_file": str(hyperparams_file or f"agents/hyperparams/{algo}.yml"),
            "versions": {"vdsim_gym": VERSION, "stable_baselines3": sb3.__version__,
                         "python": platform.python_version(), "numpy": np.__version__},
            "command": " ".join(sys.argv),
            "train_call": _jsonable(call), "hyperparams_block": file_block,
            "started": stamp,
        }
        t0 = time.perf_counter()
        with signals_held():  # the start-up ends: from here on a stop saves the run
            write_atomic(run_dir / "config.yml", yaml.safe_dump(config, sort_keys=False))
            started = True
        if imitation is not None:
            from vdsim_gym.training.imitate import run_dagger

            run_dagger(model, venv, imitation, run_dir, seed, progress_bar)
        model.learn(n_timesteps, callback=_callbacks(run_dir, venv, eval_env, norm, n_envs,
                                                     eval_freq, eval_episodes,
                                                     checkpoint_freq, verbose, metrics,
                                                     select_by, success_outcome,
                                                     seed + 10_000, select_min_gap),
                    progress_bar=progress_bar)
        outcome = "completed"
    except BaseException as exc:
        if not started:  # the start-up's folder is removed, the envs closed
            with signals_held(raise_after=False):
                for env in envs:
                    with contextlib.suppress(Exception):
                        env.close()
                if made:
                    shutil.rmtree(run_dir, ignore_errors=True)
        elif isinstance(exc, KeyboardInterrupt):
            outcome = "interrupted"
        raise
    finally:  # an interrupted (Ctrl-C) or terminated (SIGTERM) run keeps what it learned;
        # signals wait until the final files are written (a second Ctrl-C, the parent's
        # SIGTERM to a worker), then stop the command as an interrupt
        if started:
            with signals_held(f"{run_dir}: saving the model; stopping once it is "
                                  "written"):
                wall = time.perf_counter() - t0
                _finalize(run_dir, model, venv if norm is not None else None, outcome, wall,
                          n_timesteps)
                venv.close()
                eval_env.close()
    return TrainResult(run_dir, model, int(model.num_timesteps), wall, metric_labels)


def _finalize(run_dir: Path, model: Any, norm_venv: Any, outcome: str, wall: float,
              target: int) -> None:
    """The run folder's final files, each written whole (``atomic_path``): model.zip,
    vecnormalize.pkl (``norm_venv``: the VecNormalize, or None) and train_time.json
    (wall time, steps done of ``target``, ``outcome``: completed, interrupted, failed);
    a best model left staged is finished or dropped, and temporary files of killed
    writers are removed."""
    from vdsim_gym._best import recover_best

    recover_best(run_dir)
    with atomic_path(run_dir / "model.zip") as tmp:
        model.save(tmp)
    if norm_venv is not None:
        with atomic_path(run_dir / "vecnormalize.pkl") as tmp:
            norm_venv.save(str(tmp))
    write_atomic(run_dir / "train_time.json", json.dumps(
        {"wall_time_s": wall, "timesteps_done": int(model.num_timesteps),
         "timesteps_target": int(target), "outcome": outcome}))
    for folder in (run_dir, run_dir / "checkpoints"):
        clean_stale_temps(folder)


def _residual_config(env_id: str, kwargs_env: Mapping[str, Any], spec: str,
                     scale: Any) -> dict[str, Any]:
    """The residual run's base spec and scale, checked on the run's env (a
    delay-compensating base without ``delay=`` follows each episode's delay)."""
    import gymnasium as gym

    from vdsim_gym.controllers.residual import check_scale
    from vdsim_gym.policies.loading import base_controller

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
