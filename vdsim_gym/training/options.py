"""The options of a training run, checked before any work: ``--latency`` and
``--randomize`` read into models, an env option given as an argument or in env_kwargs,
the extras a run asks for, and the env built once with the run's options."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vdsim_gym.errors import TrainingError


def parse_latency(text: str | None) -> Any:
    """A latency model from "fixed:20ms", "20ms", "uniform:0:40ms" (or "uniform:0-40ms"),
    "normal:10:5ms", "none"; None or "none": no latency."""
    if text is None or str(text).strip().lower() in ("", "none"):
        return None
    from vdsim_gym.config.delays import parse_delays  # the one grammar of every command line

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
    or a .yml file; vdsim_gym.sim.randomization.parse_randomize_text) or a mapping in
    ``randomize=``'s form; None: none."""
    from vdsim_gym.sim.randomization import Randomization, parse_randomize_text

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


def _probe_env(env_id: str, kwargs_env: Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """One env with the run's options, built and closed: their errors as TrainingError.
    Returns its task metrics (METRIC_LABELS) and the outcome of an episode that reaches
    the task's own end."""
    import gymnasium as gym

    try:
        env = gym.make(env_id, **kwargs_env)
        base = env.unwrapped
        found = (dict(getattr(base, "METRIC_LABELS", {})),
                 str(getattr(base, "TRUNCATED_OUTCOME", "")))
        env.close()
        return found
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


def check_select_by(select_by: str, metric_labels: Mapping[str, str]) -> str:
    """``select_by``: "return" or one of the env's task metrics (lower is better)."""
    name = str(select_by).strip()
    if name != "return" and name not in metric_labels:
        raise TrainingError(f"--select-by {select_by!r}: give 'return' or one of this env's "
                            f"task metrics ({', '.join(metric_labels)}); lower is better")
    return name


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


def check_run_name(name: str, out: str | Path) -> Path:
    """``out / name``, the run folder, after checking that ``name`` is one folder name
    inside ``out``: no path separator, not "." or "..", not empty, and not resolving
    outside ``out`` (a symlink there); a TrainingError naming the fix otherwise."""
    import os

    text = str(name)
    seps = [s for s in (os.sep, os.altsep, "/") if s]
    if not text.strip() or text in (".", "..") or any(s in text for s in seps) \
            or "\0" in text:
        raise TrainingError(f"--name {text!r}: give a plain folder name (no path "
                            "separator, not '.' or '..'); the run folder is made inside "
                            "--out, so pass the parent folder as --out")
    parent = Path(out)
    run = parent / text
    try:
        inside = run.resolve().is_relative_to(parent.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside or run.resolve() == parent.resolve():
        raise TrainingError(f"--name {text!r}: {run} resolves to {run.resolve()}, outside "
                            f"--out {parent}; give a plain folder name")
    return run
