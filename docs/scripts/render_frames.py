"""The env frames shown in docs/ENVS.md (docs/img/render_*.png): each env driven by its
baseline from reset(seed=0), one frame taken mid-episode.

    python docs/scripts/render_frames.py [--out docs/img]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gymnasium as gym
from PIL import Image

import vdsim_gym
from vdsim_gym.controllers import acc_pid, cycle_follower, stanley_pi

CASES = {
    # 20 ms of computation on a 20 ms period, queued: when an observation is taken the
    # command computed from the one before is still pending (it applies at this instant)
    "render_dlc.png": ("VDSim-DLC-v0", dict(latency=vdsim_gym.LatencyModel.fixed(0.02),
                                            overrun="queue"), stanley_pi, 150),
    "render_pathfollow.png": ("VDSim-PathFollow-v0", {}, stanley_pi, 300),
    "render_acc.png": ("VDSim-ACC-v0", dict(scenario="cut_in"), acc_pid, 600),
    "render_dyno.png": ("VDSim-Dyno-v0", dict(driver={"mode": "speed", "delay_s": 0.3}),
                        cycle_follower, 150),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img")
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (env_id, kwargs, baseline, steps) in CASES.items():
        env = gym.make(env_id, render_mode="rgb_array", **kwargs)
        policy = baseline(env)
        obs, _ = env.reset(seed=0)
        for _ in range(steps):
            obs, _, term, trunc, _ = env.step(policy.predict(obs)[0])
            if term or trunc:
                break
        Image.fromarray(env.render()).save(out / name, optimize=True)
        print(f"wrote {out / name} ({env_id}, t = {env.unwrapped._core.time:.2f} s)")
        env.close()


if __name__ == "__main__":
    main()
