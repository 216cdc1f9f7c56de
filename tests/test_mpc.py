"""The MPC baseline: the condensed QP against hand-solved cases, its constraints, the exact
discretization, the single-track model's steady state, the tracker in closed loop, and the
controller against its earlier form (the QP rebuilt and solved by OSQP on every call, kept
below as ``ReferenceSteer``) on recorded closed-loop observations."""

from __future__ import annotations

import copy
import math
import pickle

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registers the envs)
from vdsim_gym import LatencyModel
from vdsim_gym.analysis.handling import understeer_gradient
from vdsim_gym.config.latency import MAX_DELAY_S
from vdsim_gym.controllers import MPCSteer, PISpeed, mpc_pi, stanley_dc_pi
from vdsim_gym.controllers import mpc as mpc_module
from vdsim_gym.controllers.condensed_qp import CondensedMPC
from vdsim_gym.controllers.discretization import discretize
from vdsim_gym.controllers.reference_spline import reference_line
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies import load_controller

pytest.importorskip("osqp")

INTEGRATOR = dict(a=[[1.0]], b=[[1.0]], w=[0.0])  # z+ = z + u


def solve(n_steps, z0, ref, *, r=0.0, s=0.0, u_prev=0.0, u_min=-1e3, u_max=1e3, du=1e3):
    mpc = CondensedMPC(n_steps)
    return mpc.solve(z0=[z0], ref=np.full((n_steps, 1), ref), q=[[1.0]], r=[[r]], s=[[s]],
                     u_prev=[u_prev], u_min=u_min, u_max=u_max, du_max=du,
                     **INTEGRATOR).u[:, 0]


@pytest.mark.parametrize("z0, ref, r", [(0.0, 1.0, 0.0), (0.3, -0.5, 0.5), (2.0, 2.0, 3.0)])
def test_one_step_is_the_hand_solved_minimum(z0, ref, r):
    # min (z0 + u - ref)^2 + r u^2: u = (ref - z0) / (1 + r).
    assert solve(1, z0, ref, r=r)[0] == pytest.approx((ref - z0) / (1.0 + r), abs=1e-6)


@pytest.mark.parametrize("z0, ref, s, up", [(0.0, 1.0, 0.5, 0.0), (1.0, -1.0, 2.0, 0.4)])
def test_two_steps_with_a_rate_weight_are_hand_solved(z0, ref, s, up):
    # cost (z1 - ref)^2 + (z2 - ref)^2 + s (u0 - up)^2 + s (u1 - u0)^2, z1 = z0 + u0,
    # z2 = z1 + u1; setting both derivatives to zero:
    #   (2 + 2 s) u0 + (1 - s) u1 = 2 (ref - z0) + s up
    #   (1 - s) u0 + (1 + s) u1 = ref - z0
    a11, a12, b1 = 2 + 2 * s, 1 - s, 2 * (ref - z0) + s * up
    a21, a22, b2 = 1 - s, 1 + s, ref - z0
    det = a11 * a22 - a12 * a21
    u0, u1 = (b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det
    assert solve(2, z0, ref, s=s, u_prev=up) == pytest.approx([u0, u1], abs=1e-6)


def test_bounds_and_rate_limits_hold_at_the_optimum():
    # One step: the constrained optimum of a convex scalar cost is the clipped one.
    assert solve(1, 0.0, 1.0, u_max=0.4)[0] == pytest.approx(0.4, abs=1e-6)
    assert solve(1, 0.0, -1.0, u_min=-0.25)[0] == pytest.approx(-0.25, abs=1e-6)
    assert solve(1, 0.0, 1.0, u_prev=0.1, du=0.2)[0] == pytest.approx(0.3, abs=1e-6)
    # Many steps: every input and change within its bound, the bound reached.
    u = solve(20, 0.0, 5.0, u_prev=0.0, u_max=0.5, du=0.1)
    assert u.max() <= 0.5 + 1e-6 and np.abs(np.diff(np.r_[0.0, u])).max() <= 0.1 + 1e-6
    assert u.max() == pytest.approx(0.5, abs=1e-5) and u[0] == pytest.approx(0.1, abs=1e-5)


def test_a_plan_that_cannot_be_met_is_an_error():
    # u_prev outside [u_min - du, u_max + du]: no first input satisfies both bounds.
    with pytest.raises(ConfigError, match="not solved"):
        solve(3, 0.0, 1.0, u_prev=5.0, u_max=1.0, du=0.1)


def test_discretization_is_exact_for_a_double_integrator():
    dt = 0.05
    ad, bd, wd = discretize(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]),
                            np.array([0.0, 2.0]), dt)
    assert ad == pytest.approx(np.array([[1.0, dt], [0.0, 1.0]]), abs=1e-14)
    assert bd[:, 0] == pytest.approx([dt**2 / 2, dt], abs=1e-14)
    assert wd == pytest.approx([2.0 * dt**2 / 2, 2.0 * dt], abs=1e-14)


