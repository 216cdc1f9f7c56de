"""``vdsim-gym train``, ``vdsim-gym compare`` and ``vdsim-gym validate`` (issue 28): the
options of agents/train.py, agents/compare.py and ``python -m vdsim_gym.analysis.validation``
(which call the same code), a tiny real run of train and compare, one-line errors for
bad values and missing extras, Ctrl-C. The validation's real run is under ``-m
validation``; the scripts' own runs are tests/agents/test_training.py's."""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vdsim_gym.cli import build_parser, main
from vdsim_gym.cli.main import command_parser

ROOT = Path(__file__).resolve().parents[2]
# The smallest training of tests/agents/test_training.py's script tests (one PPO rollout).
TINY = '{"n_envs": 1, "n_steps": 128, "batch_size": 64, "n_epochs": 1}'
TRAIN = ["train", "--env", "VDSim-DLC-v0", "--timesteps", "128", "--no-progress",
         "--hyperparams", TINY, "--eval-freq", "100000", "--out", "{tmp}/out"]
COMPARE = ["compare", "--policies", "stanley", "--delays", "0ms", "--seeds", "1",
           "--no-plot", "--out", "{tmp}/out"]

# The options (and defaults) the scripts had before they became these commands, and the
# ones added since.
TRAIN_OPTIONS = {
    "--algo": "ppo", "--env": "VDSim-DLC-v0", "--latency": None, "--randomize": None,
    "--action-history": 0, "--timesteps": None, "--seed": 0, "--out": "runs", "--name": None,
    "--hyperparams": None, "--conf": None, "--env-kwargs": None, "--eval-freq": 10_000,
    "--eval-episodes": None, "--eval-scenarios": None, "--num-threads": 1, "--no-progress": False,
    "--residual": None, "--residual-scale": None, "--seeds": None, "--jobs": None,
    "--select-by": "return", "--critic": "plain", "--features": None, "--known-delay": None,
    "--imitate": None, "--imitate-rounds": None, "--imitate-steps": None, "--kl-coef": None,
    "--select-min-gap": None, "--from-run": None,
}
COMPARE_OPTIONS = {
    "--env": "VDSim-DLC-v0", "--policies": None, "--delays": "0,10,20,40ms", "--seeds": 64,
    "--overrun": "skip", "--metric": None, "--env-kwargs": None, "--scenarios": None,
    "--own-env": False, "--num-envs": 64, "--out": "compare_out", "--no-plot": False,
    "--trust": False,
}
VALIDATE_OPTIONS = {"--plot": None, "--integrator": None}


def _argv(argv: list[str], tmp_path: Path) -> list[str]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    return [a.replace("{tmp}", str(tmp_path)).replace("{file}", str(a_file)) for a in argv]


def _options(parser: argparse.ArgumentParser) -> dict[str, object]:
    return {a.option_strings[-1]: a.default for a in parser._actions
            if a.option_strings and a.option_strings[0] != "-h"}


@pytest.mark.parametrize("command, expected", [("train", TRAIN_OPTIONS),
                                               ("compare", COMPARE_OPTIONS),
                                               ("validate", VALIDATE_OPTIONS)])
def test_the_commands_have_the_scripts_options(command, expected, capsys):
    assert _options(build_parser().commands[command]) == expected
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: vdsim-gym {command} ")
    assert all(option in text for option in expected)


def test_the_scripts_are_the_commands_under_their_own_names(capsys):
    from vdsim_gym.analysis import validation

    for command, prog in (("train", "agents/train.py"), ("compare", "agents/compare.py")):
        script, cmd = command_parser(command, prog), build_parser().commands[command]
        assert [(a.option_strings, a.default, a.help, a.choices) for a in
                script._actions] == [(a.option_strings, a.default, a.help, a.choices)
                                     for a in cmd._actions]
        assert script.prog == prog and script.description == cmd.description
    # python -m vdsim_gym.analysis.validation: its parser holds the same options
    ap = argparse.ArgumentParser()
    validation.add_arguments(ap)
    assert _options(ap) == VALIDATE_OPTIONS
    for script in ("train.py", "compare.py"):
        proc = subprocess.run([sys.executable, str(ROOT / "agents" / script), "--help"],
                              capture_output=True, text=True, timeout=120, check=True)
        assert proc.stdout.startswith(f"usage: agents/{script} ")


