// One simulated vehicle: state, integer clock, command schedule, steering actuator.
// C++ trusts its inputs; vdsim_gym validates them before they get here.
#pragma once
#include <vector>
#include <algorithm>
#include <cstdint>

#include "accel_cascade.hpp"
#include "actuator.hpp"
#include "integrator.hpp"
#include "params.hpp"
#include "schedule.hpp"
#include "state.hpp"
#include "model_common.hpp"

namespace vdsim {

// The step-size rule's default tolerance [m/s] for an integrator (docs/PHYSICS.md,
// "Step-size rule"): etd3's 2e-4 and etd2's 1e-4, each chosen with the noisy-command and
// closed-loop gates; the others have no rule (1e-4, unused).
inline double default_step_tol(Integrator m) { return m == Integrator::Etd3 ? 2e-4 : 1e-4; }

struct SimConfig {
  Level level = Level::L2;
  double substep_dt = 5e-4;  // [s]
  // The reference configuration; Python's default is etd3 with the step-size rule
  // (vdsim_gym/sim/plant.py, docs/PHYSICS.md).
  Integrator integrator = Integrator::Heun;
  Longitudinal longitudinal = Longitudinal::Force;
  ActuatorParams actuator{};
  int64_t actuator_dead_ticks = 0;
  LowSpeedParams low{};
  // Multirate: one integration step may span up to this many ticks between events (a
  // command's apply tick, the end of advance(); trace rows inside a step are interpolated
  // and never end one), so the time grid stays substep_dt while the physics steps longer.
  // 1 (default): every tick. With a steering actuator the steps stay one tick (its chain
  // runs per tick).
  int64_t step_ticks = 1;
  // etd2 and etd3 with multirate steps: the step-size rule's tolerance [m/s], the local
  // error a step may make in the body's velocities (the other states by their weights in
  // Session::step_error); 0: the integrator's default_step_tol. Steps are whole ticks from
  // 1 to step_ticks, sized by the error they make (docs/PHYSICS.md, "Step-size rule"). The
  // semi-implicit multirate steps are fixed (step_ticks).
  double step_tol = 0.0;
  // Per-channel actuation dead times [ticks]: a command's steer reaches the vehicle this
  // many ticks after the command applies (its apply tick, or command_now), its
  // longitudinal component after the other (e.g. electric power steering against
  // brake-by-wire). On top of computation latency, through command schedules of their own
  // (so multirate steps end at the channels' events too); 0 and 0: the command acts whole
  // at its apply tick, as before.
  int64_t steer_dead_ticks = 0;
  int64_t longitudinal_dead_ticks = 0;

  template <class Ar>
  void archive(Ar& ar) {
    ar(level, substep_dt, integrator, longitudinal, actuator, actuator_dead_ticks, low,
       step_ticks, step_tol, steer_dead_ticks, longitudinal_dead_ticks);
  }
};

class Session {
 public:
  Session(const VehicleParams& vehicle, const SimConfig& config);
  // A copy: the same parameters, state, clock, schedule and step-size memory (the rows of
  // a vector env are copies of its first). ctx_ points into the object, so the copy
  // rebinds it to its own parameters.
  Session(const Session& other);

  // Replaces the vehicle parameters and everything the session derives from them (the
  // axle tires with their compliance, the tire shape, the differentials' coupling, the
  // slip lag's law), exactly as the constructor does: after set_vehicle(p) and reset(...)
  // the session steps bit for bit as Session(p, config) reset the same way. The state,
  // clock, schedule and commands are kept (a reset() is what makes them consistent with
  // the new parameters: wheel spins, settled slips). Throws std::invalid_argument as
  // axle_tire does, leaving the session unchanged.
  void set_vehicle(const VehicleParams& vehicle);
  // Replaces the steering actuator chain (SimConfig::actuator and its dead time in ticks)
  // as the constructor builds it; its state restarts at the current steer. Switching the
  // chain on or off changes the stepping (with a chain every step is one tick).
  void set_actuator(const ActuatorParams& actuator, int64_t dead_ticks);
  // Replaces the channels' dead times [ticks] (SimConfig::steer_dead_ticks,
  // longitudinal_dead_ticks); reset() after (it empties the channels).
  void set_channel_delays(int64_t steer_ticks, int64_t longitudinal_ticks) {
    config_.steer_dead_ticks = steer_ticks;
    config_.longitudinal_dead_ticks = longitudinal_ticks;
  }

