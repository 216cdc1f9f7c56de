// The chassis dyno as an env-core plant: the bench (dyno.hpp), optionally the robot
// driver (robot_driver.hpp) and a pedal actuator, on the integer substep clock with the
// one command schedule (so computation latency applies to it as to the vehicle).
//
// Each substep of substep_dt (the driver's period): apply the commands whose tick has
// come; with a driver, command.longitudinal is its reference (v_ref [m/s] in speed mode,
// a_ref [m/s^2] in accel mode) and the driver's pedal, `delay_steps` substeps late, is
// used; without one, command.longitudinal is the pedal in [-1, 1]. The pedal actuator
// (first-order lag, rate limit; off by default) acts last; then the bench advances
// substep_dt (its own rule cuts that into ceil(substep_dt / max_substep) parts).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dyno.hpp"
#include "fminmax.hpp"
#include "interrupt.hpp"
#include "lag.hpp"
#include "robot_driver.hpp"
#include "schedule.hpp"

namespace vdsim {

struct PedalActuatorParams {
  bool enabled = false;
  double time_constant = 0.0;  // first-order lag of the pedal [s], 0 = none
  double rate_limit = std::numeric_limits<double>::infinity();  // [pedal/s]
  template <class Ar>
  void archive(Ar& ar) { ar(enabled, time_constant, rate_limit); }
};

struct DynoSimConfig {
  double substep_dt = 0.05;  // the driver's period [s]
  bool driver_on = true;
  RobotDriverParams driver;
  int64_t delay_steps = 0;   // the driver's transport delay in substeps
  PedalActuatorParams actuator;
  double accel_filter_s = 0.1;  // the observed acceleration's filter [s]
  template <class Ar>
  void archive(Ar& ar) {
    ar(substep_dt, driver_on, driver, delay_steps, actuator, accel_filter_s);
  }
};

class DynoSession {
 public:
  DynoSession(const DynoParams& bench, const DynoSimConfig& config)
      : bench_(bench), config_(config), driver_(config.driver),
        pedal_gain_(lag_gain(config.substep_dt, config.actuator.time_constant)),
        accel_gain_(lag_gain(config.substep_dt, config.accel_filter_s)) {}
  // A copy: the same bench, configuration and state (a vector env's rows).
  DynoSession(const DynoSession&) = default;
  DynoSession& operator=(const DynoSession&) = default;  // an env core's restore

  // Trace recording, as Session's: every `d` substeps a row of kTraceRowSize values at the
  // start of the substep: t, v, filtered accel, the command (reference or pedal), the
  // driver's fresh pedal, the pedal reaching the bench (after delay and actuator),
  // throttle, brake, the lagged front and rear axle torques.
  static constexpr int kTraceRowSize = 10;
  void set_trace_decimation(int64_t d) {
    trace_decimation_ = d;  // the rows so far stay until take_trace() or reset()
  }
  int64_t trace_decimation() const { return trace_decimation_; }
  void record_trace_row() {
    if (last_trace_tick_ == tick_) return;
    last_trace_tick_ = tick_;
    const double row[kTraceRowSize] = {time(), state_.v, a_filt_, command_.longitudinal,
                                       driver_.pedal(), pedal_, throttle_, brake_,
                                       state_.torque[0], state_.torque[1]};
    trace_.insert(trace_.end(), row, row + kTraceRowSize);
  }
  std::vector<double> take_trace() {
    std::vector<double> out;
    out.swap(trace_);
    return out;
  }

  void reset(double v0, const Command& initial = Command{}) {
    state_ = DynoState{};
    state_.v = v0;
    tick_ = 0;
    command_ = initial;
    schedule_.clear();
    schedule_.set_in_force(0, initial, -1);
    driver_.reset();
    line_.reset(0.0);
    pedal_ = throttle_ = brake_ = 0.0;
    a_filt_ = 0.0;
    energy_pos_ = distance_ = 0.0;
    trace_.clear();
    last_trace_tick_ = -1;
  }
  void command_now(const Command& c) {
    command_ = c;
    schedule_.set_in_force(tick_, c, tick_);
  }
  void schedule(int64_t apply_tick, const Command& c, int64_t sample_tick = -1) {
    schedule_.push(apply_tick, c, sample_tick);
  }
  const CommandSchedule& commands() const { return schedule_; }
  // Pending commands due after `tick` dropped (a network's stale packets); how many.
  size_t discard_after(int64_t tick) { return schedule_.discard_after(tick); }
  void drop_pending() { schedule_.clear(); }
  // The driver's transport delay [substeps] from the next substep on (a per-episode draw:
  // set it before reset(); the delay lines keep their history, which reset() clears).
  void set_delay_steps(int64_t n) { config_.delay_steps = n; }

