"""Every user error of the ``vdsim-gym`` command line: one line on stderr naming the
argument, the value and the fix, exit code 2, no traceback; the same process then runs a
valid command. Real bugs keep their traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vdsim_gym.bench import throughput, vector
from vdsim_gym.cli import main
from vdsim_gym.errors import ArgumentTypeError, ConfigError
from vdsim_gym.eval import delay_budget, demo
from vdsim_gym.timing import whole_ticks

SWEEP = ["sweep", "--seeds", "1", "--no-progress", "--no-plot", "--out", "{tmp}/out"]

# (argv, fragments the message must contain); {tmp} is the test's tmp_path, {file} a file.
CASES = {
    "demo-preset": (["demo", "--presets", "bogus"], ["--presets", "'bogus'", "iso3888_1"]),
    "demo-preset-in-list": (["demo", "--presets", "iso3888_1,nope"], ["--presets", "'nope'"]),
    "demo-speed-negative": (["demo", "--speed", "-5"], ["--speed", "'-5'", "> 0"]),
    "demo-speed-nan": (["demo", "--speed", "nan"], ["--speed", "'nan'", "> 0"]),
    "demo-out-file": (["demo", "--out", "{file}"], ["--out", "is a file, not a folder"]),
    "demo-out-under-file": (["demo", "--out", "{file}/sub"],
                            ["--out", "is a file, so no folder can be made under it"]),
    "demo-level": (["demo", "--level", "L3"], ["--level", "'L3'", "L1"]),
    "budget-negative": (["delay-budget", "--duration", "-1"], ["--duration", "'-1'", "> 0"]),
    "budget-zero": (["delay-budget", "--duration", "0"], ["--duration", "'0'", "> 0"]),
    "budget-huge": (["delay-budget", "--duration", "1e6"],
                    ["--duration", "'1e6'", "<= 600", "longer runs are refused"]),
    "budget-nan": (["delay-budget", "--duration", "nan"], ["--duration", "'nan'"]),
    "budget-not-a-multiple": (
        ["delay-budget", "--duration", "0.0001", "--no-plot", "--out", "{tmp}/out"],
        ["duration = 0.0001 s", "0.0005 or 0.001 s"]),
    "bench-calls-zero": (["bench", "--calls", "0"], ["--calls", ">= 1", "got 0"]),
    "bench-calls-negative": (["bench", "--calls", "-3"], ["--calls", ">= 1", "got -3"]),
    "bench-calls-text": (["bench", "--calls", "x"], ["--calls", "'x'", "not an integer"]),
    "bench-vector-steps": (["bench", "--vector", "--steps", "0"], ["--steps", ">= 1", "got 0"]),
    "bench-repeats": (["bench", "--repeats", "0"], ["--repeats", ">= 1", "got 0"]),
    "sweep-kwargs-unknown-key": ([*SWEEP, "--env-kwargs", '{"bogus_key": 1}'],
                                 ["--env-kwargs", "'bogus_key'", "valid keys", "preset"]),
    "sweep-kwargs-not-json": ([*SWEEP, "--env-kwargs", "not json"],
                              ["--env-kwargs", "'not json'", "not JSON", '{"preset"']),
    "sweep-kwargs-array": ([*SWEEP, "--env-kwargs", "[1]"],
                           ["--env-kwargs", "'[1]'", "JSON array, not an object"]),
    "sweep-kwargs-bad-value": ([*SWEEP, "--env-kwargs", '{"preset": "nope"}'],
                               ["--env-kwargs", "'nope'", "iso3888_1"]),
    "sweep-kwargs-overrun": ([*SWEEP, "--env-kwargs", '{"overrun": "queue"}'],
                             ["--env-kwargs", "'overrun'", "--overrun"]),
    "sweep-delays-word": ([*SWEEP, "--delays", "bogus"], ["--delays", "'bogus'", "10ms"]),
    "sweep-delays-negative": ([*SWEEP, "--delays", "-5ms"],
                              ["--delays", "'-5ms'", "negative", "0 or more"]),
    "sweep-seeds": ([*SWEEP, "--seeds", "0"], ["--seeds", ">= 1", "got 0"]),
    "sweep-num-envs": ([*SWEEP, "--num-envs", "0"], ["--num-envs", ">= 1", "got 0"]),
    "sweep-controller-name": ([*SWEEP, "--controller", "nosuch"],
                              ["--controller", "'nosuch'", "stanley", "SB3 model file"]),
    "sweep-controller-file": ([*SWEEP, "--controller", "missing_model.zip"],
                              ["--controller", "'missing_model.zip'", "no such SB3 model file"]),
    "sweep-controller-param": ([*SWEEP, "--controller", "stanley:gian=2"],
                               ["--controller", "'gian'", "gain", "kp, ki"]),
    "sweep-compare": ([*SWEEP, "--compare", "nosuch"], ["--compare", "'nosuch'"]),
    "sweep-algo": ([*SWEEP, "--algo", "xyz"], ["--algo", "PPO"]),
    "sweep-env-not-vdsim": ([*SWEEP, "--env", "CartPole-v1"],
                            ["--env", "'CartPole-v1'", "is not a VDSim env", "VDSim-DLC-v0",
                             "VDSim-PathFollow-v0"]),
    "sweep-env-unknown": ([*SWEEP, "--env", "VDSim-Nope-v0"],
                          ["--env", "'VDSim-Nope-v0'", "VDSim-DLC-v0"]),
    "acc-plant": (["acc", "--plant", "L3", "--out", "{tmp}/out/r.csv"],
                  ["--plant", "'L3'", "point_mass"]),
    "acc-config-missing": (["acc", "--config", "{tmp}/nope.yaml", "--out", "{tmp}/out/r.csv"],
                           ["nope.yaml: cannot read the config file"]),
    "acc-sensor-not-csv": (["acc", "--sensor", "{file}", "--out", "{tmp}/out/r.csv"],
                           ["a_file: missing column(s) time, lead_speed, distance"]),
    "acc-gains-not-yaml": (["acc", "--gains", "{file}", "--out", "{tmp}/out/r.csv"],
                           ["a_file: expected blocks pid_speed, pid_distance"]),
    "acc-out-folder": (["acc", "--out", "{tmp}"], ["is a folder", "results CSV's file path"]),
    "acc-metrics-missing": (["acc-metrics", "--csv", "{tmp}/none.csv", "--set-speed", "30",
                             "--dt", "0.1"], ["none.csv: cannot read the results file"]),
    "acc-metrics-dt": (["acc-metrics", "--csv", "{file}", "--set-speed", "30", "--dt", "0"],
                       ["--dt", "'0'", "> 0"]),
    "acc-metrics-columns": (["acc-metrics", "--csv", "{file}", "--set-speed", "30",
                             "--dt", "0.1"], ["columns must be exactly time, ego_speed"]),
    "acc-metrics-safe": (["acc-metrics", "--csv", "{file}", "--set-speed", "30", "--dt",
                          "0.1", "--min-safe-distance", "nan"],
                         ["--min-safe-distance", "'nan'", ">= 0"]),
    "bench-wallclock-runs": (["bench", "wallclock", "--runs", "0"], ["--runs", ">= 1"]),
    "bench-wallclock-duration": (["bench", "wallclock", "--duration", "1e4"],
                                 ["--duration", "<= 600"]),
    "bench-kind": (["bench", "wallclok"], ["invalid choice", "'wallclok'"]),
    "dyno-table-out-file": (["dyno-table", "--out", "{file}"],
                            ["--out", "is a file, not a folder"]),
    "sweep-cycle-follower-param": ([*SWEEP, "--env", "VDSim-Dyno-v0", "--controller",
                                    "cycle_follower:lookahead=1"],
                                   ["'lookahead'", "lookahead_s, horizon_s"]),
    "delay-budget-vehicle": (["delay-budget", "--vehicle", "nope", "--out", "{tmp}/db"],
                             ["unknown vehicle 'nope'", "generic_sedan_v0"]),
    "handling-vehicle": (["handling", "--vehicle", "nope"],
                         ["unknown vehicle 'nope'", "generic_sedan"]),
    "handling-levels": (["handling", "--levels", "L2,L3"], ["--levels", "'L2,L3'", "L1"]),
    "handling-out-file": (["handling", "--out", "{file}"], ["--out", "is a file, not a folder"]),
    "unknown-command": (["fly"], ["invalid choice", "'fly'", "demo"]),
    "accuracy-two-gates": (["accuracy", "--noisy", "--closed-loop"],
                           ["--closed-loop and --noisy", "one at a time"]),
    "accuracy-seeds-alone": (["accuracy", "--seeds", "2"], ["--seeds applies to --noisy"]),
    "accuracy-seeds-closed-loop": (["accuracy", "--closed-loop", "--seeds", "2"],
                                   ["--seeds applies to --noisy"]),
    "accuracy-noisy-seeds": (["accuracy", "--noisy", "--seeds", "0"], ["--seeds", ">= 1"]),
    "accuracy-noisy-case": (["accuracy", "--noisy", "--cases", "nope"],
                            ["unknown noisy-gate case", "'nope'", "dlc, path_follow, acc"]),
}


def _argv(argv: list[str], tmp_path) -> list[str]:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    return [a.replace("{tmp}", str(tmp_path)).replace("{file}", str(a_file)) for a in argv]


def assert_user_error(argv: list[str], fragments: list[str], capsys) -> str:
    """Runs the CLI in this process; returns its one stderr line."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    prog = "vdsim-gym" if argv[0] == "fly" else f"vdsim-gym {argv[0]}"
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


