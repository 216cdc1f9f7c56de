"""Controllers compared on one grid (``run_sweep``: the ``vdsim-gym sweep`` and ``vdsim-gym
compare`` commands): each controller spec loaded and checked (``specs``), swept
(``sweep``), then sweep.csv, sweep_summary.csv (and sweep_phases.csv for the dyno's
cycles) and sweep.png written into one output folder, locked for the run (``lock``), and
the summary table printed. Delay lists are ``vdsim_gym.config.delays.parse_delays``'s.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vdsim_gym.config.delays import parse_delays
from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps import sweep
from vdsim_gym.eval.sweeps.grid import _check_seeds
from vdsim_gym.eval.sweeps.lock import output_lock
from vdsim_gym.eval.sweeps.report import phase_table, plot, summary_table
from vdsim_gym.eval.sweeps.results import SweepResult, write_csv
from vdsim_gym.eval.sweeps.specs import check_env_kwargs, load_controllers


def run_sweep(controllers: Sequence[str], env_id: str, delays: str, *, seeds: int = 64,
              overrun: str = "skip", num_envs: int = 64, backend: str = "local",
              address: str | None = None, out: str | Path = "sweep_out",
              env_kwargs: dict[str, Any] | None = None,
              scenarios: list[dict[str, Any]] | None = None, algo: str | None = None,
              metric: str | None = None, make_plot: bool = True, progress: bool = True,
              echo: Any = print, own_env: bool = False,
              options: tuple[str, str] = ("--controller", "--compare"),
              losses: Sequence[float] | None = None, obs_delays: str | None = None,
              trust: bool = False) -> dict[str, SweepResult]:
    """The ``vdsim-gym sweep`` and ``vdsim-gym compare`` commands: sweeps each controller
    (a spec of ``specs.load_controllers``) over ``delays`` (the delay grammar), writes
    sweep.csv, sweep_summary.csv and sweep.png into ``out``, prints the summary table.
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
    loaded = load_controllers(controllers, algo, options, env_id, env_kwargs, trust=trust)
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
    """``run_sweep``'s work once its output folder is locked."""
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


__all__ = ["run_sweep"]
