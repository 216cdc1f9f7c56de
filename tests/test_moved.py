"""The modules that moved into sim/, traces/ and analysis/ (issue 28) keep their old
import paths: the same module objects, submodules included, loaded on first use."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

from vdsim_gym import _moved


@pytest.mark.parametrize("old, new", sorted(_moved.MOVED.items()))
def test_every_old_path_is_the_new_module_itself(old, new):
    a = importlib.import_module(f"vdsim_gym.{old}")
    b = importlib.import_module(f"vdsim_gym.{new}")
    assert a is b
    assert a.__name__ == a.__spec__.name == f"vdsim_gym.{new}"  # its own spec, not the alias


def test_from_imports_submodules_and_patches_see_one_module(monkeypatch):
    from vdsim_gym import plant as old_plant
    from vdsim_gym.analysis.validation import metrics as metrics2
    from vdsim_gym.sim import plant
    from vdsim_gym.validation import metrics

    assert old_plant is plant and metrics is metrics2
    monkeypatch.setattr("vdsim_gym.plant.STATE_SIZE", -1)  # a patch on the old path
    assert plant.STATE_SIZE == -1
    from vdsim_gym.errors import TraceError as TraceError2
    from vdsim_gym.trace import TraceError

    assert TraceError is TraceError2


def test_pickles_and_the_old_loop_margins_module_names():
    from vdsim_gym.analysis import LoopModel, loop_margins
    from vdsim_gym.analysis.margins import loop_margins as lm
    from vdsim_gym.config import load_vehicle

    v = load_vehicle("generic_sedan")  # pickled by its class's new module path
    assert type(v).__module__ == "vdsim_gym.sim.config"
    assert pickle.loads(pickle.dumps(v)) == v
    assert loop_margins is lm and LoopModel.__module__ == "vdsim_gym.analysis.margins"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        from vdsim_gym import analysis

        analysis.nothing  # noqa: B018


def test_unknown_names_still_fail_and_main_modules_run():
    assert _moved.new_name("vdsim_gym.plant") == "vdsim_gym.sim.plant"
    assert _moved.new_name("vdsim_gym.validation.metrics") == \
        "vdsim_gym.analysis.validation.metrics"
    assert _moved.new_name("vdsim_gym.validation.__main__") is None
    assert _moved.new_name("vdsim_gym.envs") is None and _moved.new_name("plant") is None
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("vdsim_gym.plantx")
    out = subprocess.run([sys.executable, "-m", "vdsim_gym.validation", "--help"],
                         capture_output=True, text=True, timeout=120, cwd="/")
    assert out.returncode == 0 and "--integrator" in out.stdout, out.stderr


def test_moved_modules_are_attributes_of_the_package_without_an_import():
    """``import vdsim_gym; vdsim_gym.plant.make_session`` worked when the module lived at
    the root (the front door imported it); it still does, in a fresh interpreter."""
    code = ("import vdsim_gym\n"
            "assert vdsim_gym.plant is vdsim_gym.sim.plant\n"
            "assert vdsim_gym.trace_render.__name__ == 'vdsim_gym.traces.render'\n"
            "try:\n    vdsim_gym.nothing\nexcept AttributeError as e:\n    print('ok', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd="/")
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr
