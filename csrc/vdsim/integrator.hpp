// Fixed-step explicit integrators over the plant state; the model is a callable
// deriv(state, ds). Kept separate from the models so the accuracy gate can swap them.
#pragma once
#include "params.hpp"
#include "state.hpp"

namespace vdsim {

template <class Deriv>
inline void integrate_step(Integrator method, State& s, double dt, Deriv&& deriv) {
  State k1, k2, k3, k4, tmp;
  deriv(s, k1);
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
