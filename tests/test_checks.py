"""vdsim_gym._checks (one check per input) and the error hierarchy of vdsim_gym.errors:
one rule for integers, durations and actions wherever the input arrives, errors that
keep their built-in classes, and no second copy of a bound."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import _checks, errors
from vdsim_gym._checks import (
    ACTION_TOL,
    check_action,
    check_action_history,
    check_actions,
    check_decimation,
    check_flag,
    check_integer,
    check_num_envs,
    check_number,
    check_policy_action,
    check_seconds,
)

PACKAGE = Path(__file__).parents[1] / "vdsim_gym"
NAMES = ("steer", "longitudinal")


def test_every_error_is_a_vdsim_error_and_keeps_its_builtin_class():
    for cls, builtin in ((errors.InvalidActionError, ValueError),
                         (errors.ConfigError, ValueError), (errors.TraceError, ValueError),
                         (errors.UnknownKeywordError, TypeError),
                         (errors.UnsupportedEnvError, TypeError),
                         (errors.UnsupportedRenderModeError, TypeError),
                         (errors.ConcurrentUseError, RuntimeError),
                         (errors.ActuatorError, RuntimeError),
                         (errors.ControllerError, RuntimeError),
                         (errors.ArgumentTypeError, TypeError),
                         (errors.UsageError, RuntimeError),
                         (errors.SolverError, RuntimeError)):
        assert issubclass(cls, errors.VDSimError) and issubclass(cls, builtin), cls
    assert issubclass(errors.InvalidActionError, gym.error.InvalidAction)
    assert issubclass(errors.DelayRoundingWarning, errors.VDSimWarning)
    assert issubclass(errors.VDSimWarning, UserWarning)
    # The front door's ConfigError is the one class; the subpackages re-export no error.
    from vdsim_gym import ConfigError

    assert ConfigError is errors.ConfigError
    import vdsim_gym.dyno
    import vdsim_gym.eval

    for facade in (vdsim_gym.dyno, vdsim_gym.eval):
        assert not [n for n in facade.__all__ if n.endswith(("Error", "Warning"))], facade
    e = pickle.loads(pickle.dumps(errors.ControllerError("boom", 3, 0.06)))
    assert (str(e), e.k, e.t) == ("boom", 3, 0.06)


@pytest.mark.parametrize("good", [4, np.int64(4), np.uint8(4)])
def test_integers_are_python_or_numpy_ones(good):
    assert check_num_envs(good) == 4 and type(check_num_envs(good)) is int
    assert check_integer(good, "n") == 4 and check_decimation(good) == 4
    assert check_action_history(good) == 4


@pytest.mark.parametrize("bad", [True, np.bool_(True), 4.0, "4", None, 0])
def test_bools_floats_and_strings_are_not_counts(bad):
    with pytest.raises(errors.ConfigError, match="num_envs must be a positive integer"):
        check_num_envs(bad)
    with pytest.raises(errors.ConfigError, match="decimation must be a whole number"):
        check_decimation(bad)


def test_bounds_are_named():
    with pytest.raises(ValueError, match=r"num_envs = 100001 is more than the bound of 100000"):
        check_num_envs(100_001)
    with pytest.raises(ValueError, match=r"action_history must be an integer in \[0, 1000\]"):
        check_action_history(1001)
    with pytest.raises(ValueError, match=r"duration must be a number of seconds > 0 and "
                                         r"<= 600, got 601"):
        check_seconds(601, "duration", maximum=600)
    with pytest.raises(ValueError, match=r"x must be a number in \(0, 100\], got nan"):
        check_number(float("nan"), "x", 0, 100, open_low=True)


@pytest.mark.parametrize("bad", [True, float("nan"), float("inf"), -1.0, 0.0, "1"])
def test_durations_are_positive_finite_numbers(bad):
    with pytest.raises(errors.ConfigError, match="dt must be a positive number of seconds"):
        check_seconds(bad, "dt")
    assert check_seconds(np.float32(0.5), "dt") == 0.5


def test_flags_are_bools():
    assert check_flag(np.bool_(False), "f") is False
    for bad in (0, 1, "no", None):
        with pytest.raises(errors.ConfigError, match="f must be True or False"):
            check_flag(bad, "f")


@pytest.mark.parametrize("action", [np.array([1.0 + 5e-7, -1.0], np.float32),
                                    np.array([0.5, 1.0]), [0.5, -1], (0, 0),
                                    np.array([1, 0], np.int8)])
def test_actions_within_the_tolerance_pass(action):
    a = check_action(action, NAMES)
    assert isinstance(a, list) and len(a) == 2 and all(type(v) is float for v in a)


@pytest.mark.parametrize("action, match", [
    (np.array([1.0 + 2e-6, 0.0]), r"out of range.*\[-1, 1\]"),
    ([np.nan, 0.0], "NaN"), ([0.0, np.inf], "inf"), ([True, False], "2 real numbers"),
    (["0.1", "0.2"], "2 real numbers"), ([[0.1, 0.2]], r"shape \(2,\)"),
])
def test_bad_actions_raise_invalid_action(action, match):
    with pytest.raises(errors.InvalidActionError, match=match):
        check_action(action, NAMES)


def test_batches_name_the_row():
    a = np.zeros((3, 2), np.float32)
    assert check_actions(a, 3, NAMES) is a  # in range, float32, contiguous: as it is
    a[2, 1] = np.nan
    with pytest.raises(errors.InvalidActionError, match=r"env 2: actions\[2\].*NaN"):
        check_actions(a, 3, NAMES)
    assert check_actions([[0, 1]] * 3, 3, NAMES).dtype == np.float64


def test_policy_output_is_clipped_not_refused():
    np.testing.assert_array_equal(check_policy_action([[1.5, -0.2]], 2), [1.0, -0.2])
    with pytest.raises(errors.InvalidActionError, match="expected 2 action values"):
        check_policy_action([1.0], 2)
    with pytest.raises(errors.InvalidActionError, match="action must be finite"):
        check_policy_action([np.nan, 0.0], 2)
    with pytest.raises(errors.InvalidActionError, match="finite"):
        check_policy_action(np.array([0.0, np.inf]), 2)
    mine = np.array([2.0, -0.5])
    out = check_policy_action(mine, 2)  # clipped into a copy: the caller's array stays
    np.testing.assert_array_equal(out, [1.0, -0.5])
    np.testing.assert_array_equal(mine, [2.0, -0.5])
    assert out.dtype == np.float64 and not np.shares_memory(out, mine)


def test_the_action_tolerance_is_written_once():
    """ACTION_TOL is the only copy of the 1e-6 slack: the env, the vector env, the robot
    driver and the C++ fast steps (passed as action_tol) all use it."""
    pattern = re.compile(r"1\.0 \+ 1e-6|1 \+ 1e-6")
    hits = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
            if pattern.search(p.read_text())]
    assert hits == ["_checks.py"], hits
    from vdsim_gym.envs import core_env, vector

    assert core_env.ACTION_TOL is vector.ACTION_TOL is ACTION_TOL


def test_wrappers_and_bench_options_follow_the_shared_rules():
    """Inconsistencies the shared checks removed: the robot driver's own action check
    (strings, booleans and (1, n) arrays were converted), LatencyWrapper's unbounded
    action_history, substep_dt=True read as 1 s, openpilot_hold refusing numpy bools."""
    from vdsim_gym import LatencyModel
    from vdsim_gym.dyno import RobotDriver
    from vdsim_gym.wrappers import LatencyWrapper, RobotDriverWrapper

    env = RobotDriverWrapper(gym.make("VDSim-Dyno-v0"), "speed")
    env.reset(seed=0)
    for bad in (np.array(["0.5"]), [True], np.array([[0.5]])):
        with pytest.raises(errors.InvalidActionError):
            env.step(bad)
    env.step(np.array([0.5], np.float32))
    with pytest.raises(errors.ConfigError, match=r"action_history must be an integer in "
                                                 r"\[0, 1000\]"):
        LatencyWrapper(gym.make("VDSim-DLC-v0"), LatencyModel.fixed(0.01),
                       action_history=5000)
    with pytest.raises(ValueError, match="substep_dt must be a positive number of seconds"):
        gym.make("VDSim-DLC-v0", substep_dt=True)
    RobotDriver(openpilot_hold=np.bool_(True))
    with pytest.raises(ValueError, match="openpilot_hold must be True or False"):
        RobotDriver(openpilot_hold=1)


NEW_CLASSES = (errors.ArgumentTypeError, errors.UsageError, errors.SolverError)


@pytest.mark.parametrize("cls", NEW_CLASSES)
def test_the_new_classes_take_one_message_and_are_listed(cls):
    """Gymnasium's make re-raises ``type(e)(message)``; worker processes pickle errors."""
    e = cls("boom")
    assert str(type(e)(str(e))) == "boom"
    assert type(pickle.loads(pickle.dumps(e))) is cls
    assert cls.__name__ in errors.__all__ and f"``{cls.__name__}``" in errors.__doc__


