// The acceleration-to-pedal cascade (longitudinal="accel"), run every integration step
// inside the session (every substep with the explicit integrators; with multirate
// stepping every step of up to max_step, dt its length: a 200 Hz controller at the
// default 5 ms, 2 kHz in the heun reference configuration): a target longitudinal acceleration a* [m/s^2] becomes a pedal in [-1, 1] that
// then drives the powertrain and brakes exactly as a pedal command does.
//
// Discrete law at step k (dt = the step's length), before the step is integrated:
//   a_raw   = (vx_k - vx_{k-1}) / dt - r_k vy_k      body-frame ax from the velocity state
//   a_m    += g (a_raw - a_m), g = 1 - exp(-dt/tau)  first-order filter (accel_filter_tau;
//                                                    lag.hpp, the exact hold)
//   F_ff    = m a* + F_drag(vx_k) + F_roll(vx_k)     the model's own resistance law, flat road
//   u_ff    = F_ff r_w / T_cap                       T_cap: drive torque cap at the driven
//                                                    wheels' spin (torque, then power) for
//                                                    F_ff >= 0, full brake torque below
//   u       = u_ff + kp (a* - a_m) + ki I
//   pedal   = clamp(u, -1, 1)
//   I      += (a* - a_m) dt   unless u is saturated and the error pushes further into it
//                             (conditional integration: the anti-windup)
// Gains and the filter constant are vehicle parameters (accel_kp, accel_ki,
// accel_filter_tau). At reset I = a_m = 0 and vx_{-1} = vx_0.
//
// With integrator="etd2" the cascade is the same law in continuous time, integrated with
// the vehicle (ContinuousCascade below): the sampled law's limit as the step shrinks (at
// the fine reference's 0.1 ms it is within its rounding). Sampled at a 5 ms step the law
// would be a 200 Hz controller whose measurement lags half a step (and whose filter was
// then discretized by backward Euler): on the ACC env's PID baseline that moved the hard-brake
// minimum gap and the time-gap error by up to 5 and 15 % at 200 ms of delay.
#pragma once
#include <algorithm>
#include <cmath>

#include "lag.hpp"
#include "model_common.hpp"
#include "params.hpp"
#include "powertrain.hpp"
#include "state.hpp"

namespace vdsim {

class AccelCascade {
 public:
  void reset(double vx0) {
    integral_ = 0.0;
    a_meas_ = 0.0;
    vx_prev_ = vx0;
  }

  // One substep: the pedal for target a_target at state s (updates filter and integral).
  double step(double a_target, const State& s, const VehicleParams& p,
              const LowSpeedParams& low, Level level, double dt) {
    const double a_raw = (s[kVx] - vx_prev_) / dt - s[kR] * s[kVy];
    vx_prev_ = s[kVx];
    a_meas_ = lag_step(a_meas_, a_raw, lag_gain(dt, p.accel_filter_tau));
    const double e = a_target - a_meas_;
    const double u = feed_forward(a_target, s, p, low, level) + p.accel_kp * e +
                     p.accel_ki * integral_;
    const double pedal = std::clamp(u, -1.0, 1.0);
    if (!((u > 1.0 && e > 0.0) || (u < -1.0 && e < 0.0))) integral_ += e * dt;
    return pedal;
  }

  // The pedal step() would give with the current filter and integral, without updating
  // them (the inputs a reset shows before the first substep).
  double preview(double a_target, const State& s, const VehicleParams& p,
                 const LowSpeedParams& low, Level level) const {
    const double e = a_target - a_meas_;
    return std::clamp(feed_forward(a_target, s, p, low, level) + p.accel_kp * e +
                          p.accel_ki * integral_, -1.0, 1.0);
  }

  static double feed_forward(double a_target, const State& s, const VehicleParams& p,
                             const LowSpeedParams& low, Level level) {
    const double f = p.mass * a_target + resistance_force(s[kVx], p.mass * kGravity, p, low);
    const double torque = f * p.wheel_radius;
    const double cap = torque >= 0.0 ? drive_torque_cap(p, driven_omega(s, p, level))
                                     : p.total_brake_torque();
    return cap > 0.0 ? torque / cap : (torque >= 0.0 ? 1.0 : -1.0);
  }

  double integral() const { return integral_; }
  double measured() const { return a_meas_; }
  template <class Ar>
  void archive(Ar& ar) { ar(integral_, a_meas_, vx_prev_); }

 private:
  double integral_ = 0.0;  // [m/s]
  double a_meas_ = 0.0;    // [m/s^2]
  double vx_prev_ = 0.0;   // [m/s]
};

// The cascade's law in continuous time: a_m = s[kAm] and I = s[kAi] are states.
//   a_m' = (a - a_m) / tau        a = dvx/dt - r vy, the CG's body-frame ax
//   I'   = a* - a_m               0 while u is saturated and the error pushes further in
//   pedal = clamp(u, -1, 1),  u = u_ff + kp (a* - a_m) + ki I
struct ContinuousCascade {
  static double command(double a_target, const State& s, const VehicleParams& p,
                        const LowSpeedParams& low, Level level) {
    return AccelCascade::feed_forward(a_target, s, p, low, level) +
           p.accel_kp * (a_target - s[kAm]) + p.accel_ki * s[kAi];
  }
  static double pedal(double a_target, const State& s, const VehicleParams& p,
                      const LowSpeedParams& low, Level level) {
    return std::clamp(command(a_target, s, p, low, level), -1.0, 1.0);
  }
  // ds[kAm], ds[kAi] from the vehicle's rates in ds (ds[kVx]) and the command u.
  static void rates(double a_target, double u, const State& s, const VehicleParams& p,
                    State& ds) {
    const double a = ds[kVx] - s[kR] * s[kVy];
    ds[kAm] = (a - s[kAm]) / p.accel_filter_tau;
    const double e = a_target - s[kAm];
    ds[kAi] = (u > 1.0 && e > 0.0) || (u < -1.0 && e < 0.0) ? 0.0 : e;
  }
};

}  // namespace vdsim
