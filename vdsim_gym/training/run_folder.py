"""A run folder after the fact: ``describe_run`` says what it holds (after a stop),
``rerun`` trains it again from its config.yml (docs/TRAINING.md, "Reproducing a run")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vdsim_gym._files import read_user_text
from vdsim_gym.errors import TrainingError


def describe_run(run_dir: str | Path) -> str:
    """What a run folder holds, in one line, for a stopped command: the final model
    (steps done of the target), its statistics, the best model; or that it holds no
    model (stopped or failed before saving one), or that it was not made."""
    import zipfile

    from vdsim_gym._best import recover_best

    run = Path(run_dir)
    if not run.is_dir():
        return f"{run}: not made (stopped before its start-up ended)"
    recover_best(run)
    parts = []
    model = run / "model.zip"
    ok = False
    if model.is_file():
        try:
            with zipfile.ZipFile(model) as zf:
                ok = "data" in zf.namelist()
        except (OSError, zipfile.BadZipFile):
            ok = False
    if not ok:
        what = "unreadable model.zip" if model.exists() else "no model.zip"
        return f"{run}: {what} (stopped or failed before its final save; its message above)"
    steps = ""
    try:
        info = json.loads(read_user_text(run / "train_time.json", "train_time.json"))
        done, target = int(info["timesteps_done"]), info.get("timesteps_target")
        steps = f" after {done:,} of {int(target):,} steps" if target else f" after {done:,} steps"
        if info.get("outcome") == "completed":
            steps += " (completed)"
    except (ValueError, KeyError, TypeError):  # a ConfigError too: no file, not a file
        steps = " (no train_time.json)"
    parts.append(f"model.zip{steps}")
    if (run / "vecnormalize.pkl").is_file():
        parts.append("vecnormalize.pkl")
    if (run / "best.json").is_file():
        try:
            best = json.loads(read_user_text(run / "best.json", "best.json"))
            parts.append(f"best_model.zip from {int(best['timesteps']):,} steps")
        except (ValueError, KeyError, TypeError):
            parts.append("best_model.zip")
    return f"{run}: " + ", ".join(parts)


def rerun(run_dir: str | Path, *, out: str | Path | None = None, run_name: str | None = None,
          progress_bar: bool = True) -> Any:
    """The run of ``run_dir`` trained again into ``<out>/<run_name>`` (default: beside it,
    ``<name>_rerun``): ``train`` with the options its config.yml recorded
    (``train_call``), the same seed included, after checking that the hyperparameter file
    still holds the block the run used (``hyperparams_block``). A folder without those
    entries (written before they were) is a TrainingError naming its recorded command."""
    from vdsim_gym._files import read_yaml
    from vdsim_gym.training.hyperparams import load_hyperparams
    from vdsim_gym.training.run import _jsonable, train

    run = Path(run_dir)
    cfg = read_yaml(run / "config.yml", "the run's config.yml")
    if not isinstance(cfg, dict):
        raise TrainingError(f"{run}/config.yml: not a run's configuration (a mapping); put "
                            "the run's own config.yml back")
    call = cfg.get("train_call")
    if not isinstance(call, dict) or "algo" not in call or "env_id" not in call:
        raise TrainingError(f"{run}/config.yml records no train_call (the options a rerun "
                            f"needs); run its recorded command instead: "
                            f"{cfg.get('command', '(none recorded)')}")
    block = _jsonable(load_hyperparams(call["algo"], call["env_id"],
                                       call.get("hyperparams_file")))
    if cfg.get("hyperparams_block") is not None and block != cfg["hyperparams_block"]:
        changed = sorted(k for k in set(block) | set(cfg["hyperparams_block"])
                         if block.get(k) != cfg["hyperparams_block"].get(k))
        raise TrainingError(f"{run}: the hyperparameter file's {call['env_id']} block has "
                            f"changed since the run ({', '.join(changed)}); restore it (the "
                            "run's values are config.yml's hyperparams_block)")
    kwargs = {k: v for k, v in call.items() if k not in ("algo", "env_id")}
    return train(call["algo"], call["env_id"], **kwargs,
                 out=run.parent if out is None else out,
                 run_name=run_name or f"{run.name}_rerun", progress_bar=progress_bar)


__all__ = ["describe_run", "rerun"]
