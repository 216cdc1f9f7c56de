// integrator="etd2": exponential time differencing of second order (ETD2RK, Cox and
// Matthews 2002, J. Comput. Phys. 176) on the split f(y) = L y + N(y), with L the stiff
// linear parts of the vehicle models frozen at the step's start:
//
//   a       = y_n + dt phi1(dt L) f(y_n)
//   y_n+1   = a + dt phi2(dt L) (f(a) - f(y_n) - L (a - y_n))
//
// phi1(z) = (e^z - 1) / z, phi2(z) = (e^z - 1 - z) / z^2. The method is second order for
// any matrix L (N takes the rest), exact where the dynamics are linear with L, and with
// L = 0 it is exactly Heun's method: the body is stepped as by Heun while the stiff parts
// decay monotonically at any step (phi1, phi2 > 0 for real z <= 0: no sign flips).
//
// L (docs/PHYSICS.md, "Second-order stepping"):
// - each wheel's slip velocity u_i = R omega_i - et_i . (vx, vy, r) (HubCoupling) decays at
//   lambda_i = J_i (1 + kself_i), J_i = d(omega_i')/d(omega_i), and moves the body, b' =
//   G_i u_i. In the coordinates (b, u) this part of L is block upper triangular, so its
//   phi functions are those of the slips' diagonal (a 2x2 block per differential pair)
//   plus the body's row dt G phi_k+1(dt Lambda). Written in the spins alone (the diagonal
//   J_i only) the wheel would follow its hub explicitly and lag the body: at 5 ms a lane
//   change at the stability margin tracked 2 % worse; without the body's row, a wheel
//   rolling up at low speed oscillated with the body;
// - the lagged slips' rate -max(|vx|, floor) / sigma, the load-transfer lags' -1/tau and
//   the acceleration cascade's filter -1/tau (when the cascade is integrated: kAm);
// - the cascade filter's drive by the slips (a_m' = (ax - a_m) / tau, ax = G_x . u: a row
//   block upper triangular with the slips, its phi functions divided differences), and
//   its integral I' = a* - a_m (unless held by the anti-windup) as w = I - tau a_m, w' =
//   a* - ax: the body's row negated. Without them the slips' millisecond transient after a
//   target's jump reached a_m and I as an explicit forcing and limited the steps.
#pragma once
#include <cmath>
#include <limits>

#include "fminmax.hpp"
#include "params.hpp"
#include "state.hpp"

namespace vdsim {

// phi1..phi4 at z <= 0: Taylor series near 0 (where the closed forms cancel; |z| < 0.1,
// error below 1e-16), else phi1 = (e^z - 1) / z and phi_k+1 = (phi_k - 1/k!) / z (phi4,
// used by etd3's phi3 of the body's row, to about 1e-12 relative at |z| = 0.1).
inline void phi1234(double z, double p[4]) {
  if (std::fabs(z) < 0.1) {
    p[3] = 1.0 / 24 + z * (1.0 / 120 + z * (1.0 / 720 + z * (1.0 / 5040 + z * (1.0 / 40320 +
           z * (1.0 / 362880 + z * (1.0 / 3628800 + z / 39916800))))));
    p[0] = 1.0 + z * (1.0 / 2 + z * (1.0 / 6 + z * (1.0 / 24 + z * (1.0 / 120 + z * (1.0 / 720 +
           z * (1.0 / 5040 + z / 40320))))));
    p[1] = 0.5 + z * (1.0 / 6 + z * (1.0 / 24 + z * (1.0 / 120 + z * (1.0 / 720 + z * (1.0 /
           5040 + z * (1.0 / 40320 + z / 362880))))));
    p[2] = 1.0 / 6 + z * (1.0 / 24 + z * (1.0 / 120 + z * (1.0 / 720 + z * (1.0 / 5040 + z *
           (1.0 / 40320 + z * (1.0 / 362880 + z / 3628800))))));
    return;
  }
  const double iz = 1.0 / z;
  // e^z is exactly 0 below -746 (a held wheel's stiction gives z of -1e4 and beyond): skip
  // libm's underflow path, which costs more than the exponential itself.
  p[0] = ((z < -746.0 ? 0.0 : std::exp(z)) - 1.0) * iz;
  p[1] = (p[0] - 1.0) * iz;
  p[2] = (p[1] - 0.5) * iz;
  p[3] = (p[2] - 1.0 / 6) * iz;
}
inline void phi123(double z, double p[3]) {
  double q[4];
  phi1234(z, q);
  p[0] = q[0], p[1] = q[1], p[2] = q[2];
}

// phi1, phi2 at z <= 0 (z = 0 exactly: 1, 1/2 without the series).
inline void phi12(double z, double p[2]) {
  if (z == 0.0) {
    p[0] = 1.0, p[1] = 0.5;
    return;
  }
  double q[3];
  phi123(z, q);
  p[0] = q[0], p[1] = q[1];
}

// phi1, phi2 of the last z asked for, kept while z repeats: the load transfer's and the
// cascade filter's rates are constant, and so are most steps' lengths.
class Phi12Memo {
 public:
  void get(double z, double p[3]) {
    if (!(z == z_)) {  // NaN (the first call) never matches
      phi123(z, p_);
      z_ = z;
    }
    p[0] = p_[0], p[1] = p_[1], p[2] = p_[2];
  }
  // A cache of phi123(z_), written as it is (reading it back or recomputing it gives the
  // same bits; written, nothing has to be recomputed).
  template <class Ar>
  void archive(Ar& ar) { ar(z_, p_); }

