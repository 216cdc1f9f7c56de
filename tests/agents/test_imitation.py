"""``train --imitate`` (docs/TRAINING.md, "Imitation, then fine-tuning"): the anchored PPO
is SB3's PPO bit for bit without its term and stays nearer the anchor with it, the critic
warm-up leaves the actor alone, DAgger's rounds follow the schedule and fit the expert,
and the options' errors."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import yaml

pytest.importorskip("stable_baselines3")
import torch as th  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402

from vdsim_gym import make_sb3_vec_env  # noqa: E402
from vdsim_gym.errors import TrainingError  # noqa: E402
from vdsim_gym.policies import load_policy  # noqa: E402
from vdsim_gym.training import train  # noqa: E402
from vdsim_gym.training.anchored_ppo import AnchoredPPO  # noqa: E402

KW = {"n_steps": 64, "batch_size": 32, "n_epochs": 2, "seed": 0,
      "policy_kwargs": {"net_arch": [16, 16]}}


def _model(cls):
    venv = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=0)
    return cls("MlpPolicy", venv, **KW)


def _params(model):
    return {k: v.detach().clone() for k, v in model.policy.state_dict().items()}


def test_anchored_ppo_without_its_term_is_sb3_ppo_bit_for_bit():
    a = _model(PPO)  # each built and trained in turn: they share torch's generator
    a.learn(256)
    b = _model(AnchoredPPO)
    b.anchor_to(b.policy, 0.0)
    b.learn(256)
    pa, pb = _params(a), _params(b)
    assert pa.keys() == pb.keys()
    for k in pa:
        assert th.equal(pa[k], pb[k]), k


def _kl_to(model, anchor, obs):
    with th.no_grad():
        x = th.as_tensor(obs)
        pi = model.policy.get_distribution(x).distribution
        ref = anchor.get_distribution(x).distribution
        return float(th.distributions.kl_divergence(pi, ref).sum(-1).mean())


def test_the_kl_term_keeps_the_policy_nearer_its_anchor():
    free = _model(AnchoredPPO)
    free.anchor_to(free.policy, 0.0)
    anchor = free.anchor
    free.learn(512)
    held = _model(AnchoredPPO)  # the same seed: the same start as free's
    held.anchor_to(held.policy, 50.0)
    held.learn(512)
    obs = np.random.default_rng(0).normal(size=(256, free.observation_space.shape[0]))
    obs = obs.astype(np.float32)
    k_free, k_held = _kl_to(free, anchor, obs), _kl_to(held, anchor, obs)
    assert k_held < 0.5 * k_free, (k_held, k_free)


def test_the_critic_warmup_trains_the_value_net_only():
    model = _model(AnchoredPPO)
    model.anchor_to(model.policy, 1.0, critic_warmup=1)
    before = _params(model)
    model.learn(128)  # one rollout of 2 x 64 steps: one update, the warm-up's
    after = _params(model)
    moved = {k for k in before if not th.equal(before[k], after[k])}
    assert moved and all(k.startswith("value_net") or "value_net" in k for k in moved), moved
    assert model.critic_warmup == 0


def test_dagger_fits_the_expert_and_the_run_loads(tmp_path):
    res = train("ppo", "VDSim-DLC-v0", timesteps=512, seed=0, out=tmp_path, run_name="im",
                hyperparams={"n_envs": 4, "n_steps": 128, "batch_size": 128, "n_epochs": 1},
                eval_freq=10_000, progress_bar=False, tensorboard=False,
                imitate="stanley", imitate_rounds=3, imitate_steps=1024, kl_coef=1.0)
    log = json.loads((res.run_dir / "imitation.json").read_text())
    rounds = log["rounds"]
    assert [r["beta"] for r in rounds] == [1.0, 0.5, 0.0]
    assert [r["samples"] for r in rounds] == [1024, 2048, 3072]
    # round 0's learner is the untrained net; the later ones act nearer the expert
    assert rounds[-1]["learner_gap"] < rounds[0]["learner_gap"]
    assert all(r["fit_mse"] < 1e-3 for r in rounds)
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert cfg["imitate"]["expert"] == "stanley" and cfg["imitate"]["kl_coef"] == 1.0
    assert np.allclose(np.exp(res.model.policy.log_std.detach().numpy()), 0.1)
    # the statistics the imitation was fitted with stay for the fine-tuning
    assert res.model.get_vec_normalize_env().training is False
    # the loaded policy drives the DLC like the expert it imitated
    from vdsim_gym.policies.loading import base_controller

    env = gym.make("VDSim-DLC-v0")
    expert = base_controller(env, "stanley")
    policy = load_policy(res.run_dir)
    obs, _ = env.reset(seed=1)
    gaps = []
    for _ in range(50):
        a, _ = policy.predict(obs)
        e, _ = expert.predict(obs)
        gaps.append(np.abs(a - e).max())
        obs, *_ = env.step(a)
    assert np.median(gaps) < 0.05
    env.close()


@pytest.mark.parametrize("kwargs,match", [
    ({"algo": "sac"}, "use --algo ppo"),
    ({"residual": "stanley"}, "give one"),
    ({"imitate": "nonsense"}, "--imitate 'nonsense'"),
    ({"imitate": "acc_pid"}, "cannot drive"),
    ({"imitate_rounds": 0}, "--imitate-rounds must be a whole number"),
    ({"kl_coef": -1.0}, "--kl-coef must be a finite number"),
])
def test_bad_imitation_options_fail_before_the_run_folder(kwargs, match, tmp_path):
    kw = {"algo": "ppo", "imitate": "stanley", **kwargs}
    with pytest.raises(TrainingError, match=match):
        train(kw.pop("algo"), "VDSim-DLC-v0", timesteps=128, out=tmp_path, run_name="bad",
              progress_bar=False, tensorboard=False, **kw)
    assert not (tmp_path / "bad").exists()


def test_the_imitation_options_need_imitate_on_the_command_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "train", "--kl-coef", "0.2"],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 2
    assert "--kl-coef sets the imitation: give --imitate CONTROLLER" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_run_trains_again_from_its_folder_bit_for_bit(tmp_path):
    """``rerun`` (``train --from-run``): the options config.yml recorded, the same seed,
    the same weights; a changed hyperparameter file and a folder without the record are
    refused."""
    from vdsim_gym.training.run_folder import rerun

    hyper = tmp_path / "ppo.yml"
    hyper.write_text("VDSim-DLC-v0:\n  n_envs: 2\n  n_steps: 64\n  batch_size: 64\n"
                     "  n_epochs: 1\n  normalize: true\n  policy: MlpPolicy\n")
    first = train("ppo", "VDSim-DLC-v0", timesteps=256, seed=4, out=tmp_path, run_name="a",
                  hyperparams_file=hyper, eval_freq=128, eval_episodes=1,
                  progress_bar=False, tensorboard=False, imitate="stanley",
                  imitate_rounds=2, imitate_steps=128,
                  randomize={"latency": {"mean": [0.0, 0.04]}})
    again = rerun(first.run_dir, progress_bar=False)
    assert again.run_dir == tmp_path / "a_rerun"
    pa, pb = first.model.policy.state_dict(), again.model.policy.state_dict()
    assert all(th.equal(pa[k], pb[k]) for k in pa)
    a = yaml.safe_load((first.run_dir / "config.yml").read_text())
    b = yaml.safe_load((again.run_dir / "config.yml").read_text())
    assert a["train_call"] == b["train_call"] and a["randomize"] == b["randomize"]
    hyper.write_text(hyper.read_text().replace("n_steps: 64", "n_steps: 32"))
    with pytest.raises(TrainingError, match="block has changed since the run .*n_steps"):
        rerun(first.run_dir, run_name="b", progress_bar=False)
    del a["train_call"]
    (first.run_dir / "config.yml").write_text(yaml.safe_dump(a))
    with pytest.raises(TrainingError, match="records no train_call.*its recorded command"):
        rerun(first.run_dir, run_name="c", progress_bar=False)


def test_from_run_takes_no_other_training_option(tmp_path):
    out = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "train", "--from-run", "x",
                          "--seed", "3"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 2 and "drop --seed" in out.stderr
    assert "Traceback" not in out.stderr
