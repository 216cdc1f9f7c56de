// Longitudinal command -> per-wheel drive torque and brake capacity.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fminmax.hpp"
#include "params.hpp"
#include "schedule.hpp"
#include "state.hpp"

namespace vdsim {

// Splits axle torques to wheels: L1 keeps axle totals in slots 0/1, L2 halves each axle
// over its two wheels (open differential).
inline void split_axles(Level level, double front, double rear, std::array<double, 4>& out) {
  if (level == Level::L1) {
    out = {front, rear, 0.0, 0.0};
  } else {
    out = {0.5 * front, 0.5 * front, 0.5 * rear, 0.5 * rear};
  }
}

// Mean spin of the driven wheels, for the power cap [rad/s].
inline double driven_omega(const State& s, const VehicleParams& p, Level level) {
  const double fs = p.front_drive_share;
  if (level == Level::L1) return std::fabs(fs * s[kW0] + (1.0 - fs) * s[kW0 + 1]);
  return std::fabs(fs * 0.5 * (s[kW0] + s[kW0 + 1]) + (1.0 - fs) * 0.5 * (s[kW0 + 2] + s[kW0 + 3]));
}

// Maximum drive torque at the wheels at spin omega: torque cap, then power cap.
inline double drive_torque_cap(const VehicleParams& p, double omega) {
  return omega > 1e-3 ? fmin_inl(p.drive_torque_max, p.drive_power_max / omega)
                      : p.drive_torque_max;
}

// cos and sin of the last steer angle asked for, kept while it repeats bit for bit (a
// session's: the steer holds between commands, while every integration step and, with the
// continuous cascade, every derivative builds its inputs).
class SteerTrig {
 public:
  void get(double steer, double& c, double& s) {
    uint64_t b;
    std::memcpy(&b, &steer, sizeof b);
    if (!valid_ || b != bits_) {  // bits: -0.0 and 0.0 have sines of their own signs
      cos_ = std::cos(steer);
      sin_ = std::sin(steer);
      bits_ = b;
      valid_ = true;
    }
    c = cos_, s = sin_;
  }
  template <class Ar>
  void archive(Ar& ar) { ar(valid_, bits_, cos_, sin_); }

 private:
  bool valid_ = false;
  uint64_t bits_ = 0;
  double cos_ = 1.0, sin_ = 0.0;
};

inline WheelInputs wheel_inputs(const Command& c, double steer, Longitudinal mode, Level level,
                                const State& s, const VehicleParams& p, SteerTrig& trig) {
  WheelInputs in;
  in.steer = steer;
  trig.get(steer, in.cos_steer, in.sin_steer);
  double drive = 0.0, brake = 0.0;  // totals at the wheels [N m]
  if (mode == Longitudinal::Force) {
    const double t = c.longitudinal * p.wheel_radius;
    (t >= 0.0 ? drive : brake) = std::fabs(t);
  } else {
    const double pedal = std::clamp(c.longitudinal, -1.0, 1.0);
    if (pedal >= 0.0) drive = pedal * drive_torque_cap(p, driven_omega(s, p, level));
    else brake = -pedal * p.total_brake_torque();
  }
  split_axles(level, drive * p.front_drive_share, drive * (1.0 - p.front_drive_share), in.drive);
  split_axles(level, brake * p.front_brake_share, brake * (1.0 - p.front_brake_share), in.brake);
  return in;
}

}  // namespace vdsim