def test_training_errors_are_config_errors():
    from vdsim_gym.errors import TrainingError

    assert issubclass(TrainingError, errors.ConfigError)
    assert issubclass(TrainingError, errors.VDSimError) and issubclass(TrainingError, ValueError)


def test_the_former_bare_errors_raise_the_new_classes(monkeypatch):
    """One site of each new class: the message is unchanged, the built-in class still
    catches it, and so does VDSimError."""
    import copy

    from vdsim_gym import LatencyModel, make_sb3_vec_env
    from vdsim_gym.dyno import RobotDriver
    from vdsim_gym.envs import courses, reference_line
    from vdsim_gym.eval.sweeps import sweep

    with pytest.raises(errors.ArgumentTypeError, match="actuator must be callable"):
        RobotDriver(actuator=3)
    with pytest.raises(errors.ArgumentTypeError, match=r"policy must have predict\(\)"):
        sweep(3, "VDSim-DLC-v0", latencies=[None], seeds=1, progress=False)
    env = gym.make("VDSim-DLC-v0")
    with pytest.raises(errors.ArgumentTypeError, match="holds C\\+\\+ env cores"):
        copy.copy(env.unwrapped)
    env.close()

    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.measured())
    env.reset(seed=0)
    with pytest.raises(errors.UsageError, match="call env.unwrapped.set_next_delay"):
        env.step(np.zeros(2, np.float32))
    env.close()
    venv = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=0)
    venv.reset()
    with pytest.raises(errors.UsageError, match=r"step_wait\(\) without step_async"):
        venv.step_wait()
    venv.close()

    monkeypatch.setattr(reference_line, "_body_violation", lambda *a, **k: 1.0)
    with pytest.raises(errors.SolverError, match="could not meet the lane constraints"):
        courses.dlc_course("iso3888_1", reference="smooth")


