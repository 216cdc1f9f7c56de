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
        eval_metrics.npz              the evaluation episodes' task metrics
        train_time.json               wall time, steps done of the target, the outcome
        checkpoints/, tb/             periodic checkpoints; TensorBoard logs

Every file is written whole or not at all (a hidden temporary file renamed into place),
and the best model, its statistics and best.json change as one unit (``best``:
``recover_best`` finishes or drops what a stop left staged). A stop (Ctrl-C, SIGTERM)
during the start-up removes the folder; while training it saves the model, and further
signals wait until the save is done.

Loading what a run saved is ``vdsim_gym.policies`` (``load_policy``, ``TrainedPolicy``,
``shipped_model``, ``shipped_models``, ``required_env_kwargs``), below the evaluation code
that uses it; its errors are ``vdsim_gym.errors.TrainingError``.
``plot_learning_curves(run, png)`` draws a run's learning curves. ``vdsim-gym train``
(``vdsim_gym.cli.train``; ``agents/train.py`` is the same command) is the command line.
Needs the ``train`` extra (stable-baselines3, tensorboard, tqdm, rich).

The modules, one job each: ``hyperparams`` (rl-zoo3's files), ``options`` (a run's options
checked before any work), ``run`` (``train``: the learn loop, the run folder, SIGTERM),
``callbacks`` (evaluation, checkpoints, the metrics in monitor.csv), ``best`` (the best
model as one unit), ``seeds`` (many seeds, worker processes), ``seeds_report``
(``run_seeds_report``: ``vdsim-gym seeds-report``, the seeds evaluated beside the
baselines) and ``curves`` (the plot).
"""

from __future__ import annotations

from vdsim_gym.training.curves import plot_learning_curves
from vdsim_gym.training.hyperparams import load_hyperparams
from vdsim_gym.training.options import parse_latency, parse_randomize
from vdsim_gym.training.run import ON_POLICY, TrainResult, train  # noqa: F401

__all__ = ["TrainResult", "load_hyperparams", "parse_latency", "parse_randomize",
           "plot_learning_curves", "train"]
