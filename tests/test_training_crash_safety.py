"""Crash-safe training folders (issue 45): every file of a run folder is whole after a
stop at any moment (Ctrl-C, SIGTERM, a double Ctrl-C, SIGKILL), the best model, its
statistics and best.json change as one unit, a stop during the start-up leaves no stub
folder, workers die with their parent, and the commands refuse what they used to ignore.

The faults are injected: a save made to raise KeyboardInterrupt (or to kill the process)
halfway through its file, signals sent to the process while it saves. Trainings are one
or two PPO rollouts of 64 steps; the ones that spawn ``train --jobs`` are ``slow``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from vdsim_gym._best import COMPLETE, OWNER, STAGING, BestStaging, recover_best
from vdsim_gym.errors import VDSimError

ROOT = Path(__file__).resolve().parents[1]
# One PPO update per 64 steps, an evaluation (one episode) and a checkpoint every 64.
TINY = dict(timesteps=128, hyperparams={"n_envs": 1, "n_steps": 64, "batch_size": 64,
                                        "n_epochs": 1},
            eval_freq=64, eval_episodes=1, checkpoint_freq=64, progress_bar=False,
            tensorboard=False)


def _stale(folder: Path) -> list[str]:
    """Hidden temporary files and staging folders left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def _python(script: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------ best model unit

def _trio(folder: Path, tag: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("best_model.zip", "best_vecnormalize.pkl"):
        (folder / name).write_text(f"{tag} {name}")
    (folder / "best.json").write_text(json.dumps({"tag": tag}))


def _tags(run: Path) -> set[str]:
    return {(run / "best_model.zip").read_text().split()[0],
            (run / "best_vecnormalize.pkl").read_text().split()[0],
            json.loads((run / "best.json").read_text())["tag"]}


def test_recover_best_rolls_a_complete_staging_forward_and_drops_an_incomplete_one(tmp_path):
    run = tmp_path / "run"
    _trio(run, "old")
    assert recover_best(run) is None and _tags(run) == {"old"}
    # complete (the marker written) but stopped before the move: the new trio wins
    _trio(run / STAGING, "new")
    (run / STAGING / COMPLETE).write_text(json.dumps(
        ["best_model.zip", "best_vecnormalize.pkl", "best.json"]))
    assert recover_best(run) == "rolled forward"
    assert _tags(run) == {"new"} and not (run / STAGING).exists()
    # stopped halfway through the move (the model moved, the rest not): finished
    _trio(run / STAGING, "newer")
    (run / STAGING / COMPLETE).write_text(json.dumps(
        ["best_model.zip", "best_vecnormalize.pkl", "best.json"]))
    os.replace(run / STAGING / "best_model.zip", run / "best_model.zip")
    assert recover_best(run) == "rolled forward" and _tags(run) == {"newer"}
    # incomplete (no marker) of a writer that is gone: dropped, the old trio stands
    _trio(run / STAGING, "torn")
    (run / STAGING / "best_model.zip").write_bytes(b"PK\x03\x04trunc")
    (run / STAGING / OWNER).write_text(f"{os.uname().nodename} {os.getpid()}\n")
    assert recover_best(run) == "discarded"
    assert _tags(run) == {"newer"} and not (run / STAGING).exists()
    # incomplete of another process that still runs: left to its writer
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _trio(run / STAGING, "busy")
        (run / STAGING / OWNER).write_text(f"{os.uname().nodename} {sleeper.pid}\n")
        assert recover_best(run) == "in progress" and (run / STAGING).exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert recover_best(run) == "discarded" and _tags(run) == {"newer"}


def test_best_staging_commits_the_trio_as_one_unit_or_not_at_all(tmp_path):
    run = tmp_path / "run"
    _trio(run, "old")
    st = BestStaging(run)
    _trio(st.begin(), "new")
    with pytest.raises(VDSimError, match="not written"):  # a missing member: no commit
        (st.path / "best.json").unlink()
        st.commit(["best_model.zip", "best_vecnormalize.pkl", "best.json"])
    assert _tags(run) == {"old"}
    st.discard()
    _trio(st.begin(), "new")
    st.commit(["best_model.zip", "best_vecnormalize.pkl", "best.json"])
    assert _tags(run) == {"new"} and not (run / STAGING).exists()


# ------------------------------------------------------------------ the final save

def test_signals_held_hold_sigint_and_sigterm_until_the_block_is_done(python_sigint):
    from vdsim_gym._signals import signals_held, sigterm_as_interrupt

    done = []
    with pytest.raises(KeyboardInterrupt), sigterm_as_interrupt():
        with signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            done.append("finished")  # the block ran to its end
    assert done == ["finished"]
    with signals_held(raise_after=False):  # a stop already under way: no second one
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.fixture
def sigterm_recorder():
    """SIGTERM recorded instead of killing pytest, for the tests that send it to this
    process: the code under test installs its own handler over this one; a SIGTERM that
    reaches this one is one the code did not handle."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set on the main thread only")
    got: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, previous)


def _kill_me() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)


def test_signals_during_the_final_save_wait_for_it(tmp_path, monkeypatch, sigterm_recorder):
    """A worker stopped by Ctrl-C gets the parent's SIGTERM (and a second SIGINT) while it
    saves: the save finishes (model.zip whole, vecnormalize.pkl and train_time.json
    written), then the stop goes on as an interrupt. It used to die mid-save (the default
    SIGTERM handler was restored before model.save)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.vec_env import VecNormalize

    from vdsim_gym.training import train

    real_learn, real_save, real_vn = PPO.learn, BaseAlgorithm.save, VecNormalize.save

    def learn(self, *args, **kwargs):  # trains, then Ctrl-C arrives
        real_learn(self, *args, **kwargs)
        raise KeyboardInterrupt

    def save(self, path, *args, **kwargs):  # the parent's SIGTERM and a Ctrl-C mid-save
        _kill_me()
        real_save(self, path, *args, **kwargs)

    def vn_save(self, path):
        _kill_me()
        real_vn(self, path)

    monkeypatch.setattr(PPO, "learn", learn)
    monkeypatch.setattr(BaseAlgorithm, "save", save)
    monkeypatch.setattr(VecNormalize, "save", vn_save)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run",
              **dict(TINY, eval_freq=100_000, checkpoint_freq=0))
    assert sigterm_recorder == []  # every SIGTERM went to the trainer's handler
    run = tmp_path / "run"
    monkeypatch.undo()
    assert PPO.load(run / "model.zip", device="cpu").num_timesteps == 128
    assert (run / "vecnormalize.pkl").stat().st_size > 0
    info = json.loads((run / "train_time.json").read_text())
    assert info["outcome"] == "interrupted" and info["timesteps_done"] == 128
    assert _stale(run) == []


# ------------------------------------------------------------------ the evaluation files

def _interrupt_savez(monkeypatch, target: str, call: int) -> None:
    """np.savez of the file named ``target`` writes half of its bytes and raises
    KeyboardInterrupt at its ``call``-th write (a Ctrl-C mid-write)."""
    import io

    real = np.savez
    calls = {"n": 0}

    def savez(file, *args, **kwargs):
        if target in str(file):
            calls["n"] += 1
            if calls["n"] == call:
                buf = io.BytesIO()
                real(buf, *args, **kwargs)
                path = Path(str(file))  # np.savez appends .npz when it is missing
                path = path if path.suffix == ".npz" else path.with_name(path.name + ".npz")
                path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
                raise KeyboardInterrupt
        return real(file, *args, **kwargs)

    monkeypatch.setattr(np, "savez", savez)


@pytest.mark.parametrize("name", ["evaluations", "eval_metrics"])
def test_a_stop_while_an_evaluation_log_is_written_keeps_the_previous_one(
        name, tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    from vdsim_gym.training import train

    _interrupt_savez(monkeypatch, name, call=2)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", **TINY)
    run = tmp_path / "run"
    with np.load(run / f"{name}.npz") as log:  # whole: the first evaluation's
        assert list(log["timesteps"]) == [64]
    assert (run / "model.zip").exists() and _stale(run) == []


def test_sigkill_while_eval_metrics_is_written_leaves_the_previous_file(tmp_path):
    """SIGKILL mid-write (no cleanup runs): eval_metrics.npz is the previous one; the
    temporary file is all that is left, and it is hidden."""
    result = _python(f"""
        import io, os, signal
        from pathlib import Path
        import numpy as np
        from vdsim_gym.training import train

        real, calls = np.savez, []
        def savez(file, *args, **kwargs):
            if "eval_metrics" in str(file):
                calls.append(file)
                if len(calls) == 2:
                    buf = io.BytesIO()
                    real(buf, *args, **kwargs)
                    Path(str(file)).write_bytes(buf.getvalue()[:100])
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(file, *args, **kwargs)
        np.savez = savez
        train("ppo", "VDSim-DLC-v0", out="out", run_name="run", **{TINY!r})
    """, tmp_path)
    assert result.returncode == -signal.SIGKILL, result.stderr
    run = tmp_path / "out" / "run"
    with np.load(run / "eval_metrics.npz") as log:
        assert list(log["timesteps"]) == [64]
    assert all(n.startswith(".eval_metrics.") for n in _stale(run)), _stale(run)


# ------------------------------------------------------------------ the best model

def _interrupt_save(monkeypatch, where: str, call: int) -> None:
    """The model's save into a path containing ``where`` writes half a zip and raises
    KeyboardInterrupt at its ``call``-th time (Ctrl-C mid-save)."""
    from stable_baselines3.common.base_class import BaseAlgorithm

    real = BaseAlgorithm.save
    calls = {"n": 0}

    def save(self, path, *args, **kwargs):
        if where in str(path):
            calls["n"] += 1
            if calls["n"] == call:
                real(self, path, *args, **kwargs)
                p = Path(str(path))
                p = p if p.suffix == ".zip" else p.with_name(p.name + ".zip")
                p.write_bytes(p.read_bytes()[:1000])
                raise KeyboardInterrupt
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(BaseAlgorithm, "save", save)


def test_a_stop_while_the_first_best_model_is_saved_leaves_no_best_files(
        tmp_path, monkeypatch):
    """By return SB3's EvalCallback saves the best model itself: into the staging
    folder, so a stop mid-save leaves no torn best_model.zip."""
    pytest.importorskip("stable_baselines3")
    from vdsim_gym.training import train

    _interrupt_save(monkeypatch, "best_model", call=1)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", **TINY)
    run = tmp_path / "run"
    assert not any((run / n).exists() for n in ("best_model.zip", "best.json",
                                                "best_vecnormalize.pkl"))
    assert (run / "model.zip").exists() and _stale(run) == []


def test_a_stop_while_a_new_best_is_saved_keeps_the_previous_trio(tmp_path, monkeypatch):
    """Every evaluation a new best (the score forced lower each time); the second one's
    save is stopped: best_model.zip, its statistics and best.json still describe the
    first (its saved step count is best.json's)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from vdsim_gym.training import callbacks, train

    scores = iter(range(100, 0, -1))
    monkeypatch.setattr(callbacks, "selection_score",
                        lambda episodes, metric, outcome, min_gap=None:
                        (0, float(next(scores))))
    _interrupt_save(monkeypatch, STAGING, call=2)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", select_by="rms_e_y",
              **TINY)
    run = tmp_path / "run"
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == 64
    assert PPO.load(run / "best_model.zip", device="cpu").num_timesteps == 64
    assert (run / "best_vecnormalize.pkl").exists() and _stale(run) == []


def test_a_stop_while_the_new_trio_is_moved_into_place_is_finished(tmp_path, monkeypatch):
    """The double Ctrl-C: the new trio is complete in the staging folder and the second
    stop comes after its first file was moved. The final save finishes the move, so
    best.json describes best_model.zip (it used to describe the previous best)."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    from vdsim_gym import _best as best_module
    from vdsim_gym.training import callbacks, train

    scores = iter(range(100, 0, -1))
    monkeypatch.setattr(callbacks, "selection_score",
                        lambda episodes, metric, outcome, min_gap=None:
                        (0, float(next(scores))))
    real_replace, moves = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        if STAGING in str(src) and Path(dst).parent.name == "run":  # into place
            moves.append(dst)
            if len(moves) == 4:  # the second best's first file moved, then Ctrl-C
                raise KeyboardInterrupt

    monkeypatch.setattr(best_module.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", select_by="rms_e_y",
              **TINY)
    run = tmp_path / "run"
    best = json.loads((run / "best.json").read_text())
    assert best["timesteps"] == 128
    assert PPO.load(run / "best_model.zip", device="cpu").num_timesteps == 128
    assert _stale(run) == []


def test_a_stop_while_a_checkpoint_is_saved_leaves_whole_checkpoints(tmp_path, monkeypatch):
    pytest.importorskip("stable_baselines3")
    from vdsim_gym.training import train

    _interrupt_save(monkeypatch, "_steps", call=2)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", **TINY)
    folder = tmp_path / "run" / "checkpoints"
    zips = sorted(p.name for p in folder.glob("*.zip"))
    assert zips == ["model_64_steps.zip"], zips
    assert zipfile.ZipFile(folder / zips[0]).testzip() is None
    assert _stale(folder) == []


# ------------------------------------------------------------------ the start-up

def test_sigterm_during_the_start_up_removes_the_stub_folder(tmp_path, monkeypatch,
                                                             sigterm_recorder):
    """SIGTERM after the run folder is made, while the envs are built: an interrupt, and
    the folder is gone, so the name is free. It used to kill the process (the handler
    came later) and leave the stub."""
    pytest.importorskip("stable_baselines3")
    import vdsim_gym.sb3_vec_env as module
    from vdsim_gym.training import train

    real = module.make_sb3_vec_env

    def make(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "make_sb3_vec_env", make)
    with pytest.raises(KeyboardInterrupt):
        train("ppo", "VDSim-DLC-v0", out=tmp_path / "out", run_name="run", **TINY)
    assert sigterm_recorder == []
    assert (tmp_path / "out").is_dir() and not (tmp_path / "out" / "run").exists()


def test_an_error_during_the_start_up_removes_the_stub_folder(tmp_path):
    pytest.importorskip("stable_baselines3")
    from vdsim_gym.errors import TrainingError
    from vdsim_gym.training import train

    with pytest.raises(TrainingError, match="hyperparameters"):
        train("ppo", "VDSim-DLC-v0", out=tmp_path, run_name="run", timesteps=64,
              progress_bar=False, hyperparams={"n_envs": 1, "no_such_key": 1})
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ workers and parents

def test_a_worker_gets_sigterm_when_its_parent_is_killed(tmp_path):
    """The parent killed (SIGKILL: no cleanup runs): the worker gets SIGTERM from the
    kernel (or its watch thread) and stops as on Ctrl-C, within seconds."""
    child = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from vdsim_gym._signals import raise_on_sigterm
        from vdsim_gym.training.seeds import _die_with_parent
        raise_on_sigterm()
        _die_with_parent(int(sys.argv[1]))
        Path({str(tmp_path / "ready")!r}).write_text("ready")
        try:
            time.sleep(60)
        except KeyboardInterrupt:
            Path({str(tmp_path / "stopped")!r}).write_text("stopped")
    """)
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", {child!r}, str(os.getpid())])
        time.sleep(60)
    """)], cwd=tmp_path)  # not the repository root: its source would shadow an install
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "ready").exists():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while not (tmp_path / "stopped").exists():
            assert time.monotonic() < deadline, "the worker outlived its parent"
            time.sleep(0.05)
    finally:
        parent.kill()