def test_compare_runs_two_baselines(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--policies", "stanley", "stanley:gain=2", "--delays", "20ms",
                 "--seeds", "2", "--num-envs", "2", "--no-plot", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "stanley:gain=2" in printed and "4 episodes" in printed
    with (out / "sweep_summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["controller"] for r in rows] == ["stanley", "stanley:gain=2"]
    assert (out / "sweep.csv").exists() and not (out / "sweep.png").exists()


def test_train_runs_the_smallest_training_and_refuses_its_folder_twice(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    argv = _argv([*TRAIN, "--name", "tiny", "--seed", "2", "--latency", "fixed:10ms",
                  "--eval-freq", "128", "--eval-episodes", "1"], tmp_path)
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "trained 128 steps" in printed
    # the answer where the work is done: the evaluations, the task metric with its unit
    assert "final evaluation (128 steps, 1 episodes): mean return" in printed, printed
    assert "e_y RMSE [m]" in printed and "of 1 episodes failed" in printed
    assert "best model (by return, 128 steps)" in printed and "best_model.zip" in printed
    run = tmp_path / "out" / "tiny"
    cfg = yaml.safe_load((run / "config.yml").read_text())
    assert (cfg["seed"], cfg["timesteps"], cfg["latency"]) == (2, 128, "fixed:10ms")
    assert cfg["hyperparams"]["n_steps"] == 128 and (run / "model.zip").exists()
    line = _user_error(argv, capsys)  # the same name again: the folder exists
    assert f"'{run}' exists; pass another --name" in line


def _user_error(argv: list[str], capsys, prog: str | None = None) -> str:
    """Runs the command in this process; returns its one stderr line."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog or 'vdsim-gym ' + argv[0]}: error: "), lines[0]
    return lines[0]


# (argv, fragments of the one line); none may leave {tmp}/out behind.
CASES = {
    "train-algo": ([*TRAIN, "--algo", "a2c"], ["--algo", "invalid choice", "'a2c'", "ppo"]),
    "train-timesteps-text": ([*TRAIN, "--timesteps", "many"],
                             ["--timesteps", "invalid int value", "'many'"]),
    "train-hyperparams-array": ([*TRAIN, "--hyperparams", "[1]"],
                                ["--hyperparams", "JSON array, not an object", '{"n_envs": 4}']),
    "train-env-kwargs-not-json": ([*TRAIN, "--env-kwargs", "level=L1"],
                                  ["--env-kwargs", "'level=L1' is not JSON", '{"level": "L1"}']),
    "train-out-file": ([*TRAIN, "--out", "{file}"], ["--out", "is a file, not a folder"]),
    "compare-no-policies": (COMPARE[:1], ["the following arguments are required: --policies"]),
    "compare-seeds": ([*COMPARE, "--seeds", "0"], ["--seeds", ">= 1", "got 0"]),
    "compare-num-envs": ([*COMPARE, "--num-envs", "-2"], ["--num-envs", ">= 1", "got -2"]),
    "compare-delays": ([*COMPARE, "--delays", "-5ms"], ["--delays", "'-5ms'", "negative"]),
    "compare-env-kwargs": ([*COMPARE, "--env-kwargs", "[1]"],
                           ["--env-kwargs", "JSON array, not an object"]),
    "compare-scenarios": ([*COMPARE, "--scenarios", '{"scenario": "follow"}'],
                          ["--scenarios", "JSON array of objects"]),
    "compare-policy": ([*COMPARE[:2], "stanley", "nope.zip", *COMPARE[3:]],
                       ["--policies 'nope.zip'", "no such SB3 model file"]),
    "compare-env": ([*COMPARE, "--env", "CartPole-v1"], ["--env", "is not a VDSim env"]),
    "compare-metric": ([*COMPARE, "--metric", "speed"], ["--metric 'speed'", "rms_e_y"]),
    "compare-out-file": ([*COMPARE, "--out", "{file}"], ["--out", "is a file, not a folder"]),
    "validate-integrator": (["validate", "--integrator", "rk5"],
                            ["--integrator 'rk5'", "rk4", "etd2"]),
    "validate-plot-folder": (["validate", "--plot", "{tmp}"], ["--plot", "is a folder"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_values_are_one_line(case, tmp_path, capsys):
    argv, fragments = CASES[case]
    line = _user_error(_argv(argv, tmp_path), capsys)
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("module, argv, fragments", [
    ("stable_baselines3", ["train", "--out", "{tmp}/out", "--no-progress"],
     ["stable_baselines3", "pip install 'vdsim-gym[train]'"]),
    ("vehiclemodels", ["validate", "--plot", "{tmp}/out/v.png"],
     ["CommonRoad's vehicle models", "pip install 'vdsim-gym[validation]'"]),
])
def test_a_missing_extra_is_one_line_naming_it(module, argv, fragments, monkeypatch,
                                               tmp_path, capsys):
    monkeypatch.setitem(sys.modules, module, None)  # import raises ModuleNotFoundError
    line = _user_error(_argv(argv, tmp_path), capsys)
    assert all(f in line for f in fragments), (fragments, line)
    assert not (tmp_path / "out").exists()


def test_training_errors_are_one_line_before_any_run_folder(tmp_path, capsys):
    pytest.importorskip("stable_baselines3")
    for extra, fragments in ((["--latency", "slow"], ["--latency 'slow'", "uniform:0:40ms"]),
                             (["--num-threads", "0"], ["num_threads must be an integer >= 1"]),
                             (["--timesteps", "0"], ["timesteps must be a positive number"]),
                             (["--env", "CartPole-v1"], ["no block for 'CartPole-v1'"]),
                             (["--randomize", "mass=2:1"], ["--randomize 'mass=2:1'"])):
        line = _user_error(_argv([*TRAIN, *extra], tmp_path), capsys)
        assert all(f in line for f in fragments), (fragments, line)
    assert not (tmp_path / "out").exists()


def test_the_scripts_print_the_same_one_line_under_their_names(tmp_path):
    for script, argv, fragment in (
            ("compare.py", COMPARE[1:] + ["--seeds", "0"], "--seeds"),
            ("train.py", TRAIN[1:] + ["--hyperparams", "[1]"], "--hyperparams")):
        proc = subprocess.run([sys.executable, str(ROOT / "agents" / script),
                               *_argv(argv, tmp_path)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"agents/{script}: error: "), lines
        assert fragment in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command, module, name", [
    ("train", "vdsim_gym.training", "train"),
    ("compare", "vdsim_gym.eval.sweeps.compare", "run_sweep"),
    ("validate", "vdsim_gym.analysis.validation", "comparison"),
])
def test_ctrl_c_prints_interrupted_and_exits_130(command, module, name, monkeypatch,
                                                 tmp_path, capsys):
    import importlib

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(module), name, interrupted)
    if command == "validate":
        pytest.importorskip("vehiclemodels")
    argv = {"train": TRAIN, "compare": COMPARE, "validate": ["validate"]}[command]
    with pytest.raises(SystemExit) as info:
        main(_argv(argv, tmp_path))
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == "interrupted"


@pytest.mark.validation
def test_validate_prints_the_table_and_writes_the_plot(tmp_path, capsys):
    pytest.importorskip("vehiclemodels", reason="pip install '.[validation]'")
    png = tmp_path / "img" / "validation.png"
    assert main(["validate", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.count("| L1 vs std |") == out.count("| L2 vs mb |") == 8
    assert f"wrote {png}" in out and png.stat().st_size > 10_000


def test_the_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for command in ("train", "compare", "validate"):
        assert f"\n    {command} " in text, command


def test_the_helps_first_paragraph_names_every_command(capsys):
    import importlib

    cli_main = importlib.import_module("vdsim_gym.cli.main")  # the module, not main()
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    usage_choices = text.split("{", 1)[1].split("}", 1)[0].split(",")
    first = " ".join(cli_main.__doc__.split("\n\n")[0].split())
    named = {w.strip(".,`") for w in first.split()}
    assert set(usage_choices) <= named, set(usage_choices) - named


def test_compare_help_describes_every_option_and_its_default():
    import argparse
    import importlib

    parser = importlib.import_module("vdsim_gym.cli.main").build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    compare = sub.choices["compare"]
    for action in compare._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"compare {action.option_strings}: no help"
        if action.default not in (None, False) and not action.required:
            assert "default" in action.help, f"compare {action.option_strings}: no default"


def test_a_latency_without_unit_is_named_as_the_option_given(capsys):
    pytest.importorskip("stable_baselines3")
    # without --no-progress: the option's error comes before a missing tqdm or rich (the
    # test extra has neither)
    line = _user_error(["train", "--latency", "fixed:20", "--timesteps", "10"], capsys)
    assert "--latency 'fixed:20'" in line and "no unit" in line
    assert "--delays" not in line  # the option the user gave, not another command's
