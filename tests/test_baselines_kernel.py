"""The C++ baseline kernels (vdsim/baselines.hpp) against slow Python references, bit for bit.

Each reference below is the controller's law written plainly, row by row: Stanley with the
C library's sin/atan/atan2 (math.*, the functions the kernel calls: numpy's SIMD versions
differ from them in the last bits on AVX-512 CPUs, so a numpy reference could not be exact
on every machine), PI speed and the cycle follower as numpy arithmetic (exact: no
transcendental functions), the PID ACC and IDM as the scalar ACCController and IDM of the
package, one per row (CarFollowingPolicy with the rows' factory). Random observations cover
every mode, episode starts, batch-size changes, NaN rows and odd array layouts.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym.controllers import ObsLayout, PISpeed, Stanley, stanley_pi
from vdsim_gym.controllers.acc import ACCGains
from vdsim_gym.controllers.acc_policy import CarFollowingPolicy, acc_pid, idm_follower
from vdsim_gym.controllers.dyno_policy import cycle_follower
from vdsim_gym.errors import ConfigError


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def assert_same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(bits(a), bits(b))


# ------------------------------------------------------------------ references

def stanley_reference(c: Stanley, obs: np.ndarray) -> np.ndarray:
    """Steer [rad] row by row with math.sin/atan/atan2."""
    lay = c.layout
    out = []
    for row in np.asarray(obs, dtype=float):
        def col(name: str, row: np.ndarray = row) -> float:
            i = lay.names.index(name)
            return float(row[i] * lay.scale[i])
        e_y, e_psi, vx, kappa, r = (col(n) for n in ("e_y", "e_psi", "vx", "kappa_ref", "r"))
        e_front = e_y + c.cg_to_front * math.sin(e_psi)
        feed_forward = math.atan(c.wheelbase * kappa) + c.accel_gain * vx * vx * kappa
        cross = math.atan2(c.gain * e_front, abs(vx) + c.soft_speed)
        damping = c.yaw_damping * (r - vx * kappa)
        out.append(feed_forward - e_psi - cross - damping)
    return np.array(out)


def stanley_action_reference(c: Stanley, obs: np.ndarray) -> np.ndarray:
    return np.clip(stanley_reference(c, obs) / c.max_steer, -1.0, 1.0).astype(np.float32)[:, None]


class PIReference:
    """PISpeed as numpy arithmetic, one integrator per row."""

    def __init__(self, layout: ObsLayout, dt: float, kp: float, ki: float) -> None:
        self.layout, self.dt, self.kp, self.ki = layout, dt, kp, ki
        self.integral = np.zeros(0)

    def predict(self, obs: np.ndarray, episode_start: np.ndarray | None) -> np.ndarray:
        n = obs.shape[0]
        if self.integral.shape != (n,):
            self.integral = np.zeros(n)
        if episode_start is not None:
            self.integral[np.asarray(episode_start, bool)] = 0.0
        err = self.layout.column(obs, "v_ref") - self.layout.column(obs, "vx")
        trial = self.integral + err * self.dt
        raw = self.kp * err + self.ki * trial
        self.integral = np.where(np.abs(raw) < 1.0, trial, self.integral)
        u = np.clip(self.kp * err + self.ki * self.integral, -1.0, 1.0)
        return u.astype(np.float32)[:, None]


def cycle_reference(pol, obs: np.ndarray) -> np.ndarray:
    """The cycle follower with np.interp per row."""
    n = len(pol.preview)
    cols = obs[:, :n] * pol.scale[:n]

    def at(t: float) -> np.ndarray:
        return np.array([np.interp(t, pol.preview, row) for row in cols])

    if pol.mode == "speed":
        a = 2.0 * at(pol.lookahead) / pol.v_max - 1.0
    else:
        i = pol.names.index("speed")
        a_ref = (at(pol.horizon) - obs[:, i] * pol.scale[i]) / pol.horizon
        a = np.where(a_ref >= 0, a_ref / pol.a_max, a_ref / pol.d_max)
    return np.clip(a, -1.0, 1.0).astype(np.float32)[:, None]


# ------------------------------------------------------------------ path baselines

NAMES = ("e_y", "e_psi", "vx", "vy", "r", "v_ref", "kappa_ref")
SCALE = np.array([2.0, 0.5, 30.0, 5.0, 1.0, 30.0, 0.1])
LAYOUT = ObsLayout(NAMES, SCALE)


def random_path_obs(rng: np.random.Generator, n: int) -> np.ndarray:
    obs = rng.normal(size=(n, len(NAMES))) * rng.choice([0.01, 1.0, 30.0], size=(n, 1))
    obs[::17, 2] = 0.0  # standstill
    obs[5::23, 6] = 0.0  # straight path
    return obs


@pytest.mark.parametrize("kw", [{}, {"gain": 2.5, "soft_speed": 0.3, "yaw_damping": 0.07,
                                     "accel_gain": 0.004}])
def test_stanley_kernel_equals_the_math_reference_bit_for_bit(kw):
    c = Stanley(LAYOUT, wheelbase=2.7, cg_to_front=1.2, max_steer=0.6, **kw)
    obs = random_path_obs(np.random.default_rng(1), 3000)
    assert_same_bits(c.steer(obs), stanley_reference(c, obs))
    for dtype in (np.float64, np.float32):
        o = obs.astype(dtype)
        actions, state = c.predict(o)
        assert state is None
        assert_same_bits(actions, stanley_action_reference(c, o))
        singles = np.stack([c.predict(row)[0] for row in o[:200]])
        assert_same_bits(singles, actions[:200])
    # Against numpy's own functions (the controller before its kernel): within the last
    # bits numpy's SIMD sin/atan/atan2 may differ by on some CPUs.
    e_front = obs[:, 0] * 2.0 + c.cg_to_front * np.sin(obs[:, 1] * 0.5)
    vx, kappa, r = obs[:, 2] * 30.0, obs[:, 6] * 0.1, obs[:, 4]
    numpy_steer = (np.arctan(c.wheelbase * kappa) + c.accel_gain * vx * vx * kappa
                   - obs[:, 1] * 0.5 - np.arctan2(c.gain * e_front, np.abs(vx) + c.soft_speed)
                   - c.yaw_damping * (r - vx * kappa))
    np.testing.assert_allclose(c.steer(obs), numpy_steer, rtol=1e-12, atol=1e-15)


def test_stanley_parameters_set_after_the_first_call_take_effect():
    c = Stanley(LAYOUT, wheelbase=2.7, cg_to_front=1.2, max_steer=0.6)
    obs = random_path_obs(np.random.default_rng(2), 50)
    before = c.predict(obs)[0]
    c.gain, c.yaw_damping, c.max_steer = 3.0, 0.1, 0.5
    assert c.gain == 3.0 and c.kernel.gain == 3.0
    after = c.predict(obs)[0]
    assert not np.array_equal(before, after)
    assert_same_bits(after, stanley_action_reference(c, obs))


def test_pi_kernel_equals_the_reference_over_episodes_and_batch_changes():
    rng = np.random.default_rng(3)
    pi, ref = PISpeed(LAYOUT, dt=0.02, kp=0.4, ki=0.3), PIReference(LAYOUT, 0.02, 0.4, 0.3)
    for k in range(400):
        n = 8 if k < 250 else 5  # a batch-size change starts every row afresh
        obs = random_path_obs(rng, n) * 0.05
        start = rng.random(n) < 0.1 if k % 3 else None
        a, _ = pi.predict(obs.astype(np.float32), episode_start=start)
        assert_same_bits(a, ref.predict(obs.astype(np.float32), start))
        assert_same_bits(pi._integral, ref.integral)
    assert np.any(pi._integral != 0.0)
    pi.reset()
    assert pi._integral.shape == (0,)


def test_composite_kernel_equals_its_parts():
    rng = np.random.default_rng(4)
    make = lambda: (Stanley(LAYOUT, wheelbase=2.7, cg_to_front=1.2, max_steer=0.6),  # noqa: E731
                    PISpeed(LAYOUT, dt=0.02))
    from vdsim_gym.controllers import LateralLongitudinal
    comp = LateralLongitudinal(*make())
    lat, lon = make()
    for _ in range(100):
        obs = random_path_obs(rng, 6) * 0.05
        start = rng.random(6) < 0.2
        a, _ = comp.predict(obs, episode_start=start)
        expected = np.concatenate([lat.predict(obs)[0], lon.predict(obs, episode_start=start)[0]],
                                  axis=1)
        assert_same_bits(a, expected)
    assert_same_bits(comp.longitudinal._integral, lon._integral)


class NoKernel:
    """A duck-typed longitudinal part: the composite falls back to the parts' predict."""

    def __init__(self) -> None:
        self.layout = LAYOUT

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        return np.full((len(obs), 1), 0.25, np.float32), state

    def reset(self) -> None:
        pass


