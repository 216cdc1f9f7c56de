// Robot driver for the chassis dyno: one pedal axis from a speed or an acceleration
// reference, with an optional ramped acceleration envelope, the openpilot-style hold and a
// transport delay line (docs/DYNO.md states the discrete laws).
//
// Speed mode: PI on e = v_ref' - v with conditional integration (I += e dt only while
// -max_brake < kp e + ki I < max_throttle), then p = clamp(kp e + ki I) with the updated
// integral. Accel mode: the same PI on e = a_ref - a_f, a_f = dv/dt through a first-order
// filter (lag.hpp's exact hold: a_f += (1 - exp(-dt / tau)) (a_raw - a_f)), a_ref clamped to the
// envelope. The pedal p in [-max_brake, max_throttle] gives throttle = max(p, 0),
// brake = max(-p, 0): never both. The delay line (schedule.hpp's DelayLine) returns the command of `delay_steps`
// calls ago, (0, 0) until one exists; `pedal` stays the fresh command.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "fminmax.hpp"
#include "lag.hpp"
#include "schedule.hpp"

namespace vdsim {

enum class DriverMode { Speed = 0, Accel = 1 };

struct RobotDriverParams {
  DriverMode mode = DriverMode::Speed;
  double kp = 0.45;              // speed mode [pedal/(m/s)]
  double ki = 0.25;              // [pedal/(m/s s)]
  double kp_accel = 0.05;        // accel mode [pedal/(m/s^2)]
  double ki_accel = 0.5;         // [pedal/(m/s)]
  double accel_filter_s = 0.1;   // measured-acceleration filter time constant [s]
  double max_throttle = 1.0;
  double max_brake = 1.0;
  double max_accel = std::numeric_limits<double>::infinity();  // envelope [m/s^2]
  double max_decel = std::numeric_limits<double>::infinity();  // positive [m/s^2]
  double standstill_ref = 0.05;  // [m/s]
  double standstill_brake = 0.3;  // [-]
  double ramp_band = 0.2;        // the ramp stays within v +- this [m/s]
  bool openpilot_hold = false;
  double stop_speed = 0.3;       // hold below this speed [m/s]
  double stop_accel = 0.1;       // while a_ref is below this [m/s^2]

  template <class Ar>
  void archive(Ar& ar) {
    ar(mode, kp, ki, kp_accel, ki_accel, accel_filter_s, max_throttle, max_brake, max_accel,
       max_decel, standstill_ref, standstill_brake, ramp_band, openpilot_hold, stop_speed,
       stop_accel);
  }

  bool envelope() const { return std::isfinite(max_accel) || std::isfinite(max_decel); }
};

struct Pedal {
  double throttle = 0.0, brake = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(throttle, brake); }
};

class RobotDriver {
 public:
  explicit RobotDriver(const RobotDriverParams& p = {}) : p_(p) {}

  void reset() {
    integral_ = 0.0;
    ramp_valid_ = false;
    ramp_ = 0.0;
    v_prev_valid_ = false;
    v_prev_ = 0.0;
    a_filt_ = 0.0;
    pedal_ = 0.0;
    line_.reset(Pedal{});
  }

  // One control step: the fresh command is computed (pedal()), the one that reaches the
  // car (delay_steps calls old) is returned. has_a_ref: a_ref is given.
  Pedal step(double v_ref, double v, double dt, double a_ref, bool has_a_ref,
             int64_t delay_steps) {
    return line_.push(compute(v_ref, v, dt, a_ref, has_a_ref), delay_steps);
  }

  double pedal() const { return pedal_; }
  double integral() const { return integral_; }
  double filtered_accel() const { return a_filt_; }
  double ramp() const { return ramp_valid_ ? ramp_ : std::numeric_limits<double>::quiet_NaN(); }
  const RobotDriverParams& params() const { return p_; }
  size_t line_size() const { return line_.size(); }
  template <class Ar>
  void archive(Ar& ar) {
    ar(p_, integral_, ramp_valid_, ramp_, v_prev_valid_, v_prev_, a_filt_, pedal_, line_);
  }

 private:
  Pedal compute(double v_ref, double v, double dt, double a_ref, bool has_a_ref) {
    // Measured acceleration (accel mode's feedback), filtered; 0 on the first call.
    const double a_raw = v_prev_valid_ ? (v - v_prev_) / dt : 0.0;
    v_prev_ = v;
    v_prev_valid_ = true;
    a_filt_ = lag_step(a_filt_, a_raw, lag_gain(dt, p_.accel_filter_s));
    const bool hold = p_.openpilot_hold && has_a_ref && v < p_.stop_speed &&
                      a_ref < p_.stop_accel;
    double e;
    if (p_.mode == DriverMode::Speed) {
      double ref = v_ref;
      if (p_.envelope()) {  // ramped setpoint from the measured speed
        if (!ramp_valid_) {
          ramp_ = v;
          ramp_valid_ = true;
        }
        const double base = std::clamp(ramp_, v - p_.ramp_band, v + p_.ramp_band);
        ramp_ = std::clamp(v_ref, base - p_.max_decel * dt, base + p_.max_accel * dt);
        ref = ramp_;
      }
      if ((ref <= p_.standstill_ref && v <= p_.standstill_ref) || hold) return standstill();
      e = ref - v;
    } else {
      const double a = std::clamp(a_ref, -p_.max_decel, p_.max_accel);
      if ((a <= 0.0 && v <= p_.standstill_ref) || hold) return standstill();
      e = a - a_filt_;
    }
    const double kp = p_.mode == DriverMode::Speed ? p_.kp : p_.kp_accel;
    const double ki = p_.mode == DriverMode::Speed ? p_.ki : p_.ki_accel;
    const double u = kp * e + ki * integral_;
    if (-p_.max_brake < u && u < p_.max_throttle) integral_ += e * dt;
    pedal_ = std::clamp(kp * e + ki * integral_, -p_.max_brake, p_.max_throttle);
    return split(pedal_);
  }

  Pedal standstill() {
    integral_ = 0.0;
    pedal_ = -p_.standstill_brake;
    return split(pedal_);
  }

  static Pedal split(double p) { return Pedal{fmax_inl(p, 0.0), fmax_inl(-p, 0.0)}; }

  RobotDriverParams p_;
  double integral_ = 0.0;
  bool ramp_valid_ = false;
  double ramp_ = 0.0;
  bool v_prev_valid_ = false;
  double v_prev_ = 0.0;
  double a_filt_ = 0.0;
  double pedal_ = 0.0;
  DelayLine<Pedal> line_;  // the transport delay: (0, 0) until a command is old enough
};

}  // namespace vdsim
