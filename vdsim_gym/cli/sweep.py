"""The ``vdsim-gym sweep`` command line: controller specs (``load_controller``: baselines
with parameters, SB3 model files) and ``main``, which sweeps each controller and writes
CSVs, the summary table and a plot. Delay lists are ``vdsim_gym.config.delays.parse_delays``'s.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from vdsim_gym.config.delays import parse_delays
from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps import _check_env_id, _check_seeds, sweep
from vdsim_gym.eval.sweeps.lock import output_lock
from vdsim_gym.eval.sweeps.report import phase_table, plot, summary_table
from vdsim_gym.eval.sweeps.results import SweepResult, sweep_metrics, write_csv
from vdsim_gym.policies.algos import _check_algo
from vdsim_gym.policies.baselines import BASELINES
from vdsim_gym.policies.loading import load_controller


def _env_keys(cls: type) -> set[str]:
    """The keyword arguments gym.make accepts for an env class: gym.make's own and those
    of each __init__ up the MRO while they pass on **kwargs."""
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keys = {k for k, q in inspect.signature(gym.make).parameters.items()
            if q.kind in kinds and k != "id"}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters.values()
        keys |= {q.name for q in params if q.kind in kinds and q.name != "self"}
        if not any(q.kind is inspect.Parameter.VAR_KEYWORD for q in params):
            break
    kwarg_names = getattr(cls, "kwarg_names", None)  # a CoreEnv knows its physics keywords
    return keys | (kwarg_names() if callable(kwarg_names) else set())


def check_env(env_id: str) -> type:
    """The class of a VDSim env id (sweeps refuse other envs: they run on the core's
    vector session); the error names --env and lists the VDSim ids."""
    from gymnasium.envs.registration import load_env_creator

    try:
        bare = _check_env_id(env_id)
    except ValueError as exc:
        raise ConfigError(f"--env: {exc}") from None
    entry = gym.spec(bare).entry_point
    cls = load_env_creator(entry) if isinstance(entry, str) else entry
    assert isinstance(cls, type)  # _check_env_id: a CoreEnv subclass
    return cls


def check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> tuple[str, ...]:
    """Unknown keys and bad values of the shared env kwargs, before any work, naming
    --env-kwargs (the env's own message alone does not say where the value came from).
    Returns the metrics a sweep of the env tabulates (for --metric)."""
    for key in ("latency", "overrun"):
        if key in env_kwargs:
            raise ConfigError(f"--env-kwargs sets {key!r}, which the sweep sets: use --delays "
                              "for the latency and --overrun for the overrun policy")
    valid = _env_keys(check_env(env_id)) - {"latency", "overrun"}
    unknown = sorted(set(env_kwargs) - valid)
    if unknown:
        raise ConfigError(f"--env-kwargs: unknown key {unknown[0]!r} for {env_id}; valid keys: "
                          f"{', '.join(sorted(valid))}")
    try:
        probe = gym.make(env_id, **env_kwargs)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"--env-kwargs {json.dumps(env_kwargs, default=str)}: {exc}") from None
    try:
        base = probe.unwrapped
        assert isinstance(base, CoreEnv)  # check_env above: a VDSim env
        return sweep_metrics(base.summary_names)
    finally:
        probe.close()


def _load_all(controllers: Sequence[str], algo: str | None,
              options: tuple[str, str] = ("--controller", "--compare"),
              env_id: str | None = None, env_kwargs: dict[str, Any] | None = None,
              trust: bool = False) -> list[tuple[str, Any]]:
    """Each controller spec loaded; an error names the option it came from (``options``:
    the first spec's, the others'). With ``env_id`` each baseline is also built once on
    such an env, so that a missing extra (the MPC's OSQP) or a controller that does not
    fit the env fails before any work, not after the controllers before it ran.
    ``trust``: unpickle run folders as SB3 does (``load_policy``'s ``trust``)."""
    if algo is not None:
        _check_algo(algo)
    loaded = []
    for k, spec in enumerate(controllers):
        try:
            loaded.append(load_controller(spec, algo, trust=trust))
        except ValueError as exc:
            raise ConfigError(f"{options[1] if k else options[0]} {exc}") from None
    names = [n for n, _ in loaded]
    if len(set(names)) != len(names):
        raise ConfigError(f"controllers have the same name: {names}; give each {options[1]} a "
                          "different spec or model file name")
    if env_id is not None and any(callable(pol) for _, pol in loaded):
        import gymnasium as gym

        from vdsim_gym.policies.env_kwargs import required_env_kwargs

        for k, (name, pol) in enumerate(loaded):
            if not callable(pol):  # a trained model is loaded already
                continue
            option = options[1] if k else options[0]
            # a baseline's factory, or a residual run's (on the env its observation needs)
            env = gym.make(env_id, **required_env_kwargs(pol, env_kwargs,
                                                         f"{option} {name}: the env kwargs"))
            try:
                _probe(pol, env)
            except ImportError as exc:
                raise ConfigError(f"{option} {name}: {exc}") from None
            except (ValueError, KeyError, AttributeError, TypeError) as exc:
                drivers = _drivers(env)
                if name.partition(":")[0] in drivers:  # drives it; a bad parameter
                    raise ConfigError(f"{option} {name}: {_one_line(exc)}") from None
                raise ConfigError(
                    f"{option} {name}: does not drive {env_id} ({_one_line(exc)}); the "
                    f"baselines that drive it: {', '.join(drivers) or 'none'}") from None
            finally:
                env.close()
    return loaded


def _probe(factory: Any, env: Any) -> Any:
    """The controller ``factory`` builds for ``env``, after one action on its first
    observation: a controller built for another task's observation (Stanley on the ACC
    env) fails here, not deep in the sweep's first batch."""
    pol = factory(env)
    obs, _ = env.reset(seed=0)
    pol.predict(obs[None, :], deterministic=True)
    return pol


def _drivers(env: Any) -> list[str]:
    """The baselines (``policies.BASELINES``, in its order) that build for ``env`` and act
    on its observation."""
    out = []
    for spec in BASELINES:
        try:
            _probe(load_controller(spec)[1], env)
        except (ImportError, ValueError, KeyError, AttributeError, TypeError):
            continue
        out.append(spec)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(text.split())


def main(controllers: Sequence[str], env_id: str, delays: str, *, seeds: int = 64,
         overrun: str = "skip", num_envs: int = 64, backend: str = "local",
         address: str | None = None, out: str | Path = "sweep_out",
         env_kwargs: dict[str, Any] | None = None,
         scenarios: list[dict[str, Any]] | None = None, algo: str | None = None,
         metric: str | None = None, make_plot: bool = True, progress: bool = True,
         echo: Any = print, own_env: bool = False,
         options: tuple[str, str] = ("--controller", "--compare"),
         losses: Sequence[float] | None = None, obs_delays: str | None = None,
         trust: bool = False) -> dict[str, SweepResult]:
    """The ``vdsim-gym sweep`` command: sweeps each controller, writes sweep.csv,
    sweep_summary.csv and sweep.png into ``out``, prints the summary table.
    ``own_env``: a trained run's policy is swept on the env kwargs it was trained with
    (its config.yml; they win over ``env_kwargs`` where both set a key), the baselines
    on ``env_kwargs`` (e.g. a pedal policy and the PI robot driver, each on its own
    driver). ``options``: the command-line options a bad spec is named by (the first
    controller's, the others'; ``vdsim-gym compare``: --policies for all). ``losses``:
    a grid axis of network loss probabilities, each scenario swept with
    ``network=NetworkModel(drop=p)`` (0: without a network). ``obs_delays``: a grid axis
    of sensor delays in the delay grammar (``--delays``'), each scenario swept with
    ``obs_delay=`` that model (0 or none: without a sensor delay). ``trust``: run folders
    unpickled as SB3 does (``--trust``; ``load_policy``)."""
    try:
        latencies = parse_delays(delays)
    except ValueError as exc:
        raise ConfigError(f"--delays {delays!r}: {exc}") from None
    env_kwargs = dict(env_kwargs or {})
    metrics = check_env_kwargs(env_id, env_kwargs)  # checks env_id too
    if metric is not None and metric not in metrics:
        raise ConfigError(f"--metric {metric!r} is not a metric of {env_id}; choose one of "
                          f"{', '.join(metrics)}")
    if losses:
        scenarios = [{**sc, **({"network": NetworkModel(drop=p)} if p > 0 else {})}
                     for sc in (scenarios or [{}]) for p in losses]
    if obs_delays:
        try:
            ages = parse_delays(obs_delays)
        except ValueError as exc:
            raise ConfigError(f"--obs-delays {obs_delays!r}: {exc}") from None
        off = (None, LatencyModel.fixed(0.0))
        scenarios = [{**sc, **({"obs_delay": m} if m not in off else {})}
                     for sc in (scenarios or [{}]) for m in ages]
    loaded = _load_all(controllers, algo, options, env_id, env_kwargs, trust=trust)
    if "torch" in sys.modules:  # an SB3 policy was loaded: its network on one thread
        # A 64x64 network gains nothing from a second thread, and beside other work on
        # the cores it loses badly: a 64-observation batch took 23 ms on torch's default
        # two threads under load against 1.2 ms on one (2026-12-03, docs/TRAINING.md).
        sys.modules["torch"].set_num_threads(1)
    with output_lock(out):  # one run per output folder
        return _sweep_all(loaded, env_id, latencies, Path(out), env_kwargs, scenarios,
                          seeds=seeds, num_envs=num_envs, backend=backend, address=address,
                          overrun=overrun, progress=progress, own_env=own_env, echo=echo,
                          metric=metric, make_plot=make_plot)


def _sweep_all(loaded: list[tuple[str, Any]], env_id: str, latencies: Any, out: Path,
               env_kwargs: dict[str, Any], scenarios: Any, *, seeds: Any, num_envs: int,
               backend: str, address: str | None, overrun: str, progress: bool,
               own_env: bool, echo: Any, metric: str | None, make_plot: bool
               ) -> dict[str, SweepResult]:
    """``main``'s work once its output folder is locked."""
    results = {}
    for k, (name, pol) in enumerate(loaded, start=1):
        kwargs = dict(env_kwargs)
        own = getattr(pol, "env_kwargs", None) if own_env else None
        if own:
            kwargs.update(own)
            check_env_kwargs(env_id, kwargs)
            echo(f"{name}: on its training env kwargs "
                 f"{', '.join(f'{a}={b}' for a, b in own.items())}")
        # One bar per controller: the label says which one and how many are left.
        results[name] = sweep(pol, env_id, latencies=latencies, seeds=seeds,
                              num_envs=num_envs, backend=backend, address=address,
                              overrun=overrun, progress=progress, scenarios=scenarios,
                              progress_label=f"sweep {k}/{len(loaded)}: {name}", **kwargs)
    write_csv(out / "sweep.csv", [{"controller": n, **r.as_dict()}
                                  for n, res in results.items() for r in res.table])
    write_csv(out / "sweep_summary.csv", [{"controller": n, **s.as_dict()}
                                          for n, res in results.items() for s in res.summary])
    kw = ", ".join(f"{k}={v}" for k, v in env_kwargs.items())
    title = (f"{env_id}{f' ({kw})' if kw else ''}, {len(_check_seeds(seeds))} seeds, "
             f"overrun {overrun}")
    echo(f"Sweep: {title}")
    echo(summary_table(results))
    written = [out / "sweep.csv", out / "sweep_summary.csv"]
    phases = [{"controller": n, **p} for n, res in results.items() for p in res.phase_summary()]
    if phases:  # the dyno's cycles, phase by phase (low, medium, ...)
        write_csv(out / "sweep_phases.csv", phases)
        written.insert(2, out / "sweep_phases.csv")
        echo("\nPer phase:")
        echo(phase_table(results))
    if make_plot:
        written.append(plot(results, out / "sweep.png", metric=metric, title=title))
    wall = sum(r.meta["wall_time_s"] for r in results.values())
    echo(f"\n{sum(len(r.table) for r in results.values())} episodes in {wall:.1f} s; "
         "wrote " + ", ".join(str(p) for p in written))
    return results


__all__ = ["check_env", "check_env_kwargs", "load_controller", "main", "parse_delays"]
