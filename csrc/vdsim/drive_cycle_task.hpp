// Drive-cycle tracking on the chassis dyno (VDSim-Dyno-v0): the agent commands the robot
// driver (a speed or an acceleration reference, or the pedal itself when the bench has no
// driver) to follow a cycle's speed; docs/ENVS.md, "Dyno".
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dyno_session.hpp"
#include "env_core.hpp"
#include "fminmax.hpp"

namespace vdsim {

enum class CycleAction { Speed = 0, Accel = 1, Pedal = 2 };

// Cycle preview offsets of the observation [s] (rounded to whole control periods).
constexpr std::array<double, 6> kCyclePreviewS = {0.0, 0.5, 1.0, 2.0, 3.0, 5.0};

struct DriveCycleParams {
  int64_t ticks_per_period = 2;
  CycleAction action = CycleAction::Speed;
  double ref_speed_max = 40.0;  // speed action: v_ref = (a + 1) / 2 * this [m/s]
  double ref_accel_max = 2.0;   // accel action: a_ref = a * this for a >= 0 [m/s^2]
  double ref_decel_max = 3.0;   // and a * this for a < 0
  double w_tracking = 1.0;      // -w ((v - v_cycle) / 2 m/s)^2
  double w_pedal_jerk = 0.1;    // -w (pedal change over the step)^2
  double w_energy = 0.05;       // -w (positive tractive work over the step [kJ])
  // Observe the robot driver's transport delay [s] (a column "driver_delay" after
  // prev_action): what the rig's owner knows of it, so one policy can serve a range.
  bool observe_driver_delay = false;

  template <class Ar>
  void archive(Ar& ar) {
    ar(ticks_per_period, action, ref_speed_max, ref_accel_max, ref_decel_max, w_tracking,
       w_pedal_jerk, w_energy, observe_driver_delay);
  }
};

class DriveCycleTask {
 public:
  using Plant = DynoSession;
  using Params = DriveCycleParams;
  using ResetState = std::array<double, 1>;  // v0 [m/s]
  static constexpr int kActionSize = 1;
  static constexpr int kNonFinite = 4;  // flag bit

  static constexpr int kBaseObs = 10;  // without the driver's delay
  static constexpr int kMaxObs = kBaseObs + 1;
  static constexpr int kMaxPhases = 4;  // a cycle's phases with their own summary

  DriveCycleTask(const Params& params, const DynoSession& plant) : params_(params) {
    const double tc = static_cast<double>(params.ticks_per_period) * plant.config().substep_dt;
    for (size_t i = 0; i < kCyclePreviewS.size(); ++i)
      offsets_[i] = nearest_ticks(kCyclePreviewS[i], tc);  // periods ahead
  }

  static EnvSpec spec(const Params& params) {
    EnvSpec e;
    e.obs_names = {"cycle_0s", "cycle_0.5s", "cycle_1s", "cycle_2s", "cycle_3s",
                   "cycle_5s", "speed", "accel", "pedal", "prev_action"};
    if (params.observe_driver_delay) e.obs_names.emplace_back("driver_delay");
    // One name for both driver modes, so envs of either mode share a vector batch.
    e.action_names = {params.action == CycleAction::Pedal ? "pedal" : "reference"};
    e.term_names = {"tracking", "pedal_jerk", "energy"};
    const Params d{};  // in term_names' order
    e.default_weights = {d.w_tracking, d.w_pedal_jerk, d.w_energy};
    e.info_names = {"reward", "speed", "cycle_speed", "speed_error", "pedal", "throttle",
                    "brake", "torque_front", "torque_rear", "t", "phase", "out_of_band"};
    e.summary_names = {"rms_speed_error", "max_abs_speed_error", "energy_wh", "distance_m",
                       "trace_violations_s", "cycle_index"};
    for (int p = 0; p < kMaxPhases; ++p)
      e.summary_names.push_back("phase_rms_speed_error_" + std::to_string(p));
    for (int p = 0; p < kMaxPhases; ++p)
      e.summary_names.push_back("phase_trace_violations_s_" + std::to_string(p));
    e.flags = {{"non_finite", kNonFinite}};
    return e;
  }
  // The cycle previews and the speed / 30 m/s, the filtered acceleration / 3 m/s^2, the
  // pedal, the previous action and the driver's delay [s] as they are.
  void obs_scale(const DynoSession&, double* out) const {
    const double s[kMaxObs] = {30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 30.0, 3.0, 1.0, 1.0, 1.0};
    std::copy(s, s + n_obs(), out);
  }
  int n_obs() const { return params_.observe_driver_delay ? kMaxObs : kBaseObs; }
  int64_t ticks_per_period() const { return params_.ticks_per_period; }
  const Params& params() const { return params_; }