def test_the_matrix_exponential_is_scipys():
    from scipy.linalg import expm as scipy_expm

    from vdsim_gym.controllers.discretization import expm

    mpc = MPCSteer.from_env(gym.make("VDSim-DLC-v0"))
    for vx in (0.0, 5.0, 20.0, 60.0):  # the model's, over plan steps and delays up to the
        am, bm = mpc.model(vx)         # longest (60 s: 2e-13 apart, both rounding)
        for dt in (0.001, 0.05, 1.0, MAX_DELAY_S):
            big = np.zeros((6, 6))
            big[:4, :4], big[:4, 4:5], big[:4, 5] = am, bm, 0.3
            ref = scipy_expm(big * dt)
            np.testing.assert_allclose(expm(big * dt), ref, rtol=0,
                                       atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("vx", [10.0, 20.0, 30.0])
def test_the_model_steers_like_the_linear_bicycle(vx):
    # The steady state of (vy, r) under a held steer: r / delta = vx / (L + K vx^2), K the
    # vehicle's linear understeer gradient (analysis.handling, from the tires).
    env = gym.make("VDSim-DLC-v0")
    mpc = MPCSteer.from_env(env)
    a, b = mpc.model(vx)
    vy_r = np.linalg.solve(a[2:, 2:], -b[2:, 0])
    v = mpc.vehicle
    assert vy_r[1] == pytest.approx(vx / (v.wheelbase + understeer_gradient(v, 0.0) * vx**2),
                                    rel=1e-9)


def test_tracks_iso3888_closer_than_delay_compensated_stanley_at_every_delay():
    # 2 seeds, 0, 40 and 80 ms: no cone, and closer to the line than stanley_dc.
    def run(make, d):
        env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(d) if d else None)
        pol = make(env)
        rmse, cones = [], 0
        for seed in range(2):
            obs, _ = env.reset(seed=seed)
            ey, done, first = [], False, True
            while not done:
                a, _ = pol.predict(obs, episode_start=np.array([first]))
                obs, _, term, trunc, info = env.step(a)
                ey.append(info["e_y"])
                done, first = term or trunc, False
            rmse.append(math.sqrt(np.mean(np.square(ey))))
            cones += info["cone_hits"]
        return float(np.mean(rmse)), cones, pol

    for d in (0.0, 0.04, 0.08):
        e_mpc, c_mpc, pol = run(mpc_pi, d)
        e_dc, _, _ = run(stanley_dc_pi, d)
        assert c_mpc == 0 and e_mpc < 0.8 * e_dc, (d, e_mpc, e_dc)
        stats = pol.lateral.solve_time_stats()
        assert stats["n"] > 200 and stats["max_s"] > 0.0  # one solve per env step
        assert set(pol.lateral.statuses) == {"solved"}


def test_batch_rows_plan_on_their_own():
    env = gym.make("VDSim-DLC-v0")
    obs = np.stack([env.reset(seed=i)[0] for i in range(3)])
    batch, _ = mpc_pi(env).lateral.predict(obs)
    for i in range(3):
        one, _ = mpc_pi(env).lateral.predict(obs[i])
        assert one.shape == (1,) and one[0] == pytest.approx(batch[i, 0], abs=1e-6)


