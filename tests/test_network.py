"""A lossy network between controller and plant (issue 29): ``network=NetworkModel(drop,
burst, jitter, seed)``. Oracles: the Gilbert-Elliott chain's long-run loss and mean burst
length against their closed forms; loss 1 applies no command; a loss-free, delay-free
network is the run without it, bit for bit; an overtaken command is discarded, so the
command in force never goes back to an older sample."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel, NetworkModel, _core
from vdsim_gym.errors import ConfigError


def _losses(model: NetworkModel, n: int, seed: int = 0) -> np.ndarray:
    ch = _core.NetworkChannel(model.spec())
    ch.reseed(seed)
    return np.asarray(ch.lost_many(n))


def _runs(lost: np.ndarray) -> np.ndarray:
    """Lengths of the runs of consecutive losses."""
    x = np.concatenate([[0], lost.astype(np.int8), [0]])
    starts, ends = np.flatnonzero(np.diff(x) == 1), np.flatnonzero(np.diff(x) == -1)
    return ends - starts


@pytest.mark.parametrize("p_gb, p_bg", [(0.02, 0.25), (0.1, 0.5), (0.005, 0.05)])
def test_gilbert_elliott_loss_rate_and_burst_length_match_their_closed_forms(p_gb, p_bg):
    """Long-run loss pi_B = p_gb / (p_gb + p_bg) and mean burst 1 / p_bg (the bad state's
    geometric sojourn), within 4 standard errors of 400 000 commands (the chain's
    correlation widens the loss's error by sqrt((1 + rho) / (1 - rho)), rho = 1 - p_gb -
    p_bg)."""
    model = NetworkModel(burst=(p_gb, p_bg), seed=3)
    n = 400_000
    lost = _losses(model, n)
    pi_b = p_gb / (p_gb + p_bg)
    rho = 1.0 - p_gb - p_bg
    se = math.sqrt(pi_b * (1 - pi_b) / n * (1 + rho) / (1 - rho))
    assert abs(lost.mean() - pi_b) < 4 * se
    assert model.loss_rate == pytest.approx(pi_b)
    runs = _runs(lost)
    se_run = math.sqrt((1 - p_bg) / p_bg**2 / runs.size)  # geometric: var (1 - p) / p^2
    assert abs(runs.mean() - 1.0 / p_bg) < 4 * se_run


def test_bernoulli_loss_rate_and_seeding():
    model = NetworkModel(drop=0.1, seed=1)
    lost = _losses(model, 200_000)
    assert abs(lost.mean() - 0.1) < 4 * math.sqrt(0.09 / 200_000)
    assert _runs(lost).mean() == pytest.approx(1 / 0.9, rel=0.03)  # independent losses
    np.testing.assert_array_equal(_losses(model, 1000, seed=5), _losses(model, 1000, seed=5))
    assert (_losses(model, 1000, seed=5) != _losses(model, 1000, seed=6)).any()


def _run(env, steps: int = 60, seed: int = 3):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs]
    infos = []
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(rng.uniform(-0.3, 0.3, 2).astype(np.float32))
        out.append(obs)
        infos.append(info)
        if term or trunc:
            break
    return out, infos


def test_loss_free_network_is_the_run_without_it_and_loss_one_applies_nothing():
    kw = {"preset": "lane_change_3p5_30", "terminate_on_cone": False}
    plain, _ = _run(gym.make("VDSim-DLC-v0", **kw))
    free, infos = _run(gym.make("VDSim-DLC-v0", network=NetworkModel(), **kw))
    for a, b in zip(plain, free, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not any(i["lost"] for i in infos) and infos[-1]["n_lost"] == 0

    env = gym.make("VDSim-DLC-v0", network=NetworkModel(drop=1.0), **kw)
    _, infos = _run(env, steps=30)
    core = env.unwrapped.core
    assert all(i["lost"] and i["apply_tick"] == -1 and math.isnan(i["t_apply"]) for i in infos)
    assert infos[-1]["n_lost"] == 30 and core.command_in_force()[0] == -1  # the reset's
    assert core.session.command == (0.0, 0.0) and core.pending_commands == []


def test_overtaken_commands_are_discarded_and_never_act():
    """A network delay of 0-80 ms on a 20 ms period: commands overtake each other. Every
    command that arrives after a newer one is discarded, so the sample in force only moves
    forward."""
    net = NetworkModel(jitter=LatencyModel.uniform(0.0, 0.08, seed=2), seed=4)
    env = gym.make("VDSim-DLC-v0", network=net, preset="lane_change_3p5_30",
                   terminate_on_cone=False)
    from vdsim_gym.controllers import stanley_pi

    policy = stanley_pi(env)
    obs, _ = env.reset(seed=1)
    core = env.unwrapped.core
    in_force = []
    info = {}
    for _ in range(150):
        obs, _, term, trunc, info = env.step(policy.predict(obs)[0])
        assert not (term or trunc)
        in_force.append(core.command_in_force()[0])
        pending = [p[0] for p in core.pending_commands]
        assert pending == sorted(pending)  # by apply tick and by sample: no older behind
    assert info["n_discarded"] > 10
    assert all(b >= a for a, b in zip(in_force, in_force[1:], strict=False))


def test_vector_env_equals_sync_with_a_network():
    kw = {"network": NetworkModel(drop=0.2, burst=(0.05, 0.3),
                                  jitter=LatencyModel.uniform(0.0, 0.03, seed=1), seed=7),
          "latency": LatencyModel.fixed(0.01), "preset": "iso3888_1"}
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=3, **kw)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-DLC-v0", **kw)] * 3)
    np.testing.assert_array_equal(venv.reset(seed=2)[0], sync.reset(seed=2)[0])
    rng = np.random.default_rng(0)
    for _ in range(40):
        a = rng.uniform(-0.3, 0.3, (3, 2)).astype(np.float32)
        r1, r2 = venv.step(a), sync.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        for key in ("lost", "n_lost", "n_discarded", "apply_tick"):
            np.testing.assert_array_equal(r1[4][key], r2[4][key])


@pytest.mark.parametrize("kw, match", [
    ({"drop": 1.5}, r"probability in \[0, 1\]"),
    ({"burst": (0.1,)}, "two probabilities"),
    ({"burst": (0.1, 0.0)}, "never leaves the bad state"),
    ({"jitter": 0.02}, "LatencyModel"),
    ({"jitter": LatencyModel.measured()}, r"jitter=LatencyModel.measured\(\): this delay is drawn"),
])
def test_bad_networks_name_the_fix(kw, match):
    with pytest.raises(ConfigError, match=match):
        NetworkModel(**kw)
    with pytest.raises(ConfigError, match="NetworkModel"):
        gym.make("VDSim-DLC-v0", network={"drop": 0.1})


def test_closed_loop_eval_on_a_network_env_counts_losses_and_discards():
    """ClosedLoopEval(env=...) in mode B on an env with a network: lost commands have no
    apply time and never apply, overtaken ones are marked discarded, and the stats count
    both as the env's core did."""
    from vdsim_gym.controllers import stanley_pi
    from vdsim_gym.eval import ClosedLoopEval

    net = NetworkModel(drop=0.2, jitter=LatencyModel.uniform(0.0, 0.06, seed=1), seed=3)
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", terminate_on_cone=False,
                   network=net)
    res = ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async",
                         latency=LatencyModel.fixed(0.01), duration=3.0, seed=2).run()
    s, st = res.samples, res.stats
    core = env.unwrapped.core
    assert st["n_lost"] == core.n_lost > 0 and st["n_discarded"] == core.n_discarded > 0
    t_apply, applied = np.asarray(s["t_apply"]), np.asarray(s["applied"])
    lost = np.isnan(t_apply)
    assert lost.sum() == st["n_lost"] and not applied[lost].any()
    assert st["n_unapplied"] >= st["n_lost"] + st["n_discarded"]