@pytest.mark.parametrize("case", list(CASES))
def test_user_error_is_one_line_and_exit_2(case, tmp_path, capsys):
    argv, fragments = CASES[case]
    line = assert_user_error(_argv(argv, tmp_path), fragments, capsys)
    assert "unexpected keyword argument 'overrun'" not in line
    assert not (tmp_path / "out").exists()  # refused before any work or output


# A valid run of each command, short; each runs in the process its errors ran in.
RECOVERY = {
    "demo": ["demo", "--presets", "iso3888_2", "--out", "{tmp}/ok"],
    "delay-budget": ["delay-budget", "--duration", "0.1", "--no-plot", "--out", "{tmp}/ok"],
    "bench": ["bench", "--repeats", "1", "--no-highway"],
    "sweep": ["sweep", "--seeds", "1", "--num-envs", "1", "--delays", "0ms", "--no-plot",
              "--no-progress", "--out", "{tmp}/ok",
              "--env-kwargs", '{"preset": "iso3888_2", "max_episode_steps": 5}'],
    "acc": ["acc", "--out", "{tmp}/ok/results.csv"],
    "dyno-table": ["dyno-table", "--out", "{tmp}/ok", "--no-plot"],
}


@pytest.mark.parametrize("command", list(RECOVERY))
def test_valid_command_runs_after_the_errors(command, tmp_path, capsys):
    for argv, fragments in CASES.values():
        if argv[0] == command:
            assert_user_error(_argv(argv, tmp_path), fragments, capsys)
    assert main(_argv(RECOVERY[command], tmp_path)) == 0
    out = capsys.readouterr().out
    assert any(s in out for s in ("case", "e_y RMSE", "rows per mode", "Delay table"))
    if command != "bench":
        assert (tmp_path / "ok").is_dir()


