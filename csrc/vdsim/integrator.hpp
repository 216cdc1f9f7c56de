// Fixed-step explicit integrators over the plant state; the model is a callable
// deriv(state, ds). Kept separate from the models so the accuracy gate can swap them.
#pragma once
#include <cmath>

#include "etd3.hpp"
#include "fminmax.hpp"
#include "params.hpp"
#include "state.hpp"

namespace vdsim {

// Linear coupling between the wheel spins of a pair (0, 1) and (2, 3): d(omega_i')/
// d(omega_other) = k[pair] [1/s] (a viscous differential: c / I). semi_implicit treats it
// implicitly with the pair's diagonal (a 2x2 solve), so a stiff (locked) coupling stays
// stable; the explicit integrators see it through the derivative only.
struct WheelCoupling {
  double k[2] = {0.0, 0.0};
  template <class Ar>
  void archive(Ar& ar) { ar(k); }
};

// The lagged slips' law (model_common.hpp, relaxed_slip): d(ta_i)/dt = lambda_i (kin_i -
// ta_i), lambda_i = max(|vx_wheel|, floor) / sigma. semi_implicit advances the lagged
// slips exponentially, ta += f (1 - exp(-lambda dt)) / lambda with lambda from the body's
// vx (the wheels' vx differ by r y and the steer's cosine: a few per cent), exact for a
// frozen kinematic slip, so the lag (10 ms at 30 m/s for sigma = 0.3 m) neither limits
// the step nor costs accuracy. inv_length = 0: no lag states.
struct SlipLag {
  double inv_length = 0.0;  // 1 / sigma [1/m]
  double floor = 0.0;       // the slip speed floor [m/s]
  template <class Ar>
  void archive(Ar& ar) { ar(inv_length, floor); }
};

// wheel_deriv(state, ds): the wheel-spin rates only (ds[kW0..kW0+3]), bit-identical to
// deriv's; the semi-implicit step's perturbed evaluation uses it (the default: deriv).
// hub_coupling(state) -> const HubCoupling&: the wheels' coupling to the body at the state of the
// last full derivative, for etd2; end_deriv(state, ds): deriv at an etd2 step's end (the
// same rates; see etd2_step).
template <class Deriv, class WheelDeriv, class Hub, class EndDeriv>
inline void integrate_step(Integrator method, State& s, double dt, Deriv&& deriv,
                           WheelDeriv&& wheel_deriv, Hub&& hub_coupling, EndDeriv&& end_deriv,
                           const WheelCoupling& coupling = {}, const SlipLag& lag = {},
                           double transfer_rate = 0.0, double filter_rate = 0.0,
                           Etd2Memo* memo = nullptr, State* start = nullptr,
                           bool start_ready = false, State* correction = nullptr,
                           Etd2Memo* half_memo = nullptr) {
  auto lag_rate = [&](const State& x) {
    return lag.inv_length > 0.0 ? fmax_inl(std::fabs(x[kVx]), lag.floor) * lag.inv_length
                                : 0.0;
  };
  if (method == Integrator::Etd3) {
    etd3_step(s, dt, deriv, end_deriv, wheel_deriv, hub_coupling, coupling.k, lag_rate,
              transfer_rate, filter_rate, memo, half_memo, start, start_ready, correction);
    return;
  }
  if (method == Integrator::Etd2) {
    etd2_step(s, dt, deriv, end_deriv, wheel_deriv, hub_coupling, coupling.k, lag_rate,
              transfer_rate, filter_rate, memo, start, start_ready, correction);
    return;
  }
  State k1, k2, k3, k4, tmp;
  deriv(s, k1);
  if (method == Integrator::SemiImplicit) {
    // The body explicitly (Euler), then the stiff wheel spins linearly implicitly at the
    // body's new state (Gauss-Seidel: the wheels see the speed they must follow, so they
    // do not lag a step behind an accelerating body): f and its diagonal
    // d(omega_i')/d(omega_i) at (body_{n+1}, omega_n) by one forward difference (each
    // spin rate depends on its own spin only, so all four are perturbed at once), then
    // omega += dt f / (1 - dt J), J clipped at 0 (only decaying modes are damped). The
    // wheel mode decays monotonically at any step, so steps of milliseconds stay stable.
    const bool lagged = lag.inv_length > 0.0;
    for (int i = 0; i < kStateSize; ++i)
      if ((i < kW0 || i >= kW0 + 4) && !(lagged && i >= kTa0 && i < kTa0 + 4))
        s[i] += dt * k1[i];
    deriv(s, k2);
    tmp = s;
    double h[4];
    for (int i = 0; i < 4; ++i) {
      h[i] = 1e-6 * (1.0 + std::fabs(s[kW0 + i]));
      tmp[kW0 + i] += h[i];
    }
    wheel_deriv(tmp, k3);
    if (lagged) {  // toward the slip at the body's new state (Gauss-Seidel, as the wheels)
      const double x = fmax_inl(std::fabs(s[kVx]), lag.floor) * lag.inv_length * dt;
      const double phi = dt * (x > 1e-8 ? -std::expm1(-x) / x : 1.0 - 0.5 * x);
      for (int i = kTa0; i < kTa0 + 4; ++i) s[i] += phi * k2[i];
    }
    for (int pair = 0; pair < 2; ++pair) {
      const int i0 = 2 * pair, w0 = kW0 + i0, w1 = w0 + 1;
      // The diagonal by the forward difference: all wheels moved at once, so the coupling
      // (linear) moved by kc (h_other - h_own); that is taken out, and the coupling is
      // treated exactly below.
      const double kc = coupling.k[pair];
      const double dh = kc * (h[i0 + 1] - h[i0]);
      const double j0 = fmin_inl((k3[w0] - k2[w0] - dh) / h[i0], 0.0);
      const double j1 = fmin_inl((k3[w1] - k2[w1] + dh) / h[i0 + 1], 0.0);
      if (kc == 0.0) {
        s[w0] += dt * k2[w0] / (1.0 - dt * j0);
        s[w1] += dt * k2[w1] / (1.0 - dt * j1);
        continue;
      }
      // Linearly implicit with the coupling: (I - dt A) d = dt f, A = [[j0 - kc, kc],
      // [kc, j1 - kc]].
      const double a00 = 1.0 - dt * (j0 - kc), a11 = 1.0 - dt * (j1 - kc), off = -dt * kc;
      const double det = a00 * a11 - off * off;
      const double b0 = dt * k2[w0], b1 = dt * k2[w1];
      s[w0] += (a11 * b0 - off * b1) / det;
      s[w1] += (a00 * b1 - off * b0) / det;
    }
    return;
  }
  if (method == Integrator::Euler) {
    for (int i = 0; i < kStateSize; ++i) s[i] += dt * k1[i];
    return;
  }
  if (method == Integrator::Heun) {
    for (int i = 0; i < kStateSize; ++i) tmp[i] = s[i] + dt * k1[i];
    deriv(tmp, k2);
    for (int i = 0; i < kStateSize; ++i) s[i] += 0.5 * dt * (k1[i] + k2[i]);
    return;
  }
  for (int i = 0; i < kStateSize; ++i) tmp[i] = s[i] + 0.5 * dt * k1[i];
  deriv(tmp, k2);
  for (int i = 0; i < kStateSize; ++i) tmp[i] = s[i] + 0.5 * dt * k2[i];
  deriv(tmp, k3);
  for (int i = 0; i < kStateSize; ++i) tmp[i] = s[i] + dt * k3[i];
  deriv(tmp, k4);
  for (int i = 0; i < kStateSize; ++i)
    s[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
}

}  // namespace vdsim