  // A cycle: its speed per control period [m/s] (k = 0 at reset), the speed-trace
  // tolerance band around it per period (lower, upper [m/s]: the regulations' +-2 km/h
  // and +-1 s), its phase per period (-1: none; at most kMaxPhases), shared, not copied,
  // by the cores of a vector env.
  struct CycleData {
    std::vector<double> speed, lower, upper;
    std::vector<int8_t> phase;
    template <class Ar>
    void archive(Ar& ar) { ar(speed, lower, upper, phase); }
  };
  // The env's cycles, each with its episode time limit [substeps] (-1: the env's own
  // limit applies). draw_start() picks one per episode.
  struct Cycle {
    std::shared_ptr<const CycleData> data;
    int64_t limit_ticks = -1;
    template <class Ar>
    void archive(Ar& ar) { ar(data, limit_ticks); }
  };
  void set_cycles(std::vector<Cycle> cycles) {
    if (cycles.empty()) throw std::invalid_argument("set_cycles: no cycle");
    for (const Cycle& c : cycles) {
      if (!c.data || c.data->speed.empty())
        throw std::invalid_argument("set_cycles: an empty cycle");
      const size_t n = c.data->speed.size();
      if (c.data->lower.size() != n || c.data->upper.size() != n || c.data->phase.size() != n)
        throw std::invalid_argument("set_cycles: speed, band and phase of different lengths");
    }
    cycles_ = std::move(cycles);
    index_ = 0;
    cycle_ = cycles_[0].data.get();
  }
  // The episode's cycle: a uniform pick of the env's cycles (integers(n) from the env's
  // np_random, none drawn for one cycle); its first speed is the start.
  ResetState draw_start(const DynoSession&, NumpyDraws& rng) {
    if (cycles_.empty()) throw std::logic_error("the dyno core has no cycle (set_cycles)");
    index_ = cycles_.size() > 1 ? static_cast<size_t>(rng.integers(cycles_.size())) : 0;
    cycle_ = cycles_[index_].data.get();
    return {cycle_->speed.front()};
  }
  int64_t episode_limit_ticks() const {
    return cycles_.empty() ? -1 : cycles_[index_].limit_ticks;
  }
  int64_t cycle_index() const { return static_cast<int64_t>(index_); }
  int64_t periods() const { return cycle_ ? static_cast<int64_t>(cycle_->speed.size()) : 0; }

  // Every member, for the archive (archive.hpp): the cycles as their pointees (once per
  // blob). cycle_ points into cycles_: not written, rebound after reading (cycles_[index_],
  // or none without cycles, as set_cycles and draw_start keep it).
  template <class Ar>
  void archive(Ar& ar) {
    ar(params_, offsets_, cycles_);
    ar.skip(cycle_);
    ar(index_, n_, sum_e2_, max_abs_e_, pedal_last_, energy_last_, violations_, phase_n_,
       phase_e2_, phase_violations_);
    if constexpr (Ar::kReading) {
      if (!cycles_.empty() && index_ >= cycles_.size())
        throw std::invalid_argument("vdsim archive: a drive-cycle index past its cycles");
      for (const Cycle& c : cycles_) {
        const size_t n = c.data ? c.data->speed.size() : 0;
        if (n == 0 || c.data->lower.size() != n || c.data->upper.size() != n ||
            c.data->phase.size() != n)
          throw std::invalid_argument("vdsim archive: a broken drive cycle");
      }
      cycle_ = cycles_.empty() ? nullptr : cycles_[index_].data.get();
    }
  }

  // The reference (or pedal) an action in [-1, 1] stands for.
  double reference(double a) const {
    switch (params_.action) {
      case CycleAction::Speed: return 0.5 * (a + 1.0) * params_.ref_speed_max;
      case CycleAction::Accel: return a >= 0.0 ? a * params_.ref_accel_max
                                               : a * params_.ref_decel_max;
      default: return a;
    }
  }
  Command command_from_action(const DynoSession&, const double* action) const {
    return Command{0.0, reference(action[0])};
  }

  void reset(DynoSession& plant, const ResetState& st) {
    plant.reset(st[0]);
    n_ = 0;
    sum_e2_ = max_abs_e_ = 0.0;
    violations_ = 0.0;
    phase_n_.fill(0);
    phase_e2_.fill(0.0);
    phase_violations_.fill(0.0);
    pedal_last_ = 0.0;
    energy_last_ = 0.0;
  }

