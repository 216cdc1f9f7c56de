"""ClosedLoopEval(network=...) on the callback form (mode B; issue 29). Oracles: the
losses, delivery ticks and discards of every sample against a plain Python replay of the
stated rule (the model's channel drawn once per command: lost, then its delay; a
delivered command applies at ceil((t_start + c_k + n) / dt) and discards the pending ones
due after it); a loss-free, delay-free network is the run without it, bit for bit; loss 1
applies no command; the env form's eval network is the env's own."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel, NetworkModel
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.timing import ceil_ticks

DT = 5e-4


def _controller(obs: dict, t: float) -> tuple[float, float]:
    return 0.02 * math.sin(3.0 * t), 300.0 * math.cos(2.0 * t)


def _run(**kw):
    return ClosedLoopEval(plant_kwargs={"level": "L2", "longitudinal": "force"},
                          controller=_controller, mode="virtual_async", duration=2.0,
                          initial_state={"vx": 15.0}, **kw).run()


def episode_channel(net: NetworkModel, seed: int = 0):
    """The network's channel as the command env's core draws it in the run's episode
    (``reset(seed=seed)``): reseeded with the episode's latency seed, drawn from the reset
    seed's latency stream and the run's latency model's seed (``measured()`` in mode B)."""
    from vdsim_gym import _core
    from vdsim_gym.envs.env_seeding import _LATENCY_STREAM

    rng = np.random.default_rng([seed, _LATENCY_STREAM])
    return net.channel(_core.draw_latency_seed(rng.bit_generator,
                                               LatencyModel.measured().seed))


@pytest.mark.parametrize("net", [
    NetworkModel(drop=0.2, jitter=LatencyModel.uniform(0.0, 0.06, seed=1), seed=3),
    NetworkModel(drop=0.05, burst=(0.1, 0.4), jitter=LatencyModel.normal(0.02, 0.01, 2))])
def test_losses_deliveries_and_discards_follow_the_rule(net):
    res = _run(latency=LatencyModel.uniform(0.0, 0.015, seed=5), network=net)
    s = res.samples
    ch = episode_channel(net)
    pending: list[int] = []  # sample indices delivered and not yet applied
    applied = np.ones(len(s["k"]), bool)
    for i in range(len(s["k"])):
        lost, n = ch.lost(), ch.delay()
        if lost:
            assert math.isnan(s["t_apply"][i])
            applied[i] = False
            continue
        t_finish = s["t_start"][i] + s["c_k"][i]
        tick = ceil_ticks(t_finish + n, DT) if n > 0 else ceil_ticks(t_finish, DT)
        assert round(s["t_apply"][i] / DT) == tick
        call = round(s["t_call"][i] / DT)
        pending = [j for j in pending if round(s["t_apply"][j] / DT) >= call]
        for j in pending:
            if round(s["t_apply"][j] / DT) > tick:
                applied[j] = False  # overtaken: discarded
        pending = [j for j in pending if applied[j]] + [i]
    end = round(res.stats["t_stop"] / DT) if res.stats["stopped_early"] else 4000
    applied &= np.nan_to_num(s["t_apply"], nan=np.inf) < end * DT + 1e-12
    np.testing.assert_array_equal(s["applied"], applied)
    assert res.stats["n_lost"] == int(np.isnan(s["t_apply"]).sum()) > 0
    assert res.stats["n_discarded"] > 0
    assert res.meta["network_model"]["seed"] == net.seed


def test_a_lossless_instant_network_is_the_run_without_it_and_loss_one_applies_nothing():
    lat = LatencyModel.fixed(0.01)
    a, b = _run(latency=lat), _run(latency=lat, network=NetworkModel())
    np.testing.assert_array_equal(a.trace["X"], b.trace["X"])
    np.testing.assert_array_equal(a.samples["t_apply"], b.samples["t_apply"])
    dead = _run(latency=lat, network=NetworkModel(drop=1.0))
    assert not dead.samples["applied"].any()
    assert np.all(dead.trace["u_steer"][:-1] == 0.0)  # the reset's command stays in force


def test_env_form_eval_network_is_the_envs_own_and_refusals():
    from vdsim_gym.controllers import stanley_pi

    net = NetworkModel(drop=0.2, jitter=LatencyModel.uniform(0.0, 0.04, seed=1), seed=3)
    runs = []
    for on_eval in (True, False):
        env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", terminate_on_cone=False,
                       **({} if on_eval else {"network": net}))
        runs.append(ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async",
                                   latency=LatencyModel.fixed(0.01), duration=3.0, seed=2,
                                   **({"network": net} if on_eval else {})).run())
        if on_eval:
            assert env.unwrapped.network is None  # handed back without it
    np.testing.assert_array_equal(runs[0].trace["e_y"], runs[1].trace["e_y"])
    assert runs[0].stats["n_lost"] == runs[1].stats["n_lost"] > 0
    with pytest.raises(ConfigError, match="mode='virtual_async'"):
        ClosedLoopEval(plant_kwargs={}, controller=_controller, network=NetworkModel(drop=0.1))
    with pytest.raises(ConfigError, match="NetworkModel"):
        _run(network={"drop": 0.1})