 private:
  double z_ = std::numeric_limits<double>::quiet_NaN();
  double p_[3] = {1.0, 0.5, 1.0 / 6};
};

// What etd2_step keeps between steps (a session's own): phi12 of the constant rates.
struct Etd2Memo {
  Phi12Memo transfer, filter;
  template <class Ar>
  void archive(Ar& ar) { ar(transfer, filter); }
};

// The linear part L over one step of length dt, ready to apply.
class Etd2Linear {
 public:
  // lam: the slips' rates; hub: the wheels' coupling; held[i]: wheel i held at rest (its
  // slip is its spin alone, and its G is 0); kc: each pair's differential coupling [1/s];
  // lag_rate, transfer_rate, filter_rate >= 0; memo: phi12 of the constant rates kept
  // from the last step (nullptr: computed here).
  Etd2Linear(const HubCoupling& hub, const bool held[4], const double lam[4],
             const double G[4][3], const double kc[2], double lag_rate, double transfer_rate,
             double filter_rate, double dt, Etd2Memo* memo = nullptr,
             bool integral_active = false)
      : dt_(dt), lag_rate_(lag_rate), transfer_rate_(transfer_rate),
        filter_rate_(filter_rate), integral_(integral_active && filter_rate > 0.0) {
    n_ = hub.n_wheels;
    radius_ = hub.radius;
    inv_r_ = 1.0 / hub.radius;
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) et_[i][c] = held[i] ? 0.0 : hub.et[i][c];
    double q[4];
    for (int i = 0; i < 4; ++i) {
      lam_[i] = lam[i];
      for (int c = 0; c < 3; ++c) G_[i][c] = G[i][c];
      phi1234(dt * lam[i], q);
      for (int k = 0; k < 4; ++k) pu_[k][i] = q[k];
    }
    for (int pair = 0; pair < 2; ++pair) {
      kc_[pair] = kc[pair];
      if (kc[pair] != 0.0) block_phi(pair);
    }
    phi123(-dt * lag_rate, lag_p_);
    // The cascade's filter of the body's ax, driven by the slips: its row of phi_k(dt L).
    filter_dd();
    if (memo) {
      memo->transfer.get(-dt * transfer_rate, transfer_p_);
      memo->filter.get(-dt * filter_rate, filter_p_);
    } else {
      phi123(-dt * transfer_rate, transfer_p_);
      phi123(-dt * filter_rate, filter_p_);
    }
  }