  // The observation of the plant now, as evaluate() writes it, without changing the task
  // (the sensor delay's captures between step ends): the preview from the current period.
  void observe(DynoSession& plant, const double* action, float* obs) const {
    const int64_t k = plant.tick() / params_.ticks_per_period;
    const double v = plant.speed();
    const double a_f = plant.filtered_accel();
    const int n = n_obs();
    if (!std::isfinite(v) || !std::isfinite(a_f)) {
      std::fill(obs, obs + n, 0.0f);
      return;
    }
    double raw[kMaxObs], scale[kMaxObs];
    for (size_t i = 0; i < offsets_.size(); ++i) raw[i] = at(k + offsets_[i]);
    raw[6] = v;
    raw[7] = a_f;
    raw[8] = plant.pedal();
    raw[9] = action[0];
    raw[10] = static_cast<double>(plant.config().delay_steps) * plant.config().substep_dt;
    obs_scale(plant, scale);
    for (int j = 0; j < n; ++j)
      obs[j] = static_cast<float>(std::clamp(raw[j] / scale[j], -kObsClip, kObsClip));
  }

  int evaluate(DynoSession& plant, const double* action, const double*, float* obs,
               double* terms, double* info, bool score) {
    const int64_t k = plant.tick() / params_.ticks_per_period;
    const double v = plant.speed();
    const double v_cycle = at(k);
    const double e = v - v_cycle;
    const double a_f = plant.filtered_accel();
    int flags = 0;
    if (!std::isfinite(v) || !std::isfinite(a_f)) flags = kNonFinite | kFlagTerminated;
    observe(plant, action, obs);
    double reward = 0.0;
    if (terms) {
      const double dp = plant.pedal() - pedal_last_;
      terms[0] = -params_.w_tracking * (e / 2.0) * (e / 2.0);
      terms[1] = -params_.w_pedal_jerk * dp * dp;
      terms[2] = -params_.w_energy * (plant.energy_pos() - energy_last_) / 1000.0;
      reward = terms[0] + terms[1] + terms[2];
    }
    pedal_last_ = plant.pedal();
    energy_last_ = plant.energy_pos();
    const size_t kc = index(k);
    const int phase = cycle_ ? cycle_->phase[kc] : -1;
    // Outside the speed-trace tolerance (a NaN speed is outside)
    const bool out = cycle_ && !(v >= cycle_->lower[kc] && v <= cycle_->upper[kc]);
    if (score) {
      ++n_;
      sum_e2_ += e * e;
      max_abs_e_ = std::isfinite(e) ? fmax_inl(max_abs_e_, std::fabs(e)) : e;
      const double tc =
          static_cast<double>(params_.ticks_per_period) * plant.config().substep_dt;
      if (out) violations_ += tc;
      if (phase >= 0) {
        ++phase_n_[static_cast<size_t>(phase)];
        phase_e2_[static_cast<size_t>(phase)] += e * e;
        if (out) phase_violations_[static_cast<size_t>(phase)] += tc;
      }
    }
    const auto& s = plant.state();
    info[0] = reward;
    info[1] = v;
    info[2] = v_cycle;
    info[3] = e;
    info[4] = plant.pedal();
    info[5] = plant.throttle();
    info[6] = plant.brake();
    info[7] = s.torque[0];
    info[8] = s.torque[1];
    info[9] = plant.time();
    info[10] = static_cast<double>(phase);
    info[11] = out ? 1.0 : 0.0;
    return flags;
  }

  void summary(const DynoSession& plant, double* out) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out[0] = n_ > 0 ? std::sqrt(sum_e2_ / static_cast<double>(n_)) : nan;
    out[1] = n_ > 0 ? max_abs_e_ : nan;
    out[2] = plant.energy_pos() / 3600.0;
    out[3] = plant.distance();
    out[4] = violations_;
    out[5] = static_cast<double>(index_);
    for (size_t p = 0; p < kMaxPhases; ++p) {
      out[6 + p] = phase_n_[p] > 0 ? std::sqrt(phase_e2_[p] / static_cast<double>(phase_n_[p]))
                                   : nan;
      out[6 + kMaxPhases + p] = phase_n_[p] > 0 ? phase_violations_[p] : nan;
    }
  }

 private:
  // The cycle's period k, held at its last after the end.
  size_t index(int64_t k) const {
    return static_cast<size_t>(std::clamp<int64_t>(k, 0, std::max<int64_t>(periods() - 1, 0)));
  }
  double at(int64_t k) const { return cycle_ ? cycle_->speed[index(k)] : 0.0; }
  Params params_;
  std::array<int64_t, kCyclePreviewS.size()> offsets_{};
  std::vector<Cycle> cycles_;
  size_t index_ = 0;
  const CycleData* cycle_ = nullptr;  // cycles_[index_]'s
  int64_t n_ = 0;
  double sum_e2_ = 0.0, max_abs_e_ = 0.0, pedal_last_ = 0.0, energy_last_ = 0.0;
  double violations_ = 0.0;  // [s] outside the tolerance band
  std::array<int64_t, kMaxPhases> phase_n_{};
  std::array<double, kMaxPhases> phase_e2_{}, phase_violations_{};
};

using DynoEnvCore = EnvCore<DriveCycleTask>;

}  // namespace vdsim
