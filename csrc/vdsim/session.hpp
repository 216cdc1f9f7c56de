// One simulated vehicle: state, integer clock, command schedule, steering actuator.
// C++ trusts its inputs; vdsim_gym validates them before they get here.
#pragma once
#include <algorithm>
#include <cstdint>

#include "accel_cascade.hpp"
#include "actuator.hpp"
#include "params.hpp"
#include "schedule.hpp"
#include "state.hpp"
#include "model_common.hpp"

namespace vdsim {

struct SimConfig {
  Level level = Level::L2;
  double substep_dt = 5e-4;  // [s]
  Integrator integrator = Integrator::Heun;  // chosen by the accuracy gate (docs/PHYSICS.md)
  Longitudinal longitudinal = Longitudinal::Force;
  ActuatorParams actuator{};
  int64_t actuator_dead_ticks = 0;
  LowSpeedParams low{};
};

class Session {
 public:
  Session(const VehicleParams& vehicle, const SimConfig& config);
  // ctx_ points into this object, so a copy would read the original's parameters.
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Places the vehicle with wheels rolling at vx; clears the schedule and the clock.
  void reset(double x, double y, double psi, double vx, double vy, double r,
             const Command& initial = Command{});
  // Replaces the command in force now (mode A); pending scheduled commands remain.
  void command_now(const Command& c) { command_ = c; }
  void schedule(int64_t apply_tick, const Command& c) { schedule_.push(apply_tick, c); }
  void drop_pending() { schedule_.clear(); }
  size_t pending() const { return schedule_.pending(); }

  // Advances n substeps: each first applies due commands, then integrates.
  void advance(int64_t n);

  int64_t tick() const { return tick_; }
  double time() const { return static_cast<double>(tick_) * config_.substep_dt; }
  const State& state() const { return state_; }
  void set_state(const State& s) { state_ = s; aux_valid_ = false; }
  const Command& command() const { return command_; }
  double realized_steer() const { return steer_; }
  // Accelerations and tire forces at the current state under the current inputs.
  const Aux& aux();

  const VehicleParams& vehicle() const { return vehicle_; }
  const SimConfig& config() const { return config_; }

 private:
  void deriv(const State& s, const WheelInputs& in, State& ds, Aux* aux) const;
  // inputs_ from the command in force; in Accel mode through the cascade (substep: one
  // cascade step, else its preview without updating it).
  void update_inputs(bool substep);

  VehicleParams vehicle_;
  SimConfig config_;
  ModelContext ctx_;
  State state_{};
  int64_t tick_ = 0;
  Command command_{};
  double steer_ = 0.0;
  WheelInputs inputs_{};
  CommandSchedule schedule_;
  SteerActuator actuator_;
  Aux aux_{};
  bool aux_valid_ = false;
  AccelCascade cascade_;  // longitudinal = Accel only
 public:
  const AccelCascade& cascade() const { return cascade_; }
};

// The longitudinal command of an env action a in [-1, 1] (clamped), per the session's
// mode: the pedal itself, a force [N] at a's share of full drive (a >= 0) or full brake
// torque at the wheels, or a target acceleration at a's share of max_acceleration (a >= 0)
// or max_deceleration. Shared by every task on the vehicle session.
inline double longitudinal_from_action(const Session& plant, double a) {
  a = std::clamp(a, -1.0, 1.0);
  if (plant.config().longitudinal == Longitudinal::Pedal) return a;
  const VehicleParams& p = plant.vehicle();
  if (plant.config().longitudinal == Longitudinal::Accel)  // a target [m/s^2]
    return a >= 0.0 ? a * p.max_acceleration : a * p.max_deceleration;
  const double torque = a >= 0.0 ? p.drive_torque_max : p.total_brake_torque();
  return a * torque / p.wheel_radius;
}

}  // namespace vdsim