def test_spec_and_bad_parameters():
    name, factory = load_controller("mpc:horizon=20,q_psi=2,kp=0.4,delay=0.02")
    pol = factory(gym.make("VDSim-DLC-v0"))
    assert pol.lateral.horizon == 20 and pol.lateral.delay == 0.02
    assert pol.longitudinal.kp == 0.4
    with pytest.raises(ConfigError, match="unknown parameter 'nonsense'"):
        load_controller("mpc:nonsense=1")
    with pytest.raises(ConfigError, match="horizon"):
        load_controller("mpc:horizon=2.5")
    env = gym.make("VDSim-DLC-v0")
    for bad in (dict(dt=0.0), dict(q_y=-1.0), dict(max_steer_rate=float("nan")),
                dict(q_y=0.0, q_psi=0.0)):
        with pytest.raises(ConfigError):
            MPCSteer.from_env(env, **bad)
    with pytest.raises(ConfigError, match="preview"):
        MPCSteer.from_env(gym.make("VDSim-ACC-v0"))


def test_without_osqp_the_error_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "osqp":
            raise ImportError("no osqp")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"vdsim-gym\[mpc\]"):
        MPCSteer.from_env(gym.make("VDSim-DLC-v0"))


def test_per_row_delays_plan_as_that_delay_and_copies_work():
    env = gym.make("VDSim-DLC-v0")
    obs = np.stack([env.reset(seed=i)[0] for i in range(2)])
    obs[:, 9] = [0.05, -0.05]  # prev_steer: the steer in flight matters with a delay
    lat = mpc_pi(env).lateral
    assert lat.follows_env and not mpc_pi(env, delay=0.01).lateral.follows_env
    lat.set_delays([0.0, 0.06])
    batch, _ = lat.predict(obs)
    for i, d in enumerate((0.0, 0.06)):
        one, _ = mpc_pi(env, delay=d).lateral.predict(obs[i])
        assert one[0] == pytest.approx(batch[i, 0], abs=1e-6)
    twin = copy.deepcopy(lat)  # OSQP's workspace is not copied: the copy starts cold
    assert twin.predict(obs)[0] == pytest.approx(lat.predict(obs)[0], abs=1e-6)
    pickle.loads(pickle.dumps(lat))
    with pytest.raises(ConfigError, match="delays"):
        lat.set_delays([0.0, float("nan")])


def test_the_reference_spline_is_scipys():
    from scipy.interpolate import CubicSpline

    distances = (5.0, 10.0, 20.0, 30.0)
    e_y, e_psi = np.array([0.02, -0.7, 1.3]), np.array([0.01, -0.3, 0.6])
    preview = np.array([[0.05, 0.4, 1.8, 3.4], [-1.0, 0.2, 2.5, 2.0], [0.0, 0.0, 0.0, 0.0]])
    x = np.stack([np.linspace(-2.0, 45.0, 60)] * 3)  # before the projection, past 30 m
    y, psi = reference_line(e_y, e_psi, preview, distances, x)
    for i in range(3):
        s, c = math.sin(e_psi[i]), math.cos(e_psi[i])
        xs = -e_y[i] * s + np.array((0.0,) + distances) * c
        ys = np.concatenate([[-e_y[i] * c], preview[i]])
        ref = CubicSpline(xs, ys, bc_type=((1, -math.tan(e_psi[i])), (2, 0.0)))
        inside = np.clip(x[i], xs[0], xs[-1])  # straight on past either end
        slope = ref(inside, 1)
        np.testing.assert_allclose(y[i], ref(inside) + slope * (x[i] - inside), atol=1e-12)
        np.testing.assert_allclose(psi[i], np.arctan(slope), atol=1e-12)


def test_a_non_finite_observation_is_named():
    env = gym.make("VDSim-DLC-v0")
    obs, _ = env.reset(seed=0)
    obs = obs.copy()
    obs[0] = np.nan
    with pytest.raises(ConfigError, match=r"not finite in \['e_y'\]"):
        mpc_pi(env).predict(obs)


# --- The controller before issue 46 (vdsim_gym/controllers/mpc.py at 9407efc): the
# condensed QP rebuilt on every call and solved by OSQP, the reference line from a 5 x 5
# spline solve per row. Kept as the reference the package's one mechanism is checked
# against; not a second path in the package.

