"""ClosedLoopEval(obs_delay=...) in modes A, B and C, both forms (issue 29). Oracles: on the
callback form a whole-period sensor delay hands the controller the observation the
undelayed run's controller got that many samples earlier (open-loop commands, so the two
runs' plants are the same), the trace stays the true state; on the env form the eval's
sensor delay is the env's own, bit for bit; mode C reads captures its runner's thread
took."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval import ClosedLoopEval


class _Recorder:
    """Open-loop commands (a fixed sequence by sample time); records what it was shown."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def __call__(self, obs: dict, t: float) -> tuple[float, float]:
        self.seen.append(dict(obs))
        return 0.02 * np.sin(3.0 * t), 0.2 * np.cos(2.0 * t)


def _plant_run(mode: str, **kw):
    ctrl = _Recorder()
    res = ClosedLoopEval(plant_kwargs={"level": "L2"}, controller=ctrl, mode=mode,
                         duration=1.0, initial_state={"vx": 15.0}, **kw).run()
    return res, ctrl.seen


@pytest.mark.parametrize("mode, kw", [
    ("sync", {}), ("virtual_async", {"latency": LatencyModel.fixed(0.007)}),
    ("virtual_async", {"latency": LatencyModel.fixed(0.03), "overrun": "queue"})])
def test_callback_form_sees_the_undelayed_observation_whole_periods_earlier(mode, kw):
    ref, seen0 = _plant_run(mode, **kw)
    res, seen = _plant_run(mode, obs_delay=LatencyModel.fixed(0.04), **kw)
    assert len(seen) == len(seen0) > 20
    for k, obs in enumerate(seen):
        want = seen0[max(k - 2, 0)]
        assert obs["t"] == want["t"] and obs["X"] == want["X"] and obs["vy"] == want["vy"]
        assert obs["obs_age"] == pytest.approx(min(k, 2) * 0.02)
    # the trace is the plant's true state, the same as the undelayed run's
    np.testing.assert_array_equal(res.trace["X"], ref.trace["X"])
    np.testing.assert_array_equal(res.trace["vy"], ref.trace["vy"])
    assert res.samples["obs_age"].max() == pytest.approx(0.04)
    assert res.stats["obs_age_max_s"] == pytest.approx(0.04)
    assert res.meta["obs_delay_model"]["kind"] == "fixed"


def test_callback_form_captures_between_samples_on_the_substep_grid():
    """A 7.5 ms age: the observation is the plant's 15 substeps before the sample (its
    time says so), the plant's trajectory on heun unchanged by the stops."""
    kw = {"plant_kwargs": {"level": "L2", "integrator": "heun"}, "duration": 0.5,
          "initial_state": {"vx": 15.0}}
    ctrl = _Recorder()
    res = ClosedLoopEval(controller=ctrl, obs_delay=LatencyModel.fixed(0.0075), **kw).run()
    ref = ClosedLoopEval(controller=_Recorder(), **kw).run()
    for k, obs in enumerate(ctrl.seen[1:], start=1):
        assert obs["t"] == pytest.approx(k * 0.02 - 0.0075)
        assert obs["obs_age"] == pytest.approx(0.0075)
    np.testing.assert_array_equal(res.trace["X"], ref.trace["X"])


def test_env_form_obs_delay_is_the_envs_own_bit_for_bit():
    from vdsim_gym.controllers import stanley_pi

    model = LatencyModel.uniform(0.0, 0.05, seed=3)
    runs = []
    for on_eval in (True, False):
        env = gym.make("VDSim-DLC-v0", **({} if on_eval else {"obs_delay": model}))
        res = ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async",
                             latency=LatencyModel.fixed(0.01), duration=3.0, seed=2,
                             **({"obs_delay": model} if on_eval else {})).run()
        runs.append(res)
        if on_eval:  # handed back without it
            assert env.unwrapped.obs_delay is None
    a, b = runs
    np.testing.assert_array_equal(a.trace["e_y"], b.trace["e_y"])
    np.testing.assert_array_equal(a.samples["obs_age"], b.samples["obs_age"])
    assert a.samples["obs_age"].max() > 0.02
    no_delay = ClosedLoopEval(env="VDSim-DLC-v0", policy=stanley_pi(gym.make("VDSim-DLC-v0")),
                              mode="virtual_async", latency=LatencyModel.fixed(0.01),
                              duration=3.0, seed=2).run()
    assert not np.array_equal(no_delay.trace["e_y"], a.trace["e_y"])
    assert "obs_age" not in no_delay.samples


def test_mode_c_reads_the_runner_threads_captures():
    """Mode C: the runner's thread takes the captures after every substep; a sample reads
    the newest grid sample's (or an older one, should the control thread wake first), so
    every observation is one captured 30 ms before a grid tick and at least 30 ms old.
    Both forms; the env is handed back without the eval's sensor delay."""
    from vdsim_gym.controllers import stanley_pi

    ctrl = _Recorder()
    res = ClosedLoopEval(plant_kwargs={}, controller=ctrl, mode="wallclock", duration=0.4,
                         initial_state={"vx": 10.0}, obs_delay=LatencyModel.fixed(0.03)).run()
    late = [o for o in ctrl.seen if o["obs_age"] > 0.0 and o["t"] > 0.0]
    assert len(late) > 10
    for o in late:
        assert o["obs_age"] >= 0.03 - 1e-12
        grid = (o["t"] + 0.03) / 0.02
        assert abs(grid - round(grid)) < 1e-6  # captured 30 ms before a grid tick
    assert res.samples["obs_age"].max() >= 0.03 and res.stats["obs_age_mean_s"] > 0.02
    env = gym.make("VDSim-DLC-v0")
    res = ClosedLoopEval(env=env, policy=stanley_pi(env), mode="wallclock", duration=0.4,
                         obs_delay=LatencyModel.fixed(0.03)).run()
    ages = res.samples["obs_age"]
    assert (ages[3:] >= 0.03 - 1e-12).all() and env.unwrapped.obs_delay is None
    assert res.meta["obs_delay_model"]["kind"] == "fixed"


def test_obs_delay_refusals_name_the_fix():
    from vdsim_gym.controllers import stanley_pi

    env = gym.make("VDSim-DLC-v0", obs_delay=LatencyModel.fixed(0.02))
    with pytest.raises(ConfigError, match="give one of them"):
        ClosedLoopEval(env=env, policy=stanley_pi(env), obs_delay=LatencyModel.fixed(0.02))
    with pytest.raises(ConfigError, match="LatencyModel.fixed"):
        ClosedLoopEval(plant_kwargs={}, controller=_Recorder(), obs_delay=0.02)