  // Places the vehicle with wheels rolling at vx; clears the schedule and the clock.
  void reset(double x, double y, double psi, double vx, double vy, double r,
             const Command& initial = Command{});
  // Replaces the command in force now (mode A); pending scheduled commands remain.
  void command_now(const Command& c) {
    schedule_.set_in_force(tick_, c, tick_);
    release(c);
  }
  void schedule(int64_t apply_tick, const Command& c, int64_t sample_tick = -1) {
    schedule_.push(apply_tick, c, sample_tick);
  }
  // The command in force and the pending ones, with their sample and apply ticks.
  const CommandSchedule& commands() const { return schedule_; }
  // Pending commands due after `tick` dropped (a network's stale packets); how many.
  size_t discard_after(int64_t tick) { return schedule_.discard_after(tick); }
  void drop_pending() { schedule_.clear(); }
  size_t pending() const { return schedule_.pending(); }

  // Advances n substeps: each first applies due commands, then integrates.
  void advance(int64_t n);

  int64_t tick() const { return tick_; }
  double time() const { return static_cast<double>(tick_) * config_.substep_dt; }
  const State& state() const { return state_; }
  void set_state(const State& s) { state_ = s; aux_valid_ = false; }
  // The command acting on the vehicle (after the channels' dead times).
  const Command& command() const { return command_; }
  double realized_steer() const { return steer_; }
  // Accelerations and tire forces at the current state under the current inputs.
  const Aux& aux();

  const VehicleParams& vehicle() const { return vehicle_; }
  const SimConfig& config() const { return config_; }

  // Trace recording (docs/TRACES.md). With decimation d > 0, a row of kTraceRowSize values
  // is recorded at every tick that is a multiple of d, at the start of its substep (the
  // state at that tick and the command that governs the substep from it): t, X, Y, psi,
  // vx, vy, r, ax, ay, realized steer, command steer, command longitudinal, then per wheel
  // slot (FL, FR, RL, RR; L1: front, rear, 0, 0) fx, fy, fz, kappa, alpha. 0: off. A reset
  // keeps the setting and clears the rows; changing the setting keeps them.
  static constexpr int kTraceRowSize = 12 + 4 * 5;
  void set_trace_decimation(int64_t d) {
    trace_decimation_ = d;  // the rows so far stay until take_trace() or reset()
  }
  int64_t trace_decimation() const { return trace_decimation_; }
  // The row of the current tick now, unless one was recorded at this tick (a run's end).
  // With multirate steps, rows inside a step are interpolated (they never end a step).
  void record_trace_row();
  // The rows recorded so far (moved out).
  std::vector<double> take_trace() {
    std::vector<double> out;
    out.swap(trace_);
    return out;
  }

 private:
  void deriv(const State& s, const WheelInputs& in, State& ds, Aux* aux,
             WheelPoints* pts = nullptr) const;
  // What the constructor and set_vehicle derive from vehicle_ (and config_).
  void derive_from_vehicle();
  // inputs_ from the command in force; in Accel mode through the cascade (substep: one
  // cascade step, else its preview without updating it).
  void update_inputs(bool substep, double dt = 0.0);
  // longitudinal = Accel with integrator = Etd2 or Etd3: the cascade in continuous time, its
  // states kAm, kAi integrated with the vehicle (accel_cascade.hpp).
  // The step-size rule (SimConfig::step_tol): the error of a step's correction c (etd2's
  // or etd3's embedded estimate) in units of the tolerance, max over the states that matter.
  double step_error(const State& c) const;
  // The retake of a step whose braked wheel locks inside it: its length [ticks] so that it
  // ends at the lock (the spin's zero crossing, interpolated), or m when none locks before.
  int64_t lock_ticks(int64_t m, const double omega_before[4], int n_wheels) const;
  int64_t step_next_ = 1;  // the next step's length [ticks] (the rule's proposal)
  int64_t step_redo_ = 0;  // a rejected step's retake length [ticks]
  bool redo_by_crossing_ = false;  // that retake ends at a brake's lock, not by the error
 public:
  // Integration steps taken and rejected since the last reset (the step-size rule's).
  int64_t steps_taken() const { return n_steps_; }
  int64_t steps_rejected() const { return n_rejected_; }
 private:
  int64_t n_steps_ = 0, n_rejected_ = 0;
  WheelPoints pts_;  // etd2, etd3: what the last step's start derivative captured (wheel_rates)
  State start_rates_{};  // etd2, etd3: the last step's start rates (a retaken step reuses them)
  Etd2Memo etd2_memo_;  // etd2, etd3: phi of the constant rates, kept between steps
  Etd2Memo etd3_half_memo_;  // etd3: the same at half the step
  SteerTrig steer_trig_;  // cos and sin of the steer, kept while it holds
  bool continuous_cascade() const {
    return config_.longitudinal == Longitudinal::Accel && exponential(config_.integrator);
  }