  // v = phi_k+1(dt L) v (k = 0: phi1, 1: phi2, 2: phi3).
  void apply(State& v, int k) const {
    double u[4], w[4];
    to_slips(v, u);
    for (int i = 0; i < 4; ++i) w[i] = u[i];
    const double w_int0 = integral_ ? v[kAi] - v[kAm] / filter_rate_ : 0.0;
    // The cascade filter's response to the slips (its row's off-diagonal part).
    double drive = 0.0;
    if (filter_rate_ != 0.0) {
      double x[4];
      for (int i = 0; i < 4; ++i) x[i] = u[i];
      apply_modes(filter_pu_[k], filter_block_[k], x);
      for (int i = 0; i < n_; ++i) drive += G_[i][0] * x[i];
      drive *= dt_ * filter_rate_;
    }
    apply_slips(u, k);
    apply_slips(w, k + 1);
    const double c = k == 0 ? 1.0 : k == 1 ? 0.5 : 1.0 / 6;  // phi_k+1(0): the explicit states
    for (int i = kX; i <= kR; ++i) v[i] *= c;
    for (int i = n_; i < 4; ++i) v[kW0 + i] *= c;
    v[kAxF] *= transfer_p_[k];
    v[kAyF] *= transfer_p_[k];
    for (int i = kTa0; i < kTa0 + 4; ++i) v[i] *= lag_p_[k];
    v[kAm] *= filter_p_[k];
    v[kAi] *= c;
    // The cascade's integral I' = a* - a_m in w = I - tau a_m: w' = a* - ax, the body's
    // row negated (no a_m term: no second divided differences).
    double w_int = 0.0;
    if (integral_) {
      w_int = c * w_int0;
      for (int i = 0; i < n_; ++i) w_int -= dt_ * G_[i][0] * w[i];
    }
    v[kAm] += drive;
    if (integral_) v[kAi] = w_int + v[kAm] / filter_rate_;
    for (int i = 0; i < n_; ++i) {
      v[kVx] += dt_ * G_[i][0] * w[i];
      v[kVy] += dt_ * G_[i][1] * w[i];
      v[kR] += dt_ * G_[i][2] * w[i];
    }
    from_slips(u, v);
  }

  // v -= L d.
  void subtract_product(State& v, const State& d) const {
    double u[4], lu[4];
    to_slips(d, u);
    for (int i = 0; i < 4; ++i) lu[i] = lam_[i] * u[i];
    for (int pair = 0; pair < 2; ++pair) {
      if (kc_[pair] == 0.0) continue;
      const int i0 = 2 * pair;
      lu[i0] += kc_[pair] * (u[i0 + 1] - u[i0]);
      lu[i0 + 1] += kc_[pair] * (u[i0] - u[i0 + 1]);
    }
    double lb[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < n_; ++i)
      for (int c = 0; c < 3; ++c) lb[c] += G_[i][c] * u[i];
    v[kVx] -= lb[0];
    v[kVy] -= lb[1];
    v[kR] -= lb[2];
    for (int i = 0; i < n_; ++i)
      v[kW0 + i] -= (lu[i] + et_[i][0] * lb[0] + et_[i][1] * lb[1] +
                     et_[i][2] * lb[2]) * inv_r_;
    if (filter_rate_ != 0.0) {  // the filter's drive: the body's ax from the slips
      double gx = 0.0;
      for (int i = 0; i < n_; ++i) gx += G_[i][0] * u[i];
      v[kAm] -= filter_rate_ * gx;
    }
    v[kAxF] += transfer_rate_ * d[kAxF];
    v[kAyF] += transfer_rate_ * d[kAyF];
    for (int i = kTa0; i < kTa0 + 4; ++i) v[i] += lag_rate_ * d[i];
    v[kAm] += filter_rate_ * d[kAm];
    if (integral_) v[kAi] += d[kAm];
  }