  void advance(int64_t n) {
    const double dt = config_.substep_dt;
    for (int64_t i = 0; i < n; ++i) {
      poll_stop(i);  // a very long advance (a huge delay) can be interrupted
      schedule_.apply_due(tick_, command_);
      double th, br;
      if (config_.driver_on) {
        const bool accel = config_.driver.mode == DriverMode::Accel;
        const double ref = command_.longitudinal;
        const Pedal p = driver_.step(accel ? 0.0 : ref, state_.v, dt, accel ? ref : 0.0, accel,
                                     config_.delay_steps);
        th = p.throttle;
        br = p.brake;
      } else {  // the action is the pedal; a pedal-mode robot presses it delay_steps late
        double p = std::clamp(command_.longitudinal, -1.0, 1.0);
        // the driver's transport delay on the same DelayLine: 0 until one is old enough
        p = line_.push(p, config_.delay_steps);
        th = fmax_inl(p, 0.0);
        br = fmax_inl(-p, 0.0);
      }
      double p = th - br;
      if (config_.actuator.enabled) {
        const auto& a = config_.actuator;
        double next = lag_step(pedal_, p, pedal_gain_);
        const double step = a.rate_limit * dt;
        next = std::clamp(next, pedal_ - step, pedal_ + step);
        p = next;
        th = fmax_inl(p, 0.0);
        br = fmax_inl(-p, 0.0);
      }
      pedal_ = p;
      throttle_ = th;
      brake_ = br;
      if (trace_decimation_ > 0 && tick_ % trace_decimation_ == 0) record_trace_row();
      const double v0 = state_.v;
      dyno_step(bench_, state_, th, br, dt);
      const double v1 = state_.v;
      const double force = (state_.torque[0] + state_.torque[1]) / bench_.wheel_radius;
      energy_pos_ += fmax_inl(force * 0.5 * (v0 + v1), 0.0) * dt;  // tractive work [J]
      distance_ += 0.5 * (v0 + v1) * dt;
      a_filt_ = lag_step(a_filt_, state_.accel, accel_gain_);
      ++tick_;
    }
  }

  int64_t tick() const { return tick_; }
  double time() const { return static_cast<double>(tick_) * config_.substep_dt; }
  const DynoSimConfig& config() const { return config_; }
  const DynoParams& bench() const { return bench_; }
  const DynoState& state() const { return state_; }
  const RobotDriver& driver() const { return driver_; }
  const Command& command() const { return command_; }
  double speed() const { return state_.v; }
  double filtered_accel() const { return a_filt_; }
  double pedal() const { return pedal_; }  // reaching the car: throttle - brake
  double throttle() const { return throttle_; }
  double brake() const { return brake_; }
  double energy_pos() const { return energy_pos_; }  // [J] since reset
  double distance() const { return distance_; }      // [m] since reset

  // Every member, for the archive (archive.hpp): bench, configuration, the robot driver
  // with its delay line, the pedal-mode line, state, clock, schedule and trace rows.
  template <class Ar>
  void archive(Ar& ar) {
    ar(bench_, config_, driver_, line_, state_, tick_, command_, schedule_, pedal_, throttle_,
       brake_, a_filt_, energy_pos_, distance_, pedal_gain_, accel_gain_, trace_decimation_,
       last_trace_tick_, trace_);
  }
  // A session to read an archive into.
  static DynoSession blank() { return DynoSession(DynoParams{}, DynoSimConfig{}); }

 private:
  DynoParams bench_;
  DynoSimConfig config_;
  RobotDriver driver_;
  DelayLine<double> line_;  // pedal-mode transport delay (no driver law)
  DynoState state_{};
  int64_t tick_ = 0;
  Command command_{};
  CommandSchedule schedule_;
  double pedal_ = 0.0, throttle_ = 0.0, brake_ = 0.0, a_filt_ = 0.0;
  double energy_pos_ = 0.0, distance_ = 0.0;
  double pedal_gain_ = 1.0, accel_gain_ = 1.0;  // lag.hpp gains at substep_dt
  int64_t trace_decimation_ = 0, last_trace_tick_ = -1;
  std::vector<double> trace_;
};

}  // namespace vdsim
