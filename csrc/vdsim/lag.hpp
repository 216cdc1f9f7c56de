// First-order lags, one discretization for every one of them (the steering actuator's lag,
// the dyno's pedal actuator, the dyno's observed-acceleration filter, the robot driver's
// accel-mode filter, the sampled acceleration cascade's filter).
//
// A lag tau y' = u - y whose input u is held over a step of dt is advanced by its exact
// solution (the zero-order-hold discretization):
//   y_{k+1} = y_k + g (u_k - y_k),   g = 1 - exp(-dt / tau)   (tau <= 0: g = 1, y = u)
// It is exact for a held input at any dt, so a lag's time constant means the same at a
// 0.5 ms substep and a 50 ms driver step. (Backward Euler, g = dt / (tau + dt), lags
// more: at dt = tau / 2 its step response is 15 % slower to 63 %.)
#pragma once
#include <cmath>

namespace vdsim {

inline double lag_gain(double dt, double tau) {
  return tau > 0.0 ? 1.0 - std::exp(-dt / tau) : 1.0;
}

inline double lag_step(double y, double u, double gain) { return y + gain * (u - y); }

}  // namespace vdsim
