// Fixed-step explicit integrators over the plant state; the model is a callable
// deriv(state, ds). Kept separate from the models so the accuracy gate can swap them.
#pragma once
#include <cmath>

#include "params.hpp"
#include "state.hpp"

namespace vdsim {

// wheel_deriv(state, ds): the wheel-spin rates only (ds[kW0..kW0+3]), bit-identical to
// deriv's; the semi-implicit step's perturbed evaluation uses it (the default: deriv).
template <class Deriv, class WheelDeriv>
inline void integrate_step(Integrator method, State& s, double dt, Deriv&& deriv,
                           WheelDeriv&& wheel_deriv) {
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
    for (int i = 0; i < kStateSize; ++i)
      if (i < kW0 || i >= kW0 + 4) s[i] += dt * k1[i];
    deriv(s, k2);
    tmp = s;
    double h[4];
    for (int i = 0; i < 4; ++i) {
      h[i] = 1e-6 * (1.0 + std::fabs(s[kW0 + i]));
      tmp[kW0 + i] += h[i];
    }
    wheel_deriv(tmp, k3);
    for (int i = 0; i < 4; ++i) {
      const int w = kW0 + i;
      const double jac = std::fmin((k3[w] - k2[w]) / h[i], 0.0);
      s[w] += dt * k2[w] / (1.0 - dt * jac);
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

template <class Deriv>
inline void integrate_step(Integrator method, State& s, double dt, Deriv&& deriv) {
  integrate_step(method, s, dt, deriv, deriv);
}

}  // namespace vdsim