def test_sweep_cli_loss_axis(tmp_path, capsys):
    """vdsim-gym sweep --loss 0,10,30%: one scenario column per loss (0 without a network),
    the loss raising the error; a bad value is one line naming the form."""
    import csv

    from vdsim_gym.cli import main as cli_main

    assert cli_main(["sweep", "--delays", "20ms", "--loss", "0,10,30%", "--seeds", "3",
                     "--num-envs", "9", "--out", str(tmp_path), "--no-plot",
                     "--no-progress"]) == 0
    with open(tmp_path / "sweep_summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["scenario"] for r in rows] == [
        "default", "network=network(drop 0.1)", "network=network(drop 0.3)"]
    rmse = [float(r["rms_e_y_mean"]) for r in rows]
    assert rmse[0] < rmse[2]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["sweep", "--loss", "0,1.5", "--seeds", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--loss: loss '1.5' is not a probability" in err[0]


def test_randomized_loss_is_the_env_with_that_network_bit_for_bit():
    """randomize={'loss': [lo, hi]}: each reset draws the network's drop (reported in
    info), and the episode equals the env built with NetworkModel(drop=that) (the burst
    chain and delay of the env's own network stay)."""
    base = NetworkModel(burst=(0.05, 0.4), jitter=LatencyModel.uniform(0.0, 0.02, seed=1),
                        seed=6)
    kw = {"preset": "lane_change_3p5_30", "terminate_on_cone": False}
    env = gym.make("VDSim-DLC-v0", network=base, randomize={"loss": [0.0, 0.4]}, **kw)
    for seed in (1, 2):
        obs, info = env.reset(seed=seed)
        p = info["randomization"]["loss"]
        assert 0.0 <= p <= 0.4 and env.unwrapped.episode_params.network.drop == p
        fixed = gym.make("VDSim-DLC-v0", network=NetworkModel(
            drop=p, burst=base.burst, jitter=base.jitter, seed=base.seed), **kw)
        obs2, _ = fixed.reset(seed=seed)
        np.testing.assert_array_equal(obs, obs2)
        rng = np.random.default_rng(seed)
        for _ in range(40):
            a = rng.uniform(-0.2, 0.2, 2).astype(np.float32)
            r1, r2 = env.step(a), fixed.step(a)
            np.testing.assert_array_equal(r1[0], r2[0])
            assert r1[4]["n_lost"] == r2[4]["n_lost"]
    with pytest.raises(ConfigError, match=r"probability in \[0, 1\]"):
        gym.make("VDSim-DLC-v0", randomize={"loss": [0.0, 1.5]})
    venv = gym.make_vec("VDSim-ACC-v0", num_envs=2, randomize={"loss": [0.1, 0.3]})
    sync = gym.vector.SyncVectorEnv(
        [lambda: gym.make("VDSim-ACC-v0", randomize={"loss": [0.1, 0.3]})] * 2)
    np.testing.assert_array_equal(venv.reset(seed=4)[0], sync.reset(seed=4)[0])
    for _ in range(20):
        a = np.full((2, 1), 0.1, np.float32)
        r1, r2 = venv.step(a), sync.step(a)
        np.testing.assert_array_equal(r1[0], r2[0])
        np.testing.assert_array_equal(r1[4]["n_lost"], r2[4]["n_lost"])
