#include "session.hpp"

#include <cmath>

#include "integrator.hpp"
#include "interrupt.hpp"
#include "model_l1.hpp"
#include "model_l2.hpp"
#include "powertrain.hpp"

namespace vdsim {

Session::Session(const VehicleParams& vehicle, const SimConfig& config)
    : vehicle_(vehicle), config_(config) {
  if (!(config_.step_tol > 0.0)) config_.step_tol = default_step_tol(config_.integrator);
  ctx_.vehicle = &vehicle_;
  ctx_.low = &config_.low;
  derive_from_vehicle();
  actuator_ = SteerActuator(config_.actuator, config_.substep_dt, config_.actuator_dead_ticks);
  reset(0, 0, 0, 0, 0, 0);
}

Session::Session(const Session& other) {
  *this = other;
  rebind_context();
}

void Session::derive_from_vehicle() {
  // Both axle tires first: axle_tire may throw, and then nothing has changed.
  const TireParams front = axle_tire(vehicle_, 0), rear = axle_tire(vehicle_, 1);
  ctx_.tire[0] = front;
  ctx_.tire[1] = rear;
  ctx_.lanes = TireLanes::of(front, rear);
  ctx_.shape = TireShape::from(vehicle_.tire);
  ctx_.shape.use_fast(config_.integrator == Integrator::SemiImplicit ||
                          exponential(config_.integrator),
                      vehicle_.tire);
  ctx_.shape.use_fast_algebra(exponential(config_.integrator), vehicle_.tire);
  ctx_.inv_mass = 1.0 / vehicle_.mass;
  ctx_.inv_yaw_inertia = 1.0 / vehicle_.yaw_inertia;
  ctx_.inv_r2 = 1.0 / (vehicle_.wheel_radius * vehicle_.wheel_radius);
  coupling_ = WheelCoupling{};
  if (config_.level == Level::L2) {  // L1's axle wheels have no differential
    coupling_.k[0] = vehicle_.diff_coupling_front / vehicle_.wheel_inertia;
    coupling_.k[1] = vehicle_.diff_coupling_rear / vehicle_.wheel_inertia;
  }
  lag_ = SlipLag{};
  if (vehicle_.tire.relaxation_length > 0.0)
    lag_ = {1.0 / vehicle_.tire.relaxation_length, config_.low.slip_speed_floor};
  aux_valid_ = false;
}

void Session::set_vehicle(const VehicleParams& vehicle) {
  // Validate on a copy first (axle_tire throws for a bad compliance), so that a refused
  // vehicle leaves this session as it was.
  axle_tire(vehicle, 0);
  axle_tire(vehicle, 1);
  vehicle_ = vehicle;
  derive_from_vehicle();
}

void Session::set_actuator(const ActuatorParams& actuator, int64_t dead_ticks) {
  config_.actuator = actuator;
  config_.actuator_dead_ticks = dead_ticks;
  actuator_ = SteerActuator(config_.actuator, config_.substep_dt, config_.actuator_dead_ticks);
  actuator_.reset(steer_);
}

void Session::reset(double x, double y, double psi, double vx, double vy, double r,
                    const Command& initial) {
  state_.fill(0.0);
  state_[kX] = x;
  state_[kY] = y;
  state_[kPsi] = psi;
  state_[kVx] = vx;
  state_[kVy] = vy;
  state_[kR] = r;
  for (int i = 0; i < 4; ++i) state_[kW0 + i] = vx / vehicle_.wheel_radius;
  if (config_.level == Level::L1) state_[kW0 + 2] = state_[kW0 + 3] = 0.0;
  tick_ = 0;
  command_ = initial;
  schedule_.clear();
  schedule_.set_in_force(0, initial, -1);
  steer_channel_.clear();
  lon_channel_.clear();
  actuator_.reset(initial.steer);
  steer_ = initial.steer;
  cascade_.reset(vx);
  update_inputs(false);
  aux_valid_ = false;
  if (vehicle_.tire.relaxation_length > 0.0) {  // the lagged slips start settled
    const Aux& a = aux();
    for (int i = 0; i < 4; ++i) state_[kTa0 + i] = a.wheel[i].tan_alpha_kin;
    aux_valid_ = false;
  }
  trace_.clear();
  last_trace_tick_ = -1;
  step_next_ = config_.step_ticks;
  step_redo_ = 0;
  redo_by_crossing_ = false;
  n_steps_ = n_rejected_ = 0;
}

void Session::record_trace_row() { append_trace_row(tick_, state_); }

void Session::append_trace_row(int64_t tick, const State& s) {
  if (last_trace_tick_ == tick) return;
  last_trace_tick_ = tick;
  Aux a;
  State ds;
  deriv(s, inputs_, ds, &a);
  const double row[12] = {static_cast<double>(tick) * config_.substep_dt, s[kX], s[kY],
                          s[kPsi], s[kVx], s[kVy], s[kR], a.ax, a.ay, steer_,
                          command_.steer, command_.longitudinal};
  trace_.insert(trace_.end(), row, row + 12);
  for (const WheelOut& w : a.wheel) {
    const double wr[5] = {w.fx, w.fy, w.fz, w.kappa, w.alpha};
    trace_.insert(trace_.end(), wr, wr + 5);
  }
}

void Session::update_inputs(bool substep, double dt) {
  if (config_.longitudinal != Longitudinal::Accel) {
    inputs_ = wheel_inputs(command_, steer_, config_.longitudinal, config_.level, state_,
                           vehicle_, steer_trig_);
    return;
  }
  Command c = command_;  // the target acceleration becomes a pedal, then as a pedal command
  if (continuous_cascade()) {  // the pedal of the cascade's states (ContinuousCascade)
    c.longitudinal = ContinuousCascade::pedal(command_.longitudinal, state_, vehicle_,
                                              config_.low, config_.level);
    inputs_ = wheel_inputs(c, steer_, Longitudinal::Pedal, config_.level, state_, vehicle_,
                         steer_trig_);
    return;
  }
  c.longitudinal =
      substep ? cascade_.step(command_.longitudinal, state_, vehicle_, config_.low,
                              config_.level, dt > 0.0 ? dt : config_.substep_dt)
              : cascade_.preview(command_.longitudinal, state_, vehicle_, config_.low,
                                 config_.level);
  inputs_ = wheel_inputs(c, steer_, Longitudinal::Pedal, config_.level, state_, vehicle_,
                         steer_trig_);
}

void Session::deriv(const State& s, const WheelInputs& in, State& ds, Aux* aux,
                    WheelPoints* pts) const {
  if (config_.level == Level::L1) deriv_l1(s, in, ctx_, ds, aux, pts);
  else deriv_l2(s, in, ctx_, ds, aux, pts);
}

void Session::advance(int64_t n) {
  const int n_wheels = config_.level == Level::L1 ? 2 : 4;
  const int64_t end = tick_ + n;
  const bool multirate = config_.step_ticks > 1 && !config_.actuator.enabled;
  // etd2's and etd3's steps are sized by the error they make (step_error); a rejected step
  // is retaken from the same state with the same inputs: its start derivative (rates and
  // pts_) stands, only the step length changes.
  const bool adaptive = multirate && exponential(config_.integrator);
  const bool third_order = config_.integrator == Integrator::Etd3;
  // etd3 on one-tick steps (a steering actuator runs per tick, or max_step is one substep)
  // takes etd2's step: at 0.5 ms the second order is within the reference's rounding, the
  // rule is off, and the third stage would cost half as much again for nothing.
  const Integrator method = third_order && !multirate ? Integrator::Etd2 : config_.integrator;
  bool retake = false;
  for (int64_t k = 0; tick_ < end; ++k) {
    poll_stop(k);  // a very long advance (a huge delay) can be interrupted
    if (config_.steer_dead_ticks == 0 && config_.longitudinal_dead_ticks == 0) {
      schedule_.apply_due(tick_, command_);
    } else {
      Command released;
      if (schedule_.apply_due(tick_, released)) release(released);
      Command c;
      if (steer_channel_.apply_due(tick_, c)) command_.steer = c.steer;
      if (lon_channel_.apply_due(tick_, c)) command_.longitudinal = c.longitudinal;
    }
    // This step's length in ticks: the rule's proposal (etd2) or step_ticks, ending at the
    // next event and at the end of the advance. etd2's steps also end at every multiple of
    // step_ticks, so that where a caller's advance() stops on that grid (a control
    // period's tick) changes no step: the env form and the callback form, which stop at
    // different sample ticks, integrate alike. Trace rows do not end steps (recording must
    // not change a run): a row inside a step is interpolated below.
    int64_t m = 1;
    bool cut = false;  // the step ends at an event, the advance's end or a lock, not by the rule
    if (multirate) {
      const int64_t want = !adaptive ? config_.step_ticks : step_redo_ > 0 ? step_redo_
                                                                           : step_next_;
      m = std::min(want, end - tick_);
      if (adaptive) m = std::min(m, (tick_ / config_.step_ticks + 1) * config_.step_ticks - tick_);
      const int64_t next = next_event();
      if (next > tick_) m = std::min(m, next - tick_);
      cut = m < want || (step_redo_ > 0 && redo_by_crossing_);
      step_redo_ = 0;
    }
    const double dt = config_.substep_dt * static_cast<double>(m);
    steer_ = config_.actuator.enabled ? actuator_.step(command_.steer) : command_.steer;
    update_inputs(true, dt);
    if (trace_decimation_ > 0 && tick_ % trace_decimation_ == 0) record_trace_row();
    // The step's start, kept for a retake and for trace rows interpolated inside it.
    const bool interpolate = m > 1 && trace_decimation_ > 0;
    const bool reuse = exponential(config_.integrator);
    const bool may_redo = adaptive && m > 1;
    State start;
    if (interpolate || may_redo) start = state_;
    double omega_before[4];
    for (int i = 0; i < n_wheels; ++i) omega_before[i] = state_[kW0 + i];
    // A spinning braked wheel feels the full brake against its spin at the start of the
    // substep for the whole substep. Re-deciding the sign in every integrator stage lets
    // the stages straddle omega = 0 and average to a spurious spin that drives the car
    // against the brake; the sign-crossing snap below ends the substep at omega = 0.
    auto fix_brake_sign = [&](WheelInputs& w) {
      for (int i = 0; i < n_wheels; ++i) {
        if (w.brake[i] > 0.0 && omega_before[i] != 0.0) {
          w.drive[i] -= std::copysign(w.brake[i], omega_before[i]);
          w.brake[i] = 0.0;
        }
      }
    };
    WheelInputs in = inputs_;
    fix_brake_sign(in);
    // With the continuous cascade the pedal is a function of the state, so every
    // evaluation builds its own inputs (the brake's sign fixed as above).
    const bool cascade = continuous_cascade();
    auto full_deriv = [&](const State& s, State& ds, WheelPoints* pts) {
      if (!cascade) {
        deriv(s, in, ds, nullptr, pts);
        return;
      }
      const double target = command_.longitudinal;
      const double u = ContinuousCascade::command(target, s, vehicle_, config_.low,
                                                  config_.level);
      Command c = command_;
      c.longitudinal = std::clamp(u, -1.0, 1.0);
      WheelInputs w = wheel_inputs(c, steer_, Longitudinal::Pedal, config_.level, s, vehicle_,
                                   steer_trig_);
      fix_brake_sign(w);
      deriv(s, w, ds, nullptr, pts);
      ContinuousCascade::rates(target, u, s, vehicle_, ds);
    };
    // etd2 perturbs the spins at the state of its last full derivative only: its wheel
    // rates reuse that evaluation's loads, hub speeds and slip angles (wheel_rates).
    WheelPoints& pts = pts_;  // a member: every start derivative fills it
    const bool start_ready = reuse && retake;
    retake = false;
    State correction;
    integrate_step(
        method, state_, dt,
        [&](const State& s, State& ds) { full_deriv(s, ds, reuse ? &pts : nullptr); },
        [&](const State& s, State& ds) {
          if (reuse) wheel_rates(pts, s, ctx_, ds);
          else if (config_.level == Level::L1) deriv_l1_wheels(s, in, ctx_, ds);
          else deriv_l2_wheels(s, in, ctx_, ds);
        },
        [&](const State&) -> const HubCoupling& { return pts.hub; },
        [&](const State& s, State& ds) { full_deriv(s, ds, nullptr); },  // etd2's end
        coupling_, lag_, 1.0 / vehicle_.load_transfer_tau,
        cascade ? 1.0 / vehicle_.accel_filter_tau : 0.0, &etd2_memo_,
        reuse ? &start_rates_ : nullptr, start_ready, adaptive ? &correction : nullptr,
        &etd3_half_memo_);
    if (adaptive) {
      // The step-size rule: a step whose error exceeds the tolerance is taken again,
      // shorter; one through a braked wheel's lock is taken again to end at the lock.
      const double err = step_error(correction);
      // The correction is etd2's first-order predictor's error, O(dt^2), or etd3's
      // second-order embedded solution's, O(dt^3).
      const double fac = err > 0.0 ? std::clamp(third_order ? 0.9 / std::cbrt(err)
                                                            : 0.9 / std::sqrt(err), 0.2, 5.0)
                                   : 5.0;
      int64_t redo = m;
      bool crossing = false;
      if (m > 1) {
        redo = lock_ticks(m, omega_before, n_wheels);
        crossing = redo < m;
        if (err > 1.0) {
          const int64_t k = std::clamp<int64_t>(
              static_cast<int64_t>(static_cast<double>(m) * fac), 1, m - 1);
          if (k < redo) redo = k, crossing = false;
        }
      }
      if (redo < m) {
        state_ = start;
        step_redo_ = redo;
        redo_by_crossing_ = crossing;
        retake = true;
        ++n_rejected_;
        continue;
      }
      const int64_t prop = std::clamp<int64_t>(
          static_cast<int64_t>(static_cast<double>(m) * fac), 1, config_.step_ticks);
      // A step cut short says nothing against a longer proposal.
      step_next_ = cut && fac >= 1.0 ? std::max(step_next_, prop) : prop;
    }
    ++n_steps_;
    // A braked wheel whose spin reaches or crosses zero within the step stops there and
    // holds.
    for (int i = 0; i < n_wheels; ++i) {
      const double w = state_[kW0 + i];
      if (inputs_.brake[i] > 0.0 && omega_before[i] != 0.0 && w * omega_before[i] <= 0.0)
        state_[kW0 + i] = 0.0;
    }
    // Rows at ticks strictly inside a multirate step: the state linearly interpolated
    // between the step's ends (the first-order method's own dense output), the forces
    // evaluated there under the step's inputs.
    if (interpolate) {
      const int64_t d = trace_decimation_;
      for (int64_t t = (tick_ / d + 1) * d; t < tick_ + m; t += d) {
        const double w = static_cast<double>(t - tick_) / static_cast<double>(m);
        State mid;
        for (int i = 0; i < kStateSize; ++i) mid[i] = start[i] + w * (state_[i] - start[i]);
        append_trace_row(t, mid);
      }
    }
    tick_ += m;
  }
  // The continuous cascade's pedal is a function of the state: what the vehicle feels at
  // the end of the advance (observations, aux, trace rows) is the pedal of the end state.
  if (continuous_cascade()) update_inputs(false);
  aux_valid_ = false;
}

int64_t Session::lock_ticks(int64_t m, const double omega_before[4], int n_wheels) const {
  // A braked wheel whose spin reached or crossed zero within the step: the tick of the
  // crossing by linear interpolation of the spin (rounded up: the step ends at or just
  // past it, where the snap holds the wheel).
  int64_t ticks = m;
  for (int i = 0; i < n_wheels; ++i) {
    const double w = state_[kW0 + i], w0 = omega_before[i];
    if (!(inputs_.brake[i] > 0.0 && w0 != 0.0 && w * w0 <= 0.0)) continue;
    const double at = std::ceil(static_cast<double>(m) * (w0 / (w0 - w)));
    ticks = std::min(ticks, std::max<int64_t>(1, static_cast<int64_t>(at)));
  }
  return ticks;
}

double Session::step_error(const State& c) const {
  // The local error allowed per step is step_tol [m/s] in the body's velocities; the other
  // states' tolerances are scaled by what their error does to the body:
  // - the yaw rate [rad/s]: by a 2 m lever (about the CG-to-axle distances);
  // - each wheel's slip velocity u_i = R omega_i - et_i . (vx, vy, r) [m/s]: 100 times the
  //   body's, since a slip-velocity error carries the wheel's momentum I du / R^2, about
  //   1/100 of the car's per m/s, and relaxes within milliseconds;
  // - the load-transfer lags [m/s^2]: 500 times (a load error moves the forces by its share
  //   of the load, for the lag's 20 ms);
  // - the lagged slips' tan(alpha): 2.5 times (a side-force error C_alpha dta acts for the
  //   lag's sigma / v);
  // - the cascade's filter [m/s^2] and integral [m/s]: 10 and 1 times.
  // Chosen with the noisy-command gate and the closed-loop gate (docs/PHYSICS.md).
  double e = std::max(std::fabs(c[kVx]), std::fabs(c[kVy]));
  e = std::max(e, 2.0 * std::fabs(c[kR]));
  const HubCoupling& h = pts_.hub;
  for (int i = 0; i < h.n_wheels; ++i) {
    const double du = h.radius * c[kW0 + i] -
                      (h.et[i][0] * c[kVx] + h.et[i][1] * c[kVy] + h.et[i][2] * c[kR]);
    e = std::max(e, 0.01 * std::fabs(du));
  }
  e = std::max(e, 0.002 * std::max(std::fabs(c[kAxF]), std::fabs(c[kAyF])));
  for (int i = kTa0; i < kTa0 + 4; ++i) e = std::max(e, 0.4 * std::fabs(c[i]));
  e = std::max(e, std::max(0.1 * std::fabs(c[kAm]), std::fabs(c[kAi])));
  return e / config_.step_tol;
}

const Aux& Session::aux() {
  if (!aux_valid_) {
    State ds;
    deriv(state_, inputs_, ds, &aux_);
    aux_valid_ = true;
  }
  return aux_;
}

}  // namespace vdsim
