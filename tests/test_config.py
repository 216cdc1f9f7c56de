"""Vehicle configuration: YAML vs C++ defaults, unknown keys, overrides."""

from __future__ import annotations

import dataclasses
import math

import pytest
import yaml

from vdsim_gym import _core
from vdsim_gym._data import vehicles_dir
from vdsim_gym.config.vehicle import default_vehicle, load_actuator, load_vehicle
from vdsim_gym.errors import ConfigError


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        out.update(_flatten(v, key + ".") if isinstance(v, dict) else {key: v})
    return out


def test_config_generic_sedan_yaml_matches_cpp_defaults_field_by_field():
    with (vehicles_dir() / "generic_sedan.yaml").open() as fh:
        raw = _flatten(yaml.safe_load(fh))
    core = _flatten(dataclasses.asdict(default_vehicle()))
    assert set(raw) == set(core), "the YAML must state every field of VehicleParams"
    for key, value in core.items():
        if key == "name":
            continue
        if value is None:  # NaN in C++: not set (roll_stiffness_front: static load share)
            assert raw[key] is None, key
            continue
        assert raw[key] == pytest.approx(value, rel=0, abs=0), key


def test_config_yaml_states_design_reference_vehicle():
    v = load_vehicle("generic_sedan")
    # DESIGN.md: 1500 kg, Iz 2500, a 1.2, b 1.5, track 1.55, h 0.55, R 0.32, ratio 15,
    # Cd 0.30, A 2.2
    assert (v.mass, v.yaw_inertia, v.cg_to_front, v.cg_to_rear) == (1500, 2500, 1.2, 1.5)
    assert (v.track, v.cg_height, v.wheel_radius, v.steering_ratio) == (1.55, 0.55, 0.32, 15)
    assert (v.drag_coefficient, v.frontal_area, v.drive_torque_max) == (0.30, 2.2, 1500)
    assert (v.tire.lateral.B, v.tire.lateral.C, v.tire.lateral.E) == (8, 1.3, -1)
    assert (v.tire.longitudinal.B, v.tire.longitudinal.C, v.tire.longitudinal.E) == (10, 1.65, 0.97)


def test_config_unknown_key_names_file_and_key_path(tmp_path):
    f = tmp_path / "car.yaml"
    f.write_text("mass: 1200\ntire:\n  lateral: {B: 9, Cx: 1.2}\n")
    with pytest.raises(ConfigError, match=r"car\.yaml.*'tire\.lateral\.Cx'"):
        load_vehicle(f)


def test_config_wrong_type_is_an_error(tmp_path):
    f = tmp_path / "car.yaml"
    f.write_text("mass: heavy\n")
    with pytest.raises(ConfigError, match=r"'mass' must be a number"):
        load_vehicle(f)


def test_config_partial_file_overrides_defaults_and_omits_ratio(tmp_path):
    f = tmp_path / "light.yaml"
    f.write_text("mass: 1100.0\n")
    v = load_vehicle(f)
    assert v.mass == 1100.0 and v.name == "light"
    assert v.yaw_inertia == default_vehicle().yaw_inertia
    assert v.steering_ratio is None  # not stated: no steering-wheel angle observed


def test_config_unknown_vehicle_lists_available():
    with pytest.raises(ConfigError, match=r"unknown vehicle 'tractor'.*generic_sedan"):
        load_vehicle("tractor")


def test_config_invalid_values_rejected():
    with pytest.raises(ConfigError, match="mass"):
        load_vehicle({"mass": -5.0})
    with pytest.raises(ConfigError, match="front_drive_share"):
        load_vehicle({"front_drive_share": 1.5})


def test_config_round_trip_to_core_struct():
    v = load_vehicle("generic_sedan")
    core = v.to_core()
    assert core.mass == v.mass and core.tire.lateral.B == v.tire.lateral.B
    assert core.steering_ratio == 15.0
    no_ratio = dataclasses.replace(v, steering_ratio=None).to_core()
    assert math.isnan(no_ratio.steering_ratio)
    assert isinstance(core, _core.VehicleParams)


def test_config_actuator_validation():
    assert load_actuator(None) is None
    assert load_actuator({"dead_time": 0.01}).dead_time == 0.01
    with pytest.raises(ConfigError, match="unknown key 'lag'"):
        load_actuator({"lag": 0.1})
    with pytest.raises(ConfigError, match="time_constant"):
        load_actuator({"time_constant": -0.1})


@pytest.mark.parametrize("text, match", [
    ("mass: 1500\nmass: 1600\n", r"found the key 'mass' twice \(first at line 1\)"),
    ("mass: 1" + "0" * 400 + "\n", r"'mass' = 1000000000000000000\d\.\.\. \(401 digits\) is "
                                   r"too large"),
    ("a: " + "[" * 20000 + "]" * 20000 + "\n", "nested too deeply to parse"),
])
def test_hostile_vehicle_yaml_names_the_file_and_key(tmp_path, text, match):
    """A key given twice (the safe loader kept the last one silently), a 400-digit
    number (an OverflowError before) and a nesting too deep for the parser (a
    RecursionError) are ConfigErrors naming the file."""
    from vdsim_gym.config.vehicle import load_vehicle
    from vdsim_gym.errors import ConfigError

    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        load_vehicle(str(path))
    assert str(path) in str(info.value)
