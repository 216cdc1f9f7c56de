"""Train stable-baselines3 agents on the VDSim envs.

``train(algo, env_id, ...)`` reads the algorithm's hyperparameters from
``agents/hyperparams/<algo>.yml`` (rl-zoo3's format: one block per env id), builds the
env on the C++ vector session (``make_sb3_vec_env``: ``n_envs`` envs for PPO, a single
env for the off-policy algorithms), wraps it in ``VecNormalize`` and ``VecMonitor``,
evaluates on a separate env with ``EvalCallback``, saves checkpoints and TensorBoard logs,
and writes a run folder:

    <out>/<env_id>_<algo>_s<seed>_<stamp>/
        model.zip, vecnormalize.pkl   the final model and its normalization statistics
        best_model.zip, best_vecnormalize.pkl   EvalCallback's best (deterministic mean
                                      return) and the statistics at that moment
        config.yml                    the exact configuration (hyperparameters, env
                                      kwargs, randomization, action history, timesteps,
                                      seed, versions, command)
        evaluations.npz, monitor.csv  EvalCallback's log; episode returns and lengths
        checkpoints/, tb/             periodic checkpoints; TensorBoard logs

Loading what a run saved is ``vdsim_gym.policies`` (``load_policy``, ``TrainedPolicy``,
``shipped_model``, ``shipped_models``, ``required_env_kwargs``, ``TrainingError``), below
the evaluation code that uses it; they stay importable from here.
``plot_learning_curves(run, png)`` draws a run's learning curves. ``vdsim-gym train``
(``vdsim_gym.cli.train``; ``agents/train.py`` is the same command) is the command line.
Needs the ``train`` extra (stable-baselines3, tensorboard, tqdm, rich).
"""

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

from vdsim_gym._files import load_yaml
from vdsim_gym._signals import raise_on_sigterm, restore_sigterm
from vdsim_gym.policies import (  # re-exported: loading lives in vdsim_gym.policies
    ALGOS,
    TrainedPolicy,
    TrainingError,
    check_algo,
    load_policy,
    required_env_kwargs,
    shipped_model,
    shipped_models,
)

ON_POLICY = ("ppo",)
# rl-zoo3 keys this trainer does not support (rl_zoo3 itself does).
_UNSUPPORTED_ZOO_KEYS = ("env_wrapper", "frame_stack", "callback", "vec_env_wrapper",
                         "normalize_kwargs", "replay_buffer_class",
                         "replay_buffer_kwargs")


# ------------------------------------------------------------------ configuration

def parse_latency(text: str | None) -> Any:
    """A latency model from "fixed:20ms", "20ms", "uniform:0:40ms" (or "uniform:0-40ms"),
    "normal:10:5ms", "none"; None or "none": no latency."""
    if text is None or str(text).strip().lower() in ("", "none"):
        return None
    from vdsim_gym.latency import parse_delays  # the one grammar of every command line

    try:
        models = parse_delays(str(text).strip())
    except ValueError as exc:
        raise TrainingError(f"--latency {text!r}: {exc}; e.g. fixed:20ms, uniform:0:40ms, "
                            "normal:10:5ms or none") from None
    if len(models) != 1:
        raise TrainingError(f"--latency {text!r}: give one latency model, not a list")
    return models[0]


def parse_randomize(value: Any) -> Any:
    """A ``Randomization`` from ``--randomize``'s text (``mass=0.9:1.15,latency=0:40ms``
    or a .yml file; vdsim_gym.randomization.parse_randomize_text) or a mapping in
    ``randomize=``'s form; None: none."""
    from vdsim_gym.randomization import Randomization, parse_randomize_text

    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    try:
        spec = parse_randomize_text(value) if isinstance(value, (str, Path)) else value
        return Randomization.parse(spec)
    except ValueError as exc:
        msg = str(exc)
        if not msg.startswith("--randomize"):
            msg = f"--randomize {str(value)!r}: {msg}"
        raise TrainingError(msg + "; e.g. --randomize mass=0.9:1.15,friction=0.8:1.0,"
                            "latency=0:40ms (docs/TRAINING.md)") from None