def test_plant_commands_and_trace_writes_use_the_hierarchy(tmp_path):
    """A Plant command is the plant's action (InvalidActionError); the trace writer's
    refusals are TraceErrors: both still ValueErrors."""
    from vdsim_gym.sim.plant import Plant
    from vdsim_gym.traces.trace import TraceWriter

    plant = Plant()
    plant.reset()
    with pytest.raises(errors.InvalidActionError, match="command must be finite"):
        plant.step([float("nan"), 0.0])
    with pytest.raises(errors.ConfigError, match="no trace is being recorded"):
        plant.write_trace(tmp_path / "run.vdtrace")
    with pytest.raises(errors.TraceError, match="a trace needs the channel 't'"):
        TraceWriter(tmp_path / "run.vdtrace", {}).write()


# Built-in ValueError/TypeError/RuntimeError the package may still raise, by (module under
# vdsim_gym/, enclosing function, class), each with the reason it is not a VDSimError.
# Everything else it raises on purpose is one (vdsim_gym.errors).
BUILTIN_RAISES_ALLOWED: dict[tuple[str, str, str], str] = {
    ("_checks.py", "coerce_action", "TypeError"):
        "control flow: a bare raise caught by the except two lines below, which raises "
        "InvalidActionError; it never leaves the function",
    ("_checks.py", "_as_batch", "TypeError"):
        "control flow: a bare raise caught by the except two lines below, which raises "
        "InvalidActionError; it never leaves the function",
    ("eval/closed_loop_gate.py", "case_metrics", "RuntimeError"):
        "internal invariant: every gate case asks for metrics its env reports; a missing "
        "one is a bug in the gate's table, not an input to fix",
    ("analysis/validation/commonroad.py", "commonroad_vehicle", "RuntimeError"):
        "internal invariant: the CommonRoad mapping must state every VehicleConfig field; "
        "a new field without a mapping is a bug for the developer who added it",
}
_BUILTINS = frozenset({"ValueError", "TypeError", "RuntimeError"})


