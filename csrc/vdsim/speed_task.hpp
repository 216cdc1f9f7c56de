// Speed tracking: the smallest task on the generic env core, one longitudinal action on
// the vehicle Session driving straight (steer 0) towards a set speed. It exists to prove
// the task interface with a second task of another action arity (the test env in
// tests/speed_task_env.py runs gym.make, make_vec, the SB3 adapter, latency and
// sweeps on it with no edits to them); the ACC task is its grown-up sibling.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "env_core.hpp"
#include "fminmax.hpp"
#include "session.hpp"

namespace vdsim {

struct SpeedTaskParams {
  int64_t ticks_per_period = 40;  // substeps per control period
  double w_speed = 1.0;           // -w ((vx - v_set) / 5 m/s)^2
  double w_smoothness = 0.05;     // -w (a_k - a_{k-1})^2
  template <class Ar>
  void archive(Ar& ar) { ar(ticks_per_period, w_speed, w_smoothness); }
};

class SpeedTask {
 public:
  using Plant = Session;
  using Params = SpeedTaskParams;
  using ResetState = std::array<double, 2>;  // vx0 [m/s], v_set [m/s]
  static constexpr int kActionSize = 1;      // longitudinal in [-1, 1]
  static constexpr int kNonFinite = 4;       // flag bit: the state is not finite

  SpeedTask(const Params& params, const Session&) : params_(params) {}
  void vehicle_changed(const Session&) {}  // nothing taken from the vehicle

  static constexpr int kObsSize = 5;

  static EnvSpec spec(const Params&) {
    EnvSpec e;
    e.obs_names = {"vx", "v_set", "speed_error", "ax", "prev_long"};
    e.action_names = {"longitudinal"};
    e.term_names = {"speed", "smoothness"};
    const Params d{};  // in term_names' order
    e.default_weights = {d.w_speed, d.w_smoothness};
    e.info_names = {"reward", "speed_error", "vx", "t"};
    e.summary_names = {"rms_speed_error", "max_abs_speed_error"};
    e.flags = {{"non_finite", kNonFinite}};
    return e;
  }
  // vx, v_set / 30 m/s, the speed error / 5 m/s, ax / 5 m/s^2, the previous action.
  void obs_scale(const Session&, double* out) const {
    const double s[kObsSize] = {30.0, 30.0, 5.0, 5.0, 1.0};
    std::copy(s, s + kObsSize, out);
  }
  int64_t ticks_per_period() const { return params_.ticks_per_period; }
  Command command_from_action(const Session& plant, const double* action) const {
    return Command{0.0, longitudinal_from_action(plant, action[0])};
  }
  void reset(Session& plant, const ResetState& st) {
    plant.reset(0.0, 0.0, 0.0, st[0], 0.0, 0.0);
    v_set_ = st[1];
    n_ = 0;
    sum_e2_ = max_abs_e_ = 0.0;
  }

  // The observation of the plant now, as evaluate() writes it, without changing the task
  // (the sensor delay's captures between step ends).
  void observe(Session& plant, const double* action, float* obs) const {
    const double vx = plant.state()[kVx];
    const double ax = plant.aux().ax;
    if (!std::isfinite(vx) || !std::isfinite(ax)) {
      std::fill(obs, obs + kObsSize, 0.0f);
      return;
    }
    const double raw[kObsSize] = {vx, v_set_, vx - v_set_, ax, action[0]};
    double scale[kObsSize];
    obs_scale(plant, scale);
    for (int j = 0; j < kObsSize; ++j)
      obs[j] = static_cast<float>(std::clamp(raw[j] / scale[j], -kObsClip, kObsClip));
  }

  int evaluate(Session& plant, const double* action, const double* prev_action, float* obs,
               double* terms, double* info, bool score) {
    const double vx = plant.state()[kVx];
    const double ax = plant.aux().ax;
    const double e = vx - v_set_;
    int flags = 0;
    double reward = 0.0;
    if (!std::isfinite(vx) || !std::isfinite(ax)) flags = kNonFinite | kFlagTerminated;
    observe(plant, action, obs);
    if (terms) {
      const double du = action[0] - prev_action[0];
      terms[0] = -params_.w_speed * (e / 5.0) * (e / 5.0);
      terms[1] = -params_.w_smoothness * du * du;
      reward = terms[0] + terms[1];
    }
    if (score) {
      ++n_;
      sum_e2_ += e * e;  // NaN from a non-finite state on: the statistics become NaN
      max_abs_e_ = std::isfinite(e) ? fmax_inl(max_abs_e_, std::fabs(e)) : e;
    }
    info[0] = reward;
    info[1] = e;
    info[2] = vx;
    info[3] = plant.time();
    return flags;
  }

  void summary(const Session&, double* out) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out[0] = n_ > 0 ? std::sqrt(sum_e2_ / static_cast<double>(n_)) : nan;
    out[1] = n_ > 0 ? max_abs_e_ : nan;
  }

  template <class Ar>
  void archive(Ar& ar) { ar(params_, v_set_, n_, sum_e2_, max_abs_e_); }

 private:
  Params params_;
  double v_set_ = 0.0;
  int64_t n_ = 0;
  double sum_e2_ = 0.0, max_abs_e_ = 0.0;
};

using SpeedEnvCore = EnvCore<SpeedTask>;

}  // namespace vdsim