 private:
  void to_slips(const State& v, double u[4]) const {
    for (int i = 0; i < 4; ++i)
      u[i] = i < n_ ? radius_ * v[kW0 + i] - (et_[i][0] * v[kVx] +
                                                  et_[i][1] * v[kVy] +
                                                  et_[i][2] * v[kR])
                    : 0.0;
  }
  // The spins from the slips and the body rates already in v.
  void from_slips(const double u[4], State& v) const {
    for (int i = 0; i < n_; ++i)
      v[kW0 + i] = (u[i] + et_[i][0] * v[kVx] + et_[i][1] * v[kVy] +
                    et_[i][2] * v[kR]) * inv_r_;
  }
  // x = phi_k+1(dt Lambda) x (k = 0..3: phi1..phi4).
  void apply_slips(double x[4], int k) const { apply_modes(pu_[k], block_[k], x); }
  // x = F x for a function F of the slips' modes given as its diagonal pu (uncoupled
  // wheels) and each coupled pair's symmetric 2x2 block (m0, m1; m1, m2).
  void apply_modes(const double pu[4], const double block[2][3], double x[4]) const {
    for (int pair = 0; pair < 2; ++pair) {
      const int i0 = 2 * pair;
      if (kc_[pair] == 0.0) {
        x[i0] *= pu[i0];
        x[i0 + 1] *= pu[i0 + 1];
        continue;
      }
      const double* m = block[pair];
      const double x0 = x[i0], x1 = x[i0 + 1];
      x[i0] = m[0] * x0 + m[1] * x1;
      x[i0 + 1] = m[1] * x0 + m[2] * x1;
    }
  }
  // A coupled pair's block, dt [[l0 - kc, kc], [kc, l1 - kc]] = [[b0, c], [c, b1]], its
  // eigenvalues m1 > m2 and their phi_1..3 (block_phi).
  struct Eigen2 {
    double b0 = 0.0, b1 = 0.0, c = 0.0, m1 = 0.0, m2 = 0.0, q1[4] = {}, q2[4] = {};
    // f(B) from f(m1), f(m2): f(m2) I + (f(m1) - f(m2)) / (m1 - m2) (B - m2 I)
    void function(double f1, double f2, double out[3]) const {
      const double sk = (f1 - f2) / (m1 - m2);
      out[0] = f2 + sk * (b0 - m2);
      out[1] = sk * c;
      out[2] = f2 + sk * (b1 - m2);
    }
  };
  // phi_k of the pair's block by its eigenvalues (m1 - m2 >= 2 dt kc > 0).
  void block_phi(int pair) {
    const int i0 = 2 * pair;
    Eigen2& e = eig_[pair];
    e.b0 = dt_ * (lam_[i0] - kc_[pair]), e.b1 = dt_ * (lam_[i0 + 1] - kc_[pair]);
    e.c = dt_ * kc_[pair];
    const double mean = 0.5 * (e.b0 + e.b1), rad = std::hypot(0.5 * (e.b0 - e.b1), e.c);
    e.m1 = mean + rad, e.m2 = mean - rad;
    phi1234(e.m1, e.q1);
    phi1234(e.m2, e.q2);
    for (int k = 0; k < 4; ++k) e.function(e.q1[k], e.q2[k], block_[k][pair]);
  }

  // The cascade filter's row against the slips: phi_k(dt L) in (filter, slips) is block
  // upper triangular, its off-diagonal part dt rate g (phi_k(a) - phi_k(dt Lambda)) /
  // (a - dt Lambda), a = -dt rate: the divided differences of phi_k between the filter's
  // mode and each slip mode (a coupled pair's by its eigenvalues), from the phi values
  // the slips' own functions computed.
  // (phi_k(a) - phi_k(x)) / (a - x) for k = 1, 2 from pa = phi_1..3(a), px = phi_1..3(x)
  // (x nudged off a where they meet).
  static void divided(double a, const double pa[3], double x, const double px[3],
                      double out[3]) {
    const double tiny = 1e-6 * fmax_inl(1.0, std::fabs(a));
    if (std::fabs(a - x) < tiny) {
      double q[3];
      x = a - tiny;
      phi123(x, q);
      for (int k = 0; k < 3; ++k) out[k] = (pa[k] - q[k]) / (a - x);
      return;
    }
    for (int k = 0; k < 3; ++k) out[k] = (pa[k] - px[k]) / (a - x);
  }
  void filter_dd() {
    if (filter_rate_ == 0.0) return;
    const double a = -dt_ * filter_rate_;
    double pa[3], q[3];
    phi123(a, pa);
    for (int i = 0; i < 4; ++i) {
      const double px[3] = {pu_[0][i], pu_[1][i], pu_[2][i]};
      divided(a, pa, dt_ * lam_[i], px, q);
      for (int k = 0; k < 3; ++k) filter_pu_[k][i] = q[k];
    }
    for (int pair = 0; pair < 2; ++pair) {
      if (kc_[pair] == 0.0) continue;
      const Eigen2& e = eig_[pair];
      double q1[3], q2[3];
      divided(a, pa, e.m1, e.q1, q1);
      divided(a, pa, e.m2, e.q2, q2);
      for (int k = 0; k < 3; ++k) e.function(q1[k], q2[k], filter_block_[k][pair]);
    }
  }
  Eigen2 eig_[2];
  // the cascade filter's divided differences (filter_dd; k = 0, 1: phi1, phi2)
  double filter_pu_[3][4];
  double filter_block_[3][2][3];