class ReferenceQP:
    """CondensedMPC.matrices and .solve as they were: one OSQP problem, set up at the
    first solve and updated (P, q, bounds) after, warm-started."""

    def __init__(self, horizon, eps=1e-7, max_iter=20000):
        self.N, self.eps, self.max_iter = horizon, eps, max_iter
        self.prob, self.const_key, self.const = None, None, None

    def matrices(self, a, b, w, z0, ref, q, r, s, u_prev, terminal):
        n, m = b.shape
        N = self.N
        ab = np.empty((N, n, m))  # A^k B
        ab[0] = b
        for k in range(1, N):
            ab[k] = a @ ab[k - 1]
        lag = np.subtract.outer(np.arange(N), np.arange(N))  # i - j
        blocks = np.where((lag >= 0)[:, :, None, None], ab[np.maximum(lag, 0)], 0.0)
        gamma = blocks.transpose(0, 2, 1, 3).reshape(N * n, N * m)
        free = np.empty((N, n))
        z = np.asarray(z0, dtype=float)
        for i in range(N):
            z = a @ z + w
            free[i] = z
        key = (N, n, m, q.tobytes(), r.tobytes(), s.tobytes(), float(terminal))
        if self.const_key != key:
            qbar = np.kron(np.eye(N), q)
            qbar[(N - 1) * n:, (N - 1) * n:] *= terminal
            d = np.eye(N * m) - np.eye(N * m, k=-m)
            sbar = np.kron(np.eye(N), s)
            self.const = (qbar, d, np.kron(np.eye(N), r) + d.T @ sbar @ d, d.T @ sbar)
            self.const_key = key
        qbar, d, h_inputs, dts = self.const
        gq = gamma.T @ qbar
        h = gq @ gamma + h_inputs
        prev = np.zeros(N * m)
        prev[:m] = u_prev
        f = gq @ (free.reshape(-1) - np.asarray(ref, dtype=float).reshape(-1)) - dts @ prev
        return h, f, d

    def solve(self, a, b, w, z0, ref, q, r, s, u_prev, u_min, u_max, du_max, terminal):
        """OSQP's result and the QP it solved: P, q, A, l, u."""
        import osqp
        import scipy.sparse as sparse

        m = b.shape[1]
        h, f, d = self.matrices(a, b, w, z0, ref, q, r, s, u_prev, terminal)
        N = self.N
        shift = np.zeros(N * m)
        shift[:m] = u_prev
        du = np.tile(np.broadcast_to(np.asarray(du_max, float), (m,)), N)
        lo = np.concatenate([np.tile(np.broadcast_to(np.asarray(u_min, float), (m,)), N),
                             shift - du])
        hi = np.concatenate([np.tile(np.broadcast_to(np.asarray(u_max, float), (m,)), N),
                             shift + du])
        p, a_mat = 2.0 * h, np.vstack([np.eye(N * m), d])
        triu = np.triu_indices(N * m)
        if self.prob is None:
            self.prob = osqp.OSQP()
            self.prob.setup(sparse.csc_matrix((p[triu], triu), shape=p.shape), 2.0 * f,
                            sparse.csc_matrix(a_mat), lo, hi, verbose=False, eps_abs=self.eps,
                            eps_rel=self.eps, max_iter=self.max_iter, polishing=False,
                            warm_starting=True)
            self.order = np.lexsort((triu[0], triu[1]))
        else:
            self.prob.update(Px=p[triu][self.order], q=2.0 * f, l=lo, u=hi)
        res = self.prob.solve(raise_error=False)
        assert str(res.info.status) == "solved", res.info.status
        return res, (p, 2.0 * f, a_mat, lo, hi)


def _reference_points(row, distances):
    e_y, e_psi = row["e_y"], row["e_psi"]
    x0, y0 = -e_y * math.sin(e_psi), -e_y * math.cos(e_psi)
    xs = [x0] + [x0 + s * math.cos(e_psi) for s in distances]
    ys = [y0] + [row[f"preview_{k}"] for k in range(len(distances))]
    return np.array(xs), np.array(ys)


def _spline_slopes(xs, ys, slope0):
    n = len(xs)
    h = np.diff(xs)
    delta = np.diff(ys) / h
    a = np.zeros((n, n))
    rhs = np.zeros(n)
    a[0, 0], rhs[0] = 1.0, slope0
    for i in range(1, n - 1):
        a[i, i - 1], a[i, i], a[i, i + 1] = h[i], 2.0 * (h[i - 1] + h[i]), h[i - 1]
        rhs[i] = 3.0 * (h[i] * delta[i - 1] + h[i - 1] * delta[i])
    a[n - 1, n - 2], a[n - 1, n - 1] = 1.0, 2.0
    rhs[n - 1] = 3.0 * delta[-1]
    return np.linalg.solve(a, rhs)