def test_a_worker_whose_parent_is_already_gone_stops_at_once(tmp_path):
    script = ("from vdsim_gym.training.seeds import _die_with_parent\n"
              "try:\n    _die_with_parent(1)\nexcept KeyboardInterrupt:\n"
              "    print('STOPPED')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 0 and "STOPPED" in out.stdout, out.stderr


def test_describe_run_says_what_a_run_folder_holds(tmp_path):
    from vdsim_gym.training.run_folder import describe_run

    done, torn, empty = tmp_path / "done", tmp_path / "torn", tmp_path / "empty"
    done.mkdir()
    with zipfile.ZipFile(done / "model.zip", "w") as zf:
        zf.writestr("data", "{}")
    (done / "vecnormalize.pkl").write_bytes(b"x")
    (done / "train_time.json").write_text(json.dumps(
        {"timesteps_done": 4096, "timesteps_target": 100000, "outcome": "interrupted"}))
    (done / "best.json").write_text(json.dumps({"timesteps": 2048}))
    torn.mkdir()
    (torn / "model.zip").write_bytes(b"PK\x03\x04 cut")
    empty.mkdir()
    assert describe_run(done) == (f"{done}: model.zip after 4,096 of 100,000 steps, "
                                  "vecnormalize.pkl, best_model.zip from 2,048 steps")
    assert "unreadable model.zip" in describe_run(torn)
    assert "no model.zip" in describe_run(empty)
    assert "not made" in describe_run(tmp_path / "never")


def test_the_stop_report_names_every_run_folder(tmp_path, capsys):
    from vdsim_gym.training.seeds import _report_stopped

    dirs = [tmp_path / f"r_s{s}" for s in range(3)]
    dirs[0].mkdir()
    _report_stopped(dirs, 2)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "stopped; the run folders:"
    assert err[1] == f"  {dirs[0]}: no model.zip (stopped or failed before its final save; " \
                     "its message above)"
    assert "not made" in err[2] and err[3] == f"  not started: {dirs[2]}"


# ------------------------------------------------------------------ refusals

def _user_error(argv: list[str], capsys) -> str:
    from vdsim_gym.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("extra, fragments", [
    (["--seeds", "0-1000000"], ["1000001 runs", "bound of 1000", "fewer seeds"]),
    (["--residual-scale", "0.2"], ["--residual-scale", "give --residual BASE"]),
    (["--jobs", "2"], ["--jobs", "give --seeds"]),
    (["--name", "../escape"], ["--name '../escape'", "plain folder name"]),
    (["--name", "a/b"], ["--name 'a/b'", "plain folder name"]),
    (["--name", ".."], ["--name '..'", "plain folder name"]),
    (["--seeds", "0,1", "--name", "../x"], ["--name '../x'", "plain folder name"]),
])
def test_train_refuses_what_it_used_to_ignore(extra, fragments, tmp_path, capsys):
    out = tmp_path / "out"
    line = _user_error(["train", "--timesteps", "64", "--no-progress", "--out", str(out),
                        *extra], capsys)
    assert line.startswith("vdsim-gym train: error: ")
    assert all(f in line for f in fragments), line
    assert not (tmp_path / "escape").exists() and not (tmp_path / "x_s0").exists()
    assert not out.exists() or list(out.iterdir()) == []


def test_a_name_that_resolves_outside_out_is_refused(tmp_path):
    from vdsim_gym.errors import TrainingError
    from vdsim_gym.training.options import check_run_name
    from vdsim_gym.training.seeds import train_seeds

    out = tmp_path / "out"
    out.mkdir()
    (out / "link").symlink_to(tmp_path)
    with pytest.raises(TrainingError, match="outside --out"):
        check_run_name("link", out)
    assert check_run_name("fine", out) == out / "fine"
    with pytest.raises(TrainingError, match="at most 1000 runs"):
        train_seeds("ppo", "VDSim-DLC-v0", range(1001), name="many", out=out)


# ------------------------------------------------------------------ seeds-report

def _fake_run(folder: Path, env_id: str, env_kwargs: dict | None = None) -> Path:
    import yaml

    folder.mkdir(parents=True)
    (folder / "model.zip").write_bytes(b"PK\x03\x04 not a model")
    (folder / "config.yml").write_text(yaml.safe_dump(
        {"algo": "ppo", "env_id": env_id, "env_kwargs": env_kwargs or {}}))
    return folder


def test_seeds_report_takes_the_runs_env_and_refuses_another(tmp_path, capsys):
    from vdsim_gym.errors import ConfigError
    from vdsim_gym.training.seeds_report import runs_env

    acc = [str(_fake_run(tmp_path / f"acc_s{s}", "VDSim-ACC-v0", {"scenario": "follow"}))
           for s in (0, 1)]
    dlc = str(_fake_run(tmp_path / "dlc_s0", "VDSim-DLC-v0"))
    assert runs_env([acc], None, None) == ("VDSim-ACC-v0", {"scenario": "follow"})
    assert runs_env([acc], "VDSim-ACC-v0", {"control_period": 0.1}) == (
        "VDSim-ACC-v0", {"scenario": "follow", "control_period": 0.1})
    with pytest.raises(ConfigError, match="trained on VDSim-ACC-v0, .* on VDSim-DLC-v0"):
        runs_env([acc, [dlc]], None, None)
    with pytest.raises(ConfigError, match="scenario='cut_in'.*drop scenario"):
        runs_env([acc], None, {"scenario": "cut_in"})
    # the command: an ACC run under an explicit DLC env is one line naming both
    line = _user_error(["seeds-report", "--runs", ",".join(acc), "--env", "VDSim-DLC-v0",
                        "--no-plot", "--out", str(tmp_path / "rep")], capsys)
    assert "--env VDSim-DLC-v0, but the runs were trained on VDSim-ACC-v0" in line, line


def test_seeds_report_names_a_damaged_run_file(tmp_path, capsys):
    pytest.importorskip("rliable")
    from vdsim_gym.errors import ConfigError, TrainingError
    from vdsim_gym.policies import load_policy
    from vdsim_gym.training.seeds import learning_curves

    good, bad = tmp_path / "r_s0", tmp_path / "r_s1"
    for run in (good, bad):
        run.mkdir()
        np.savez(run / "eval_metrics.npz", timesteps=np.array([64, 128]),
                 failed_episodes=np.array([0, 0]), rms_e_y=np.array([[0.2], [0.1]]))
    data = (bad / "eval_metrics.npz").read_bytes()
    (bad / "eval_metrics.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(TrainingError) as info:
        learning_curves([good, bad], tmp_path / "lc.png", reps=10)
    msg = str(info.value)
    assert str(bad / "eval_metrics.npz") in msg and "damaged" in msg and "retrain" in msg
    pytest.importorskip("stable_baselines3")
    _fake_run(tmp_path / "torn", "VDSim-DLC-v0")
    with pytest.raises(ConfigError, match="model.zip"):
        load_policy(tmp_path / "torn" / "model.zip")
    line = _user_error(["seeds-report", "--runs", str(tmp_path / "torn"), "--delays", "0ms",
                        "--seeds", "1", "--no-plot", "--out", str(tmp_path / "rep")], capsys)
    assert str(tmp_path / "torn" / "model.zip") in line, line


# ------------------------------------------------------------------ train --jobs, end to end

@pytest.mark.slow
def test_ctrl_c_to_parallel_seeds_leaves_whole_run_folders_and_says_what_they_hold(tmp_path):
    """Ctrl-C to the process group of ``train --seeds 0-1 --jobs 2`` (the parent and both
    workers get SIGINT, then the parent's SIGTERM reaches the saving workers): each run
    folder has a whole model.zip, vecnormalize.pkl and train_time.json, and the parent
    says what each holds before "interrupted"."""
    from stable_baselines3 import PPO

    proc = subprocess.Popen([sys.executable, "-m", "vdsim_gym.cli", "train", "--seeds", "0-1",
                             "--jobs", "2", "--timesteps", "1000000", "--hyperparams",
                             '{"n_envs": 2, "n_steps": 256, "batch_size": 256}',
                             "--out", str(tmp_path), "--name", "stop", "--no-progress"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"stop_s{s}" / "config.yml").exists() for s in (0, 1)):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        time.sleep(2.0)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)  # impatient: a second Ctrl-C
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
    for s in (0, 1):
        run = tmp_path / f"stop_s{s}"
        done = json.loads((run / "train_time.json").read_text())["timesteps_done"]
        assert PPO.load(run / "model.zip", device="cpu").num_timesteps == done
        assert (run / "vecnormalize.pkl").exists() and _stale(run) == []
        assert f"  {run}: model.zip after {done:,} of" in err, err


@pytest.mark.slow
def test_sigkill_to_train_jobs_stops_its_workers(tmp_path):
    """SIGKILL to the parent of ``train --jobs 2``: both workers stop within seconds
    (not minutes later) and save their run folders."""
    proc = subprocess.Popen([sys.executable, "-m", "vdsim_gym.cli", "train", "--seeds", "0-1",
                             "--jobs", "2", "--timesteps", "1000000", "--hyperparams",
                             '{"n_envs": 2, "n_steps": 256, "batch_size": 256}',
                             "--out", str(tmp_path), "--name", "kill", "--no-progress"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"kill_s{s}" / "config.yml").exists() for s in (0, 1)):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        time.sleep(2.0)
        workers = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()
                   and _ppid(p) == proc.pid]
        assert len(workers) >= 2, workers
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30
        while any(_alive(w) for w in workers):
            assert time.monotonic() < deadline, "workers outlived their parent"
            time.sleep(0.2)
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    for s in (0, 1):
        run = tmp_path / f"kill_s{s}"
        assert zipfile.ZipFile(run / "model.zip").testzip() is None
        assert json.loads((run / "train_time.json").read_text())["outcome"] == "interrupted"


def _ppid(proc_dir: Path) -> int:
    try:
        return int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