def builtin_raises(source: str) -> list[tuple[str, str, int]]:
    """(enclosing function, class, line) of every ``raise ValueError(...)``, ``raise
    TypeError`` (bare or called) and ``RuntimeError``, and of every call building one
    (``return ValueError(...)`` in a helper), in ``source``."""
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
            exc = None
            if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Name):
                exc = child.exc
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name):
                exc = child.func
            if exc is not None and exc.id in _BUILTINS:
                found.append((scope, exc.id, child.lineno))
            visit(child, inner)

    visit(ast.parse(source), "<module>")
    return found


def test_the_raise_scanner_finds_bare_builtin_errors():
    snippet = (
        "def f(x):\n"
        "    if x:\n"
        "        raise ValueError(f'bad {x}')\n"
        "    raise TypeError\n"
        "class C:\n"
        "    def g(self):\n"
        "        return RuntimeError('built here, raised by the caller')\n"
        "def h():\n"
        "    raise ConfigError('fine')  # a VDSimError\n"
        "    isinstance(e, ValueError)  # not a construction\n"
    )
    assert builtin_raises(snippet) == [("f", "ValueError", 3), ("f", "TypeError", 4),
                                       ("g", "RuntimeError", 7)]


def test_the_package_raises_its_own_errors():
    """Every error the package raises on purpose is a VDSimError (issue 28): no built-in
    ValueError, TypeError or RuntimeError is raised or built outside the allow-list, and
    each entry of the allow-list still occurs (remove it when its raise goes)."""
    seen: set[tuple[str, str, str]] = set()
    unexpected = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for scope, cls, line in builtin_raises(path.read_text()):
            key = (rel, scope, cls)
            seen.add(key)
            if key not in BUILTIN_RAISES_ALLOWED:
                unexpected.append(f"vdsim_gym/{rel}:{line} ({scope}): {cls}")
    assert not unexpected, (
        "raise a vdsim_gym.errors class (ConfigError for a bad value, ArgumentTypeError, "
        "UsageError, ...) instead of the built-in:\n" + "\n".join(unexpected))
    assert set(BUILTIN_RAISES_ALLOWED) <= seen, set(BUILTIN_RAISES_ALLOWED) - seen


def test_the_checks_module_imports_nothing_above_it():
    src = (PACKAGE / "_checks.py").read_text()
    imports = re.findall(r"^(?:from|import) ([\w.]+)", src, re.M)
    assert set(imports) <= {"__future__", "math", "collections.abc", "typing", "numpy",
                            "vdsim_gym.errors"}, imports
    assert set(_checks.__all__) <= set(dir(_checks))
