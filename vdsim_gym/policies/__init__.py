"""Policies by name: a trained run loaded as a policy, the models that ship with the
package, and the controller specs of the command lines.

``load_policy(run_dir)`` gives an object with SB3's ``predict`` that normalizes the
observation with the run's saved statistics first, so a trained model runs through the
same evaluation and sweep code as a baseline; its ``required_env_kwargs`` (the run's
``action_history``) rebuild the observation it was trained on, and ``required_env_kwargs``
here merges them into an env's kwargs (the sweep and ``ClosedLoopEval`` do).
``shipped_model(name)`` is the run folder of a policy that ships with the package
(agents/models). ``load_controller(spec)`` is the registry behind ``vdsim-gym sweep
--controller`` and ``agents/compare.py``: "stanley[:key=value,...]", "stanley_dc[:...]",
"mpc[:...]", "acc_pid[:...]", "idm[:...]", "cycle_follower[:...]", a run folder or an SB3
model file.

This package sits below ``vdsim_gym.eval`` and ``vdsim_gym.training``
(docs/ARCHITECTURE.md, "Layers"): evaluation applies a trained policy's env options without
importing the trainer. stable-baselines3 (the ``train`` extra) is imported only when a
model is loaded.

Its modules: ``loading`` (``load_policy``, ``load_controller``, ``base_controller``,
``ResidualPolicy``: they call each other), ``trained`` (``TrainedPolicy`` and a run
folder's config.yml), ``model_files`` (model.zip and vecnormalize.pkl, unpickled as data
unless trusted), ``baselines`` (``BASELINES`` and their spec parameters), ``algos`` (the
algorithms by name), ``shipped`` (the shipped models), ``env_kwargs``
(``required_env_kwargs``). Code inside ``vdsim_gym`` imports from those modules; this
package's own names are the public API.
"""

from vdsim_gym.policies.algos import ALGOS, algo_class, check_algo
from vdsim_gym.policies.baselines import BASELINES
from vdsim_gym.policies.env_kwargs import required_env_kwargs
from vdsim_gym.policies.loading import (
    ResidualFactory,
    ResidualPolicy,
    base_controller,
    load_controller,
    load_policy,
)
from vdsim_gym.policies.model_files import UnsafePickleError, load_sb3_model, load_vecnormalize
from vdsim_gym.policies.shipped import shipped_model, shipped_models
from vdsim_gym.policies.trained import TrainedPolicy

__all__ = ["ALGOS", "BASELINES", "ResidualFactory", "ResidualPolicy", "TrainedPolicy",
           "UnsafePickleError", "algo_class", "base_controller", "check_algo",
           "load_controller", "load_policy", "load_sb3_model", "load_vecnormalize",
           "required_env_kwargs", "shipped_model", "shipped_models"]
