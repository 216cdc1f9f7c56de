"""TorchRL on the envs (pytest -m torchrl; needs the torchrl extra): GymEnv on every env
as it comes (TorchRL retries without frameskip on Python's own wording of an unknown
keyword), and its own batching, SerialEnv and ParallelEnv, for several envs
(docs/TRAINING.md, "TorchRL")."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.torchrl, pytest.mark.filterwarnings("ignore")]

ENV_IDS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_gym_env_rolls_out_and_its_specs_check(env_id):
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv
    from torchrl.envs.utils import check_env_specs

    import vdsim_gym  # noqa: F401  (registration)

    env = GymEnv(env_id)
    check_env_specs(env)
    td = env.rollout(8)
    assert td.batch_size[0] == 8
    assert td["next", "observation"].shape[-1] == env.observation_spec["observation"].shape[-1]
    env.close()


def test_serial_env_batches_the_envs():
    pytest.importorskip("torchrl")
    from torchrl.envs import GymEnv, SerialEnv

    import vdsim_gym  # noqa: F401

    env = SerialEnv(2, lambda: GymEnv("VDSim-DLC-v0"))
    td = env.rollout(5)
    assert tuple(td.batch_size) == (2, 5)
    env.close()


PARALLEL = """
import warnings
warnings.filterwarnings("ignore")
from torchrl.envs import GymEnv, ParallelEnv
import vdsim_gym


def make():
    return GymEnv("VDSim-ACC-v0")


if __name__ == "__main__":
    env = ParallelEnv(2, make)
    td = env.rollout(5)
    env.close()
    print(tuple(td.batch_size))
"""


def test_parallel_env_in_worker_processes(tmp_path):
    """ParallelEnv as a user script runs it (its workers are processes: a script with a
    main guard, outside pytest's warning filters)."""
    import subprocess
    import sys

    pytest.importorskip("torchrl")
    script = tmp_path / "parallel.py"
    script.write_text(PARALLEL)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "(2, 5)"