def _interp_line(x, xs, ys, slope0):
    m = _spline_slopes(xs, ys, slope0)
    inside = np.clip(x, xs[0], xs[-1])
    seg = np.clip(np.searchsorted(xs, inside) - 1, 0, len(xs) - 2)
    h = xs[seg + 1] - xs[seg]
    t = (inside - xs[seg]) / h
    y0, y1, m0, m1 = ys[seg], ys[seg + 1], m[seg], m[seg + 1]
    t2, t3 = t * t, t * t * t
    y = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * h * m0 \
        + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * m1
    slope = ((6 * t2 - 6 * t) * y0 + (-6 * t2 + 6 * t) * y1) / h \
        + (3 * t2 - 4 * t + 1) * m0 + (3 * t2 - 2 * t) * m1
    return y + slope * (x - inside), np.arctan(slope)


class ReferenceSteer:
    """MPCSteer.plan / .steer as they were, with the parameters of ``mpc`` (an MPCSteer):
    one ReferenceQP per row, the model discretized per (vx to 1/1000 m/s, step)."""

    def __init__(self, mpc):
        self.mpc, self.solvers, self.cache = mpc, [], {}
        self.last = []  # per row of the last call: (OSQP's result, (P, q, A, l, u))

    def discrete(self, vx, dt):
        key = (round(vx, 3), dt)
        if key not in self.cache:
            am, bm = self.mpc.model(key[0])
            self.cache[key] = discretize(am, bm, np.zeros(4), dt)
        return self.cache[key]

    def plan(self, row, solver, delay):
        mpc = self.mpc
        vx = row["vx"]
        delta_prev = row["prev_steer"] * mpc.vehicle.max_steer
        z = np.array([0.0, 0.0, row["vy"], row["r"]])
        x_start = 0.0
        if delay > 0.0:
            ad, bd, wd = self.discrete(vx, delay)
            z = ad @ z + bd[:, 0] * delta_prev + wd
            x_start = max(vx, 0.0) * delay
        ad, bd, wd = self.discrete(vx, mpc.dt)
        xs, ys = _reference_points(row, mpc.distances)
        x = x_start + max(vx, 0.0) * mpc.dt * np.arange(1, mpc.horizon + 1)
        y_ref, psi_ref = _interp_line(x, xs, ys, -math.tan(row["e_psi"]))
        ref = np.zeros((mpc.horizon, 4))
        ref[:, 0], ref[:, 1] = y_ref, psi_ref
        return solver.solve(ad, bd, wd, z, ref, mpc.q, mpc.r, mpc.s, [delta_prev],
                            -mpc.limit, mpc.limit, mpc.max_rate * mpc.dt, mpc.terminal)

    def predict(self, obs, delays, episode_start=None):
        """The steer action (as MPCSteer.predict: float32, clipped) of each row."""
        obs = np.atleast_2d(np.asarray(obs, float))
        if len(self.solvers) != len(obs):
            self.solvers = [ReferenceQP(self.mpc.horizon) for _ in obs]
        for i in np.flatnonzero(episode_start if episode_start is not None else []):
            self.solvers[i].prob = None
        layout = self.mpc.layout
        names = {n: n for n in ("e_y", "e_psi", "vx", "vy", "r", "prev_steer")}
        names.update({f"preview_{k}": f"preview_y_{d:g}m"
                      for k, d in enumerate(self.mpc.distances)})
        out, self.last = [], []
        for i, o in enumerate(obs):
            row = {k: float(o[layout.index(n)]) * float(layout.scale[layout.index(n)])
                   for k, n in names.items()}
            res, qp = self.plan(row, self.solvers[i], float(delays[i]))
            self.last.append((res, qp))
            out.append(res.x[0])
        action = (np.array(out) / self.mpc.vehicle.max_steer).astype(np.float32)
        return np.clip(action, -1.0, 1.0)


# CondensedMPC's eps_abs = eps_rel. OSQP stops once its dual residual r = P x + q + A' y is
# within EPS (1 + max(|P x|, |A' y|, |q|)) (inf-norms) and its primal one within EPS (1 +
# max(|A x|, |z|)). The QP is strongly convex (mu = P's least eigenvalue) and OSQP's y is
# complementary to a point z of the bounds, so mu |x - x*|^2 <= (x - x*)' r - (A x - z)'
# (y - y*): |x - x*|_2 <= sqrt(N) |r|_inf / mu with the primal term neglected (1e-9 on
# these recordings against a dual threshold of ~1e-5).
EPS = 1e-7
F32 = 2.0 ** -24  # two roundings to float32 of an action in [-1, 1], half an ulp each
# The plan's first steer [rad] when no bound binds is the unconstrained optimum of the same
# QP: only the QP's rounding (H's condition number ~1e3 times 1e-16) separates the two.
EXACT = 1e-10