def test_composite_without_a_kernel_part_runs_the_parts():
    from vdsim_gym.controllers import LateralLongitudinal
    lat = Stanley(LAYOUT, wheelbase=2.7, cg_to_front=1.2, max_steer=0.6)
    comp = LateralLongitudinal(lat, NoKernel())  # type: ignore[arg-type]
    obs = random_path_obs(np.random.default_rng(5), 4)
    a, _ = comp.predict(obs)
    assert a.shape == (4, 2) and np.all(a[:, 1] == 0.25)
    assert_same_bits(a[:, :1], lat.predict(obs)[0])
    assert comp.predict(obs[0])[0].shape == (2,)


# ------------------------------------------------------------------ input forms

def test_inputs_that_need_converting_give_the_same_actions():
    env = gym.make("VDSim-DLC-v0")
    obs, _ = env.reset(seed=0)
    pol, ref = stanley_pi(env), stanley_pi(env)
    batch = np.stack([obs, obs * 0.5, obs * 1.5]).astype(np.float32)
    expected, _ = ref.predict(batch, episode_start=np.array([True, False, True]))
    wide = np.zeros((3, 2 * batch.shape[1]), np.float32)
    wide[:, ::2] = batch  # strided rows and columns
    got, _ = pol.predict(wide[:, ::2], episode_start=[True, False, True])  # a list
    assert_same_bits(got, expected)
    pol.reset(), ref.reset()
    fortran = np.asfortranarray(batch)
    assert_same_bits(pol.predict(fortran, episode_start=True)[0],
                     ref.predict(batch, episode_start=np.array([True]))[0])
    assert_same_bits(pol.predict(batch.astype(np.float16))[0],
                     ref.predict(batch.astype(np.float16).astype(np.float64))[0])
    assert_same_bits(pol.predict(obs.tolist())[0], ref.predict(obs)[0])
    with pytest.raises(ConfigError, match=r"shape \(\d+,\) or \(N, \d+\)"):
        pol.predict(np.zeros(3))
    with pytest.raises(ConfigError, match="episode_start must have 3 entries"):
        pol.predict(batch, episode_start=np.array([True, False]))