@pytest.mark.parametrize("argv, fragment", [
    (["demo", "--presets", "bogus"], "--presets"),
    (["sweep", "--env", "CartPole-v1", "--seeds", "1", "--no-progress"], "VDSim env"),
])
def test_no_traceback_from_a_real_process(argv, fragment, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", *argv], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert fragment in proc.stderr and proc.stdout == ""


def _budget_raises(monkeypatch, exc: BaseException | None = None, fn=None) -> None:
    def fake(**kwargs):
        if fn is not None:
            fn()
        raise exc

    monkeypatch.setattr(delay_budget, "run_delay_budget", fake)


def test_ctrl_c_prints_interrupted_and_exits_130(monkeypatch, tmp_path, capsys):
    _budget_raises(monkeypatch, KeyboardInterrupt())
    with pytest.raises(SystemExit) as info:
        main(["delay-budget", "--out", str(tmp_path)])
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == "interrupted"


@pytest.mark.parametrize("exc, fragments", [
    (ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"),
     ["matplotlib", "pip install 'vdsim-gym[plot]'", "--no-plot"]),
    (PermissionError(13, "Permission denied", "/root/x"),
     ["cannot write '/root/x'", "Permission denied", "--out"]),
    (FileExistsError(17, "File exists", "/tmp/f"), ["'/tmp/f'", "--out"]),
    (ArgumentTypeError("terminate_on_cone must be a bool, got 'no'"), ["terminate_on_cone"]),
    (ConfigError("speed must be\npositive"), ["speed must be positive"]),  # one line
])
def test_library_user_errors_become_one_line(exc, fragments, monkeypatch, tmp_path, capsys):
    _budget_raises(monkeypatch, exc)
    assert_user_error(["delay-budget", "--out", str(tmp_path)], fragments, capsys)


def _interpreter_type_error() -> None:
    1 <= "a"  # noqa: B015  (the bug under test)


@pytest.mark.parametrize("exc, fn", [
    (None, _interpreter_type_error),  # TypeError raised by the interpreter: a bug
    # a library's own ValueError or TypeError that no check of the package turned into
    # a VDSimError: a bug (the package checks its inputs before the library sees them)
    (ValueError("operands could not be broadcast together"), None),
    (TypeError("unsupported operand type(s)"), None),
    (ZeroDivisionError("float division by zero"), None),
    (ModuleNotFoundError("No module named 'vdsim_gym._core'", name="vdsim_gym._core"), None),
    (KeyError("x"), None),
])
def test_bugs_keep_their_traceback(exc, fn, monkeypatch, tmp_path):
    _budget_raises(monkeypatch, exc, fn)
    with pytest.raises((TypeError, ValueError, ZeroDivisionError, ImportError, KeyError)):
        main(["delay-budget", "--out", str(tmp_path)])


def test_traceback_on_request(monkeypatch, tmp_path):
    _budget_raises(monkeypatch, ConfigError("bad"))
    monkeypatch.setenv("VDSIM_GYM_TRACEBACK", "1")
    with pytest.raises(ConfigError, match="bad"):
        main(["delay-budget", "--out", str(tmp_path)])


def test_help_states_what_calls_and_duration_mean(capsys):
    with pytest.raises(SystemExit) as info:
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert info.value.code == 0
    assert "highway-env row only" in text and "max(CALLS/10, 10) env steps" in text
    assert "one whole baseline episode per block" in text
    with pytest.raises(SystemExit):
        main(["delay-budget", "--help"])
    assert "at most 600" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("call, match", [
    (lambda: demo.run_demo(presets=["bogus"]), "unknown preset 'bogus'; choose from"),
    (lambda: demo.scenario_speed("bogus"), "unknown preset"),
    (lambda: throughput.run_bench(calls=0), "calls must be an integer >= 1"),
    (lambda: vector.run_bench_vector(steps=0), "steps must be an integer >= 1"),
    (lambda: vector.vector_rows(2, 1, steps=0, repeats=1), "steps"),
    (lambda: delay_budget.run_budget(duration=1e6), "<= 600"),
    (lambda: delay_budget.run_budget(duration=float("nan")), "duration"),
])
def test_the_library_functions_check_too(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("seconds, allow_zero, suggested", [
    (0.0003, False, "0.0005 or 0.001 s"),
    (0.0003, True, "0.0005 or 0.001 s"),
    (1.0003, False, "1 or 1.0005 s"),
])
def test_whole_ticks_never_suggests_zero(seconds, allow_zero, suggested):
    with pytest.raises(ValueError) as info:
        whole_ticks(seconds, 0.0005, "duration", allow_zero=allow_zero)
    msg = str(info.value)
    assert suggested in msg and "such as 0 " not in msg and "such as -" not in msg
    assert whole_ticks(0.0005, 0.0005, "duration") == 1  # recovery: the suggestion works


def test_bench_wallclock_short_run(capsys):
    """The command runs end to end (a short run, no load, no DLC): host line, header and
    one row per affinity condition; no wall-clock figure is asserted."""
    assert main(["bench", "wallclock", "--runs", "1", "--duration", "0.2", "--no-load",
                 "--no-dlc"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("host: ") and "overruns/run" in out
    assert out.count("low load") >= 1