  double et_[4][3];
  double radius_ = 1.0;
  double dt_, lag_rate_, transfer_rate_, filter_rate_;
  bool integral_ = false;
  int n_ = 4;
  double inv_r_ = 1.0;
  double lam_[4], G_[4][3], kc_[2];
  double pu_[4][4];
  double block_[4][2][3];  // set by block_phi for the coupled pairs, read for those only
  double lag_p_[3], transfer_p_[3], filter_p_[3];
};

// J_i = d(omega_i')/d(omega_i) for the first n wheels at s (f: the rates there), clipped
// at 0 (only decaying modes go into L), by forward differences: the secant over the
// explicit step's reach, dt f_i, and where it is softer than half the tire's linear
// stiffness j_lin_i (the reach crossed the tire's peak, or started past it) also the
// tangent (a 1e-6 (1 + |omega|) step), taking the stiffer. The tangent alone lets a wheel
// leaving a saturated tire's flat top (a brake released from lock) overshoot into the
// stiff linear part and stall there; the secant alone, from a stiff point across the
// peak, sees the flat top and lets the slip oscillate; a stiffer J only slows the
// approach to the wheel's equilibrium within a step. rates(state, ds): the spin rates at
// a state differing from s in the spins only. The differential's coupling (linear: kc
// (h_other - h_own) on each wheel of a pair when both move) is taken out; L carries it.
template <class Rates>
inline void etd2_wheel_jacobian(const State& s, const State& f, Rates&& rates,
                                const double kc[2], const double j_lin[4], double dt, int n,
                                double j[4]) {
  State tmp = s, fp;
  double h[4];
  bool tangent = false;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < n; ++i) {
      const double tiny = 1e-6 * (1.0 + std::fabs(s[kW0 + i]));
      const double reach = dt * f[kW0 + i];
      h[i] = pass == 1 || std::fabs(reach) <= tiny ? (f[kW0 + i] < 0.0 ? -tiny : tiny) : reach;
      tmp[kW0 + i] = s[kW0 + i] + h[i];
    }
    rates(tmp, fp);
    for (int i = 0; i < n; ++i) {
      const double dh = kc[i / 2] * ((i ^ 1) < n ? h[i ^ 1] - h[i] : 0.0);
      const double d = fmin_inl((fp[kW0 + i] - f[kW0 + i] - dh) / h[i], 0.0);
      j[i] = pass == 0 ? d : fmin_inl(j[i], d);
      if (pass == 0 && d > 0.5 * j_lin[i]) tangent = true;
    }
    if (!tangent) break;
  }
  for (int i = n; i < 4; ++i) j[i] = 0.0;
}

