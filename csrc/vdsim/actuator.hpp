// Steering actuator chain run once per substep: dead time (the one DelayLine of
// schedule.hpp) -> first-order lag (lag.hpp: exact
// zero-order-hold discretization) -> rate limit -> saturation.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "lag.hpp"
#include "params.hpp"
#include "schedule.hpp"

namespace vdsim {

class SteerActuator {
 public:
  SteerActuator() = default;
  SteerActuator(const ActuatorParams& p, double dt, int64_t dead_ticks)
      : p_(p), dt_(dt), dead_(dead_ticks, 0.0) {
    alpha_ = lag_gain(dt, p.time_constant);
    max_step_ = p.rate_limit * dt;
  }

  void reset(double value) {
    dead_.reset(value);  // the reset value comes out until a request is dead_ticks old
    lag_ = out_ = std::clamp(value, -p_.max_angle, p_.max_angle);
  }

  // Feeds this substep's request and returns the realized angle for this substep.
  double step(double request) {
    const double delayed = dead_.push(request);  // the request of dead_ticks substeps ago
    lag_ = lag_step(lag_, delayed, alpha_);
    const double limited = out_ + std::clamp(lag_ - out_, -max_step_, max_step_);
    out_ = std::clamp(limited, -p_.max_angle, p_.max_angle);
    return out_;
  }
  template <class Ar>
  void archive(Ar& ar) { ar(p_, dt_, dead_, alpha_, max_step_, lag_, out_); }

 private:
  ActuatorParams p_{};
  double dt_ = 0.0;
  DelayLine<double> dead_;
  double alpha_ = 1.0, max_step_ = 0.0, lag_ = 0.0, out_ = 0.0;
};

}  // namespace vdsim