def osqp_bound(res, qp):
    """How far (2-norm, rad) a plan OSQP stopped on can be from the optimum of ``qp``
    (P, q, A, l, u), from the stopping threshold at the reference's solution."""
    p, q, a_mat, _, _ = qp
    x, y = np.asarray(res.x), np.asarray(res.y)
    scale = max(np.abs(p @ x).max(), np.abs(a_mat.T @ y).max(), np.abs(q).max())
    return math.sqrt(len(x)) * EPS * (1.0 + scale) / np.linalg.eigvalsh(p)[0]


def optimum(qp):
    """The QP's exact optimum when no bound binds (-P^-1 q meets them), else None."""
    p, q, a_mat, lo, hi = qp
    x = np.linalg.solve(p, -q)
    ax = a_mat @ x
    return x if np.all((ax >= lo) & (ax <= hi)) else None


_RECORDINGS: dict = {}


def recording(delay, **kwargs):
    """The reference's closed-loop episode on VDSim-DLC-v0 from seed 0 with a loop delay
    ``delay`` (predicted across): the env, its observations, and per step the reference's
    action, OSQP's result and the QP (kept per arguments for the module)."""
    key = (delay, tuple(sorted(kwargs.items())))
    if key not in _RECORDINGS:
        env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(delay) if delay else None)
        ref, pi = ReferenceSteer(MPCSteer.from_env(env, **kwargs)), PISpeed.from_env(env)
        obs, _ = env.reset(seed=0)
        observations, actions, solves = [], [], []
        done, first = False, True
        while not done:
            steer = ref.predict(obs, [delay], episode_start=[first])[0]
            lon, _ = pi.predict(obs[None], episode_start=np.array([first]))
            observations.append(obs)
            actions.append(steer)
            solves.append(ref.last[0])
            obs, _, term, trunc, _ = env.step(np.array([steer, lon[0, 0]], np.float32))
            done, first = term or trunc, False
        _RECORDINGS[key] = (env, np.stack(observations), np.array(actions), solves)
    return _RECORDINGS[key]


@pytest.mark.parametrize("delay, kwargs", [
    (0.0, {}), (0.04, {}), (0.1, {}),
    (0.04, {"max_steer_rate": 0.15}),  # a rate bound that binds: OSQP on those rows
])
def test_the_same_plans_as_the_qp_rebuilt_and_solved_every_call(delay, kwargs):
    env, observations, ref_actions, solves = recording(delay, **kwargs)
    mpc, twin = MPCSteer.from_env(env, **kwargs), MPCSteer.from_env(env, **kwargs)
    max_steer = mpc.vehicle.max_steer
    by_osqp, worst = [], 0.0
    for k, obs in enumerate(observations):  # in order: OSQP's warm starts as in a run
        before = sum(s.osqp_solves for s in mpc._solvers)
        action, _ = mpc.predict(obs, episode_start=np.array([k == 0]))
        by_osqp.append(sum(s.osqp_solves for s in mpc._solvers) > before)
        res, qp = solves[k]
        # Both within OSQP's tolerance of one optimum: the reference's plan by its bound,
        # the new one by the same (it stopped on the same QP) or exactly (no OSQP).
        bound = osqp_bound(res, qp) * (2.0 if by_osqp[-1] else 1.0) / max_steer
        assert abs(action[0] - ref_actions[k]) <= bound + F32, (k, action[0], ref_actions[k])
        exact = optimum(qp)
        if exact is not None:  # the reference's QP solved exactly: the same steer [rad]
            worst = max(worst, abs(twin.steer(obs[None])[0] - exact[0]))
    assert worst <= EXACT
    if kwargs:  # both mechanisms ran: the optimum meeting the bounds, and OSQP
        assert 0 < sum(by_osqp) < len(by_osqp)
    assert set(mpc.statuses) == {"solved"}