# ------------------------------------------------------------------ car following

def acc_observations(rng: np.random.Generator, env, n: int) -> np.ndarray:
    """Random ACC observations spanning cruise, follow and emergency."""
    base = env.unwrapped
    names, scale = list(base.obs_names), np.asarray(base.obs_scale, float)
    phys = np.zeros((n, len(names)))
    phys[:] = rng.normal(size=phys.shape)
    col = {name: names.index(name) for name in names}
    phys[:, col["ego_speed"]] = rng.uniform(0.0, 35.0, n)
    phys[:, col["set_speed"]] = rng.choice([20.0, 25.0, 30.0], n)
    phys[:, col["lead_present"]] = rng.random(n) < 0.8
    phys[:, col["gap"]] = rng.uniform(2.0, 90.0, n)
    phys[:, col["rel_speed"]] = rng.uniform(-15.0, 6.0, n)
    return (phys / scale).astype(np.float32)


@pytest.mark.parametrize("make", [
    lambda e: acc_pid(e),
    lambda e: acc_pid(e, emergency_hysteresis=0.0),
    lambda e: acc_pid(e, gains=ACCGains(pid_speed={"kp": 0.7, "ki": 0.4, "kd": 0.2,
                                                   "integral_limit": 0.5},
                                        pid_distance={"kp": 0.3, "ki": 0.2, "kd": 0.3})),
    lambda e: idm_follower(e),
    lambda e: idm_follower(e, v0=25.0, delta=3.0),
], ids=["acc_pid", "acc_pid_no_hysteresis", "acc_pid_gains", "idm", "idm_fixed_v0"])
def test_car_following_kernels_equal_the_scalar_controllers(make):
    env = gym.make("VDSim-ACC-v0")
    env.reset(seed=0)
    fast = make(env)
    ref = CarFollowingPolicy(env, fast._make)  # the scalar controllers, one per row
    rng = np.random.default_rng(6)
    # A smooth random walk per row, so that the PIDs' states and modes persist.
    obs = acc_observations(rng, env, 12)
    seen = set()
    for k in range(600):
        obs = obs + (acc_observations(rng, env, len(obs)) - obs) * 0.05
        if k == 400:
            obs = obs[:7]  # a batch-size change
        start = rng.random(len(obs)) < 0.02
        a, _ = fast.predict(obs, episode_start=start)
        b, _ = ref.predict(obs, episode_start=start)
        assert_same_bits(a, b)
        assert fast.modes == ref.modes
        seen.update(fast.modes)
    assert seen == ({None} if "idm" in str(fast._make) else {"cruise", "follow", "emergency"})
    fast.reset(), ref.reset()
    for row in obs:  # single observations: one row, kept between calls
        assert_same_bits(fast.predict(row)[0], ref.predict(row)[0])
        assert fast.modes == ref.modes