def _eval_policy_kwargs(text: str, where: str) -> dict[str, Any]:
    """rl-zoo3 writes policy_kwargs as a Python expression ("dict(net_arch=[64, 64])");
    evaluated with only dict, list, tuple and torch.nn in scope."""
    import torch

    try:
        value = eval(text, {"__builtins__": {}}, {"dict": dict, "list": list,  # noqa: S307
                                                 "tuple": tuple, "nn": torch.nn})
    except Exception as exc:
        raise TrainingError(f"{where}: policy_kwargs {text!r} is not a valid expression "
                            f"({exc})") from None
    if not isinstance(value, dict):
        raise TrainingError(f"{where}: policy_kwargs must be a dict, got {value!r}")
    return value


def load_hyperparams(algo: str, env_id: str, path: str | Path | None = None
                     ) -> dict[str, Any]:
    """The ``env_id`` block of ``agents/hyperparams/<algo>.yml`` (or ``path``), rl-zoo3's
    format. Unknown env ids and keys this trainer does not support are errors."""
    algo = check_algo(algo)
    from vdsim_gym._data import hyperparams_dir

    file = Path(path) if path is not None else hyperparams_dir() / f"{algo}.yml"
    try:
        data = load_yaml(file.read_text())
    except OSError as exc:
        raise TrainingError(f"cannot read the hyperparameter file {file}: {exc}") from None
    if not isinstance(data, dict) or env_id not in data:
        known = ", ".join(sorted(data)) if isinstance(data, dict) else "none"
        raise TrainingError(f"{file}: no block for {env_id!r} (blocks: {known}); add one in "
                            "rl-zoo3's format")
    block = dict(data[env_id] or {})
    bad = [k for k in block if k in _UNSUPPORTED_ZOO_KEYS]
    if bad:
        raise TrainingError(f"{file} [{env_id}]: {', '.join(bad)} not supported by "
                            "agents/train.py (use rl_zoo3 itself for them)")
    if isinstance(block.get("policy_kwargs"), str):
        block["policy_kwargs"] = _eval_policy_kwargs(block["policy_kwargs"],
                                                     f"{file} [{env_id}]")
    return block


def _normalize_kwargs(value: Any) -> dict[str, Any] | None:
    """rl-zoo3's ``normalize``: false, true, or a dict (or its string) of VecNormalize
    keywords."""
    if value in (None, False):
        return None
    if value is True:
        return {}
    if isinstance(value, str):
        import ast

        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise TrainingError(f"normalize {value!r}: expected true, false or a dict") from None
    if not isinstance(value, dict):
        raise TrainingError(f"normalize {value!r}: expected true, false or a dict")
    return dict(value)


# ------------------------------------------------------------------ training

@dataclasses.dataclass(frozen=True)
class TrainResult:
    run_dir: Path
    model: Any  # the trained SB3 model (in memory)
    timesteps: int
    wall_time_s: float


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
          run_name: str | None = None, num_threads: int | None = 1) -> TrainResult:
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
    default, one per core)."""
    import time

    import stable_baselines3 as sb3
    import yaml
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from vdsim_gym.provenance import VERSION
    from vdsim_gym.sb3_vec_env import make_sb3_vec_env

    algo = check_algo(algo)
    tensorboard = _check_extras(tensorboard, progress_bar)
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
    from vdsim_gym.randomization import Randomization

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

    _probe_env(env_id, kwargs_env)  # bad env options fail before the run folder exists

    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    run_dir = Path(out) / (run_name or f"{env_id}_{algo}_s{seed}_{stamp}")
    run_dir.mkdir(parents=True, exist_ok=False)

    base = make_sb3_vec_env(env_id, n_envs, seed=seed, **kwargs_env)
    metrics = tuple(base.get_attr("METRIC_LABELS", [0])[0])
    # The task's metrics (e_y RMSE, min gap, ...) as monitor.csv columns beside r, l, t.
    venv = VecMonitor(_with_summary_keys(base, metrics), filename=str(run_dir / "monitor.csv"),
                      info_keywords=metrics)
    eval_env = VecMonitor(_with_summary_keys(   # wrapped alike: SB3 syncs the chains
        make_sb3_vec_env(env_id, 1, seed=seed + 10_000, **kwargs_env), metrics))
    if norm is not None:
        venv = VecNormalize(venv, **{"gamma": block.get("gamma", 0.99), **norm})
        eval_env = VecNormalize(eval_env, training=False, norm_reward=False,
                                **{k: v for k, v in norm.items() if k != "norm_reward"})
    algo_kwargs = dict(block)
    if noise_type is not None:
        from stable_baselines3.common.noise import NormalActionNoise

        if noise_type != "normal":
            raise TrainingError(f"noise_type {noise_type!r}: only 'normal' is supported")
        dim = venv.action_space.shape[0]
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
    cls = {"ppo": sb3.PPO, "sac": sb3.SAC, "td3": sb3.TD3}[algo]
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
        "action_history": history,
        "env_kwargs": _jsonable({k: v for k, v in kwargs_env.items()
                                 if k not in ("latency", "randomize", "action_history")}),
        "hyperparams": _jsonable(algo_kwargs), "eval_freq": eval_freq,
        "eval_episodes": eval_episodes, "num_threads": num_threads,
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
                                                     checkpoint_freq, verbose, metrics),
                    progress_bar=progress_bar)
    finally:  # an interrupted (Ctrl-C) or terminated (SIGTERM) run keeps what it learned
        restore_sigterm(previous)
        model.save(run_dir / "model.zip")
        if norm is not None:
            venv.save(str(run_dir / "vecnormalize.pkl"))
        wall = time.perf_counter() - t0
        (run_dir / "train_time.json").write_text(json.dumps(
            {"wall_time_s": wall, "timesteps_done": int(model.num_timesteps)}))
        venv.close()
        eval_env.close()
    return TrainResult(run_dir, model, int(model.num_timesteps), wall)


def _probe_env(env_id: str, kwargs_env: Mapping[str, Any]) -> None:
    """One env with the run's options, built and closed: their errors as TrainingError."""
    import gymnasium as gym

    try:
        gym.make(env_id, **kwargs_env).close()
    except (ValueError, TypeError) as exc:
        raise TrainingError(f"{env_id} with the run's env options: {exc}") from None
    except gym.error.Error as exc:
        raise TrainingError(f"--env {env_id!r}: {exc}") from None