// The linear part's wheel modes at a step's start s (f0: the rates there): each wheel's
// slip rate lam_i, its coupling to the body G_i and whether it is held at rest (etd2_step,
// etd3_step).
template <class Rates>
inline void etd_wheel_modes(const State& s, const State& f0, const HubCoupling& hc,
                            Rates&& rates, const double kc[2], double dt, bool held[4],
                            double lam[4], double G[4][3]) {
  double j[4];
  etd2_wheel_jacobian(s, f0, rates, kc, hc.j_lin, dt, hc.n_wheels, j);
  for (int i = 0; i < 4; ++i) {
    held[i] = i >= hc.n_wheels || (s[kW0 + i] == 0.0 && f0[kW0 + i] == 0.0);
    if (held[i]) {
      // A wheel held at rest (a brake within its capacity, a parked wheel) neither follows
      // its hub nor moves the body through it: its J is the brake's stiction.
      lam[i] = j[i];
      continue;
    }
    lam[i] = j[i] * (1.0 + hc.kself[i]);
    for (int c = 0; c < 3; ++c) G[i][c] = j[i] * hc.gb[i][c];
  }
}

// What etd2_step and etd3_step take at a step's start s: the rates f0 there (evaluated
// unless ready), the wheels' coupling to the body and the wheel modes.
struct EtdStart {
  const HubCoupling* hc = nullptr;
  double lam[4] = {};
  double G[4][3] = {};
  bool held[4] = {};
};
template <class Deriv, class Rates, class Hub>
inline EtdStart etd_start(const State& s, double dt, State& f0, bool ready, Deriv&& deriv,
                          Rates&& rates, Hub&& hub, const double kc[2]) {
  if (!ready) deriv(s, f0);
  EtdStart st;
  st.hc = &hub(s);
  etd_wheel_modes(s, f0, *st.hc, rates, kc, dt, st.held, st.lam, st.G);
  return st;
}

// One etd2 step of s over dt. deriv(state, ds): the full rates at the step's start;
// end_deriv(state, ds): the same at its end (a caller may capture less there: no rates or
// hub reads follow it); rates(state, ds): the spin rates at a state that differs from the
// start's in the spins only (wheel_rates);
// hub(state) -> const HubCoupling&: the wheels' coupling to the body; kc: each pair's viscous
// differential coupling [1/s]; lag_rate(state): the lagged slips' rate (0: no lag);
// transfer_rate: 1 / load_transfer_tau; filter_rate: 1 / accel_filter_tau (0: the
// cascade's states unused); memo: kept between steps (optional; the same bits).
// start: where the start's rates are kept (optional); start_ready: they are already there,
// deriv's at this very state and inputs (a step retaken from the same start: Session's
// step-size rule), and so is what deriv captured for rates and hub. deriv is a pure
// function of its state and the step's inputs, so skipping it changes no bit.
// correction (optional): y_n+1 - a, the second-order step's correction to its first-order
// (exponential Euler) predictor: the embedded estimate of the predictor's local error,
// O(dt^2), at no extra cost (Session's step-size rule).
template <class Deriv, class EndDeriv, class Rates, class Hub, class LagRate>
inline void etd2_step(State& s, double dt, Deriv&& deriv, EndDeriv&& end_deriv, Rates&& rates,
                      Hub&& hub, const double kc[2], LagRate&& lag_rate, double transfer_rate,
                      double filter_rate = 0.0, Etd2Memo* memo = nullptr,
                      State* start = nullptr, bool start_ready = false,
                      State* correction = nullptr) {
  State f0_local, f1, a, d;
  State& f0 = start ? *start : f0_local;
  const EtdStart st = etd_start(s, dt, f0, start && start_ready, deriv, rates, hub, kc);
  const Etd2Linear L(*st.hc, st.held, st.lam, st.G, kc, lag_rate(s), transfer_rate,
                     filter_rate, dt, memo, f0[kAi] != 0.0);
  d = f0;
  L.apply(d, 0);
  for (int i = 0; i < kStateSize; ++i) {
    a[i] = s[i] + dt * d[i];
    d[i] = a[i] - s[i];
  }
  end_deriv(a, f1);
  for (int i = 0; i < kStateSize; ++i) f1[i] -= f0[i];
  L.subtract_product(f1, d);
  L.apply(f1, 1);
  for (int i = 0; i < kStateSize; ++i) s[i] = a[i] + dt * f1[i];
  if (correction)
    for (int i = 0; i < kStateSize; ++i) (*correction)[i] = dt * f1[i];
}

}  // namespace vdsim