def test_acc_kernel_refuses_a_nan_speed_and_keeps_nothing_of_the_call():
    env = gym.make("VDSim-ACC-v0")
    env.reset(seed=0)
    fast = acc_pid(env)
    ref = CarFollowingPolicy(env, fast._make)
    rng = np.random.default_rng(7)
    obs = acc_observations(rng, env, 4)
    for _ in range(20):
        assert_same_bits(fast.predict(obs)[0], ref.predict(obs)[0])
    bad = obs.copy()
    bad[2, list(env.unwrapped.obs_names).index("ego_speed")] = np.nan
    with pytest.raises(ConfigError, match="PID error must be finite, got nan"):
        fast.predict(bad)
    # Nothing of the refused call stayed: the next call matches a reference that never
    # saw it.
    for _ in range(5):
        assert_same_bits(fast.predict(obs)[0], ref.predict(obs)[0])


def test_idm_tracks_the_set_speed_per_row_across_episodes():
    env = gym.make("VDSim-ACC-v0")
    env.reset(seed=0)
    fast = idm_follower(env)
    ref = CarFollowingPolicy(env, fast._make)
    rng = np.random.default_rng(8)
    i = list(env.unwrapped.obs_names).index("set_speed")
    obs = acc_observations(rng, env, 3)
    for k in range(30):
        o = obs.copy()
        o[:, i] = 0.0 if k % 7 == 3 else o[:, i]  # a zero set speed keeps the last one
        assert_same_bits(fast.predict(o, episode_start=np.array([k == 5] * 3))[0],
                         ref.predict(o, episode_start=np.array([k == 5] * 3))[0])


# ------------------------------------------------------------------ dyno

@pytest.mark.parametrize("driver,kw", [("speed", {}), ("speed", {"lookahead_s": 0.7}),
                                       ("speed", {"lookahead_s": 2.0}),
                                       ("accel", {"horizon_s": 1.0}),
                                       ("accel", {"horizon_s": 2.5}),
                                       ("accel", {"horizon_s": 5.0})])
def test_cycle_follower_kernel_equals_np_interp(driver, kw):
    env = gym.make("VDSim-Dyno-v0", driver=driver)
    env.reset(seed=0)
    pol = cycle_follower(env, **kw)
    rng = np.random.default_rng(9)
    obs = rng.uniform(-0.2, 1.2, size=(2000, env.observation_space.shape[0]))
    obs[::9, 1] = obs[::9, 0]  # flat preview segments
    assert_same_bits(pol.predict(obs)[0], cycle_reference(pol, obs))
    o32 = obs.astype(np.float32)
    assert_same_bits(pol.predict(o32)[0], cycle_reference(pol, o32))
    assert_same_bits(pol.predict(o32[3])[0], cycle_reference(pol, o32[3:4])[0])


# ------------------------------------------------------------------ copies

@pytest.mark.parametrize("env_id,make,picklable", [
    ("VDSim-DLC-v0", stanley_pi, True),
    ("VDSim-ACC-v0", acc_pid, False),  # its rows' factory is a local function
    ("VDSim-ACC-v0", idm_follower, False),
    ("VDSim-Dyno-v0", cycle_follower, True),
])
def test_copies_carry_the_rows_state_and_step_on_their_own(env_id, make, picklable):
    import copy
    import pickle

    env = gym.make(env_id)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(10)
    n = env.observation_space.shape[0]

    def batch() -> np.ndarray:
        b = np.repeat(obs[None], 5, axis=0) * rng.uniform(0.8, 1.2, (5, n)).astype(np.float32)
        return b.astype(np.float32)

    policy = make(env)
    for _ in range(30):  # state in every row (integrals, modes, set speeds)
        policy.predict(batch())
    copies = [copy.deepcopy(policy)]
    if make is not stanley_pi:  # a shallow copy of the composite shares its two parts
        copies.append(copy.copy(policy))
    if picklable:
        copies.append(pickle.loads(pickle.dumps(policy)))
    for _ in range(20):
        b = batch()
        want, _ = policy.predict(b)
        for c in copies:
            assert_same_bits(c.predict(b)[0], want)
    # A copy's state is its own: stepping the original alone leaves the copies behind.
    fresh = copy.deepcopy(policy)
    b = batch()
    for _ in range(5):
        policy.predict(b)
    c = copy.deepcopy(fresh)
    assert_same_bits(c.predict(b)[0], fresh.predict(b)[0])