def test_a_batch_plans_each_row_as_alone_and_runs_repeat_bit_for_bit():
    env, observations, _, _ = recording(0.04)
    rows = observations[np.arange(64) * len(observations) // 64]  # 64 different speeds
    delays = np.linspace(0.0, 0.1, 64)
    lat = mpc_pi(env).lateral
    lat.set_delays(delays)
    batch = lat.steer(rows)  # [rad]; the batch's arithmetic in numpy
    for i in range(0, 64, 7):  # one row: its scalar arithmetic in Python floats
        one = mpc_pi(env, delay=float(delays[i])).lateral
        assert abs(one.steer(rows[i:i + 1])[0] - batch[i]) <= EXACT, i
        assert one.predict(rows[i])[0].shape == (1,)
    actions, _ = lat.predict(rows)
    again = mpc_pi(env).lateral
    again.set_delays(delays)
    assert np.array_equal(again.predict(rows)[0], actions)  # another controller: same bits
    mpc_module.SHARED_QPS.clear()  # the QPs rebuilt, to the same bits
    twin = pickle.loads(pickle.dumps(again))
    assert np.array_equal(twin.predict(rows)[0], actions)
    assert mpc_module.SHARED_QPS.bytes > 0


def test_the_per_speed_qps_stay_within_their_budget(monkeypatch):
    shared = mpc_module.SHARED_QPS
    env, observations, _, _ = recording(0.0)
    shared.clear()
    kept = mpc_pi(env).lateral
    full = [kept.predict(o)[0][0] for o in observations[:40]]
    assert len(shared.qps) > 3
    one_qp = next(iter(shared.qps.values())).nbytes
    monkeypatch.setattr(mpc_module, "QP_CACHE_BYTES", 3 * one_qp)
    shared.clear()
    small = mpc_pi(env).lateral
    for o, expected in zip(observations[:40], full, strict=True):
        assert small.predict(o)[0][0] == expected  # rebuilt to the same bits
        assert len(shared.qps) <= 3 and shared.bytes <= 3 * one_qp


def test_controllers_built_alike_share_their_qps():
    """A second controller with the same model and weights (a sweep's next cell) builds no
    QP its twin built; one with other weights builds its own."""
    shared = mpc_module.SHARED_QPS
    env, observations, _, _ = recording(0.04)
    shared.clear()
    first = mpc_pi(env).lateral
    actions = [first.predict(o)[0] for o in observations[:30]]
    built = dict(shared.qps)
    second = mpc_pi(env).lateral
    assert [second.predict(o)[0] for o in observations[:30]] == actions
    assert shared.qps == built  # the same objects, none added
    other = mpc_pi(env, mpc={"s_rate": 2.0}).lateral
    other.predict(observations[0])
    assert len(shared.qps) == len(built) + 1


def test_the_unconstrained_optimum_is_taken_only_when_it_meets_every_bound():
    free = CondensedMPC(20)
    res = free.solve(z0=[0.0], ref=np.full((20, 1), 0.3), q=[[1.0]], r=[[0.0]], s=[[1.0]],
                     u_prev=[0.0], u_min=-1.0, u_max=1.0, du_max=1.0, **INTEGRATOR)
    assert res.iterations == 0 and free.osqp_solves == 0
    bound = CondensedMPC(20)
    res = bound.solve(z0=[0.0], ref=np.full((20, 1), 5.0), q=[[1.0]], r=[[0.0]], s=[[1.0]],
                      u_prev=[0.0], u_min=-1.0, u_max=1.0, du_max=0.1, **INTEGRATOR)
    assert res.iterations > 0 and bound.osqp_solves == 1 and res.u[0, 0] == pytest.approx(
        0.1, abs=1e-5)
    # H singular (no weight on the state, none on the inputs): no gains, OSQP every time
    flat = CondensedMPC(3)
    one, zero = np.ones((1, 1)), np.zeros((1, 1))
    assert flat.structure(one, one, np.zeros(1), zero, zero, zero).gain_t is None
    res = flat.solve(z0=[0.0], ref=np.zeros((3, 1)), q=[[0.0]], r=[[0.0]], s=[[0.0]],
                     u_prev=[0.0], u_min=-1.0, u_max=1.0, du_max=1.0, **INTEGRATOR)
    assert res.iterations > 0 and flat.osqp_solves == 1
    assert np.all(np.abs(res.u) <= 1.0 + 1e-6)