def _option_from_env_kwargs(kwargs_env: dict[str, Any], key: str, value: Any,
                            default: Any) -> Any:
    """An env option given as a train() argument or inside env_kwargs (the file's or
    --env-kwargs), not both; popped from env_kwargs."""
    if key not in kwargs_env:
        return value
    inner = kwargs_env.pop(key)
    if value != default and value != inner:
        raise TrainingError(f"{key} is given twice (as an option and in env_kwargs: "
                            f"{inner!r}); give it once")
    return inner


def _check_extras(tensorboard: bool | None, progress_bar: bool) -> bool:
    """Whether to log for TensorBoard; a clear error, before any work, when a requested
    extra is missing."""
    import importlib.util

    have_tb = importlib.util.find_spec("tensorboard") is not None
    if tensorboard and not have_tb:
        raise TrainingError("TensorBoard logging needs tensorboard: pip install "
                            "'vdsim-gym[train]' (or train without it)")
    if progress_bar and not all(importlib.util.find_spec(m) for m in ("tqdm", "rich")):
        raise TrainingError("the progress bar needs tqdm and rich: pip install "
                            "'vdsim-gym[train]' (or --no-progress)")
    return have_tb if tensorboard is None else bool(tensorboard)


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


def _callbacks(run_dir: Path, venv: Any, eval_env: Any, norm: Any, n_envs: int,
               eval_freq: int, eval_episodes: int, checkpoint_freq: int, verbose: int,
               metrics: tuple[str, ...] = ()) -> Any:
    """EvalCallback (best_model.zip with the statistics of its moment; the evaluation
    episodes' task metrics in eval_metrics.npz) and checkpoints; frequencies in total env
    steps."""
    from stable_baselines3.common.callbacks import (
        BaseCallback,
        CallbackList,
        CheckpointCallback,
        EvalCallback,
    )

    per_env = max(1, n_envs)
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
        ``timesteps`` and one (evaluations, episodes) array per metric."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._episode: list[dict[str, float]] = []
            self._log: dict[str, list[list[float]]] = {k: [] for k in metrics}
            self._steps: list[int] = []

        def _log_success_callback(self, locals_: dict[str, Any], globals_: Any) -> None:
            super()._log_success_callback(locals_, globals_)
            if locals_["done"] and "episode_summary" in locals_["info"]:
                self._episode.append(locals_["info"]["episode_summary"])

        def _on_step(self) -> bool:
            self._episode = []
            go_on = super()._on_step()
            if self._episode and metrics:
                self._steps.append(self.num_timesteps)
                for k in metrics:
                    self._log[k].append([float(e.get(k, np.nan)) for e in self._episode])
                n = min(len(v) for v in self._log[metrics[0]])
                np.savez(run_dir / "eval_metrics.npz", timesteps=np.array(self._steps),
                         **{k: np.array([row[:n] for row in v]) for k, v in self._log.items()})
            return go_on

    callbacks = [_EvalWithMetrics(eval_env, n_eval_episodes=eval_episodes,
                                  eval_freq=max(1, eval_freq // per_env),
                                  best_model_save_path=str(run_dir), log_path=str(run_dir),
                                  deterministic=True, verbose=verbose,
                                  callback_on_new_best=on_best)]
    if checkpoint_freq > 0:
        callbacks.append(CheckpointCallback(max(1, checkpoint_freq // per_env),
                                            str(run_dir / "checkpoints"), name_prefix="model",
                                            save_vecnormalize=norm is not None))
    return CallbackList(callbacks)


def plot_learning_curves(run: str | Path, png: str | Path, *, window: int = 50,
                         max_steps: int | None = None, metric: str | None = None) -> Path:
    """Training episodes' return and task metric against env steps and wall time.

    The top row is the return, the bottom row the task's metric (``metric``, default the
    env's first: e_y RMSE, min gap, speed-error RMS), both from ``monitor.csv`` as a
    ``window``-episode running mean, with EvalCallback's deterministic evaluations
    (``evaluations.npz``, ``eval_metrics.npz``) on the steps axis. A run from before the
    metric columns existed gets the return row alone."""
    import csv

    from vdsim_gym._plotting import figure

    run = Path(run)
    with (run / "monitor.csv").open() as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    if not rows:
        raise TrainingError(f"{run / 'monitor.csv'} has no finished episode yet")
    extra = [k for k in rows[0] if k not in ("r", "l", "t")]
    if metric is not None and metric not in extra:
        raise TrainingError(f"metric {metric!r} is not in {run / 'monitor.csv'}; it has "
                            f"{', '.join(extra) or 'no task metric columns'}")
    metric = metric or (extra[0] if extra else None)
    steps = np.cumsum([int(float(r["l"])) for r in rows])
    wall = np.array([float(r["t"]) for r in rows]) / 60.0
    keep = steps <= (max_steps or steps[-1])
    k = min(window, int(keep.sum()))
    series = [("r", "episode return")] + ([(metric, _metric_label(run, metric))]
                                          if metric else [])
    fig = figure(figsize=(11, 3.6 * len(series)))
    axes = fig.subplots(len(series), 2, squeeze=False)
    evals = {"r": run / "evaluations.npz", metric: run / "eval_metrics.npz"}
    for (key, label), (a1, a2) in zip(series, axes, strict=True):
        y = np.array([float(r[key]) if r[key] not in ("", None) else np.nan for r in rows])
        y, st, wt = y[keep], steps[keep], wall[keep]
        ok = np.isfinite(y)
        smooth = np.convolve(y[ok], np.ones(k) / k, mode="valid") if ok.sum() >= k else None
        a1.plot(st[ok], y[ok], ".", ms=1.5, alpha=0.25, color="C0")
        if smooth is not None:
            a1.plot(st[ok][k - 1:], smooth, color="C0", label=f"training, {k}-episode mean")
            a2.plot(wt[ok][k - 1:], smooth, color="C0")
        path = evals[key]
        if path.exists():
            d = np.load(path)
            vals = d["results"] if key == "r" else d[key]
            sel = d["timesteps"] <= (max_steps or d["timesteps"].max())
            with np.errstate(all="ignore"):
                mean = np.nanmean(np.asarray(vals, float), axis=1)
            a1.plot(d["timesteps"][sel], mean[sel], "o-", ms=3, color="C1",
                    label="evaluation (deterministic)")
        a1.set_xlabel("env steps")
        a2.set_xlabel("wall time [min]")
        for ax in (a1, a2):
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        a1.legend(fontsize=8)
    axes[0][0].set_title(run.name)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return Path(png)


def _metric_label(run: Path, metric: str) -> str:
    """The env's label for a metric ("e_y RMSE [m]"), from the run's env id."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    try:
        env_id = load_yaml((run / "config.yml").read_text())["env_id"]
        cls = load_env_creator(gym.spec(env_id).entry_point)
        return getattr(cls, "METRIC_LABELS", {}).get(metric, metric)
    except (OSError, KeyError, TypeError, gym.error.Error):  # no config: the raw name
        return metric


__all__ = ["ALGOS", "TrainResult", "TrainedPolicy", "TrainingError", "load_hyperparams",
           "load_policy", "parse_latency", "parse_randomize", "plot_learning_curves",
           "required_env_kwargs", "shipped_model", "shipped_models", "train"]