  VehicleParams vehicle_;
  SimConfig config_;
  ModelContext ctx_;
  WheelCoupling coupling_;  // the differentials' viscous coupling (L2)
  SlipLag lag_;  // the lagged slips' law, for semi_implicit (tire.relaxation_length > 0)
  State state_{};
  int64_t tick_ = 0;
  Command command_{};
  double steer_ = 0.0;
  WheelInputs inputs_{};
  CommandSchedule schedule_;
  // The channels' dead times: a released command's steer and longitudinal components,
  // each at its own tick (used only when a channel has a dead time).
  CommandSchedule steer_channel_, lon_channel_;
  // A command applies (its apply tick, or now): each channel takes its component after
  // its dead time, at once when it has none.
  void release(const Command& c) {
    if (config_.steer_dead_ticks > 0) steer_channel_.push(tick_ + config_.steer_dead_ticks, c);
    else command_.steer = c.steer;
    if (config_.longitudinal_dead_ticks > 0)
      lon_channel_.push(tick_ + config_.longitudinal_dead_ticks, c);
    else command_.longitudinal = c.longitudinal;
  }
  // The next tick after now at which a command applies or reaches a channel (-1: none).
  int64_t next_event() const {
    int64_t next = -1;
    for (int64_t t : {schedule_.next_tick(), steer_channel_.next_tick(), lon_channel_.next_tick()})
      if (t > tick_ && (next < 0 || t < next)) next = t;
    return next;
  }
  SteerActuator actuator_;
  Aux aux_{};
  bool aux_valid_ = false;
  AccelCascade cascade_;  // longitudinal = Accel only
  void append_trace_row(int64_t tick, const State& s);
  int64_t trace_decimation_ = 0, last_trace_tick_ = -1;
  std::vector<double> trace_;
  // Every member as it is: the copy constructor's, which then rebinds ctx_ (private: an
  // assignment would leave ctx_ pointing into the source). An env core's restore assigns
  // its session this way, then rebinds.
  Session& operator=(const Session&) = default;
  template <class Task>
  friend class EnvCore;
 public:
  // Points the model context at this session's own parameters (after a copy).
  void rebind_context() {
    ctx_.vehicle = &vehicle_;
    ctx_.low = &config_.low;
  }
  const AccelCascade& cascade() const { return cascade_; }

  // Every member, for the archive (archive.hpp: the env cores' pickling): the parameters,
  // what is derived from them (ctx_'s tires, lanes and shape, coupling_, lag_: written
  // as they are rather than derived again), the state, clock, schedules, channels, the
  // step-size rule's memory, the caches (pts_, the memos, steer_trig_, aux_: written, so
  // a loaded session continues from the same bits) and the trace rows. ctx_'s pointers
  // into this session are rebound after reading, as the copy constructor does.
  template <class Ar>
  void archive(Ar& ar) {
    ar(step_next_, step_redo_, redo_by_crossing_, n_steps_, n_rejected_, pts_, start_rates_,
       etd2_memo_, etd3_half_memo_, steer_trig_, vehicle_, config_, ctx_, coupling_, lag_,
       state_, tick_, command_, steer_, inputs_, schedule_, steer_channel_, lon_channel_,
       actuator_, aux_, aux_valid_, cascade_, trace_decimation_, last_trace_tick_, trace_);
    if constexpr (Ar::kReading) rebind_context();
  }
  // A session to read an archive into (its parameters are the archive's then).
  static Session blank() { return Session(VehicleParams{}, SimConfig{}); }
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
