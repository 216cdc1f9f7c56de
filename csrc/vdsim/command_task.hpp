// The command task: the vehicle Session driven by its plant command, observed by its
// state. What ClosedLoopEval's callback form runs on (vdsim_gym.envs.command): a
// controller's command is the action, so every timing model (latency, overruns, network,
// sensor delay) is the env core's, one engine for both evaluation forms.
//
// Action: the plant command over the vehicle's range, (steer / max_steer, longitudinal
// over its range as every env's action: longitudinal_from_action), clamped to [-1, 1] by
// the env core; the clamp is the actuator's saturation at the vehicle's limits.
// Observation: the plant's state, unscaled and unclipped (float32): X, Y, psi, vx, vy, r,
// ax, ay, beta, delta_rw (the trace's state columns, as EnvCore::state_columns gives
// them), then per wheel its spin, forces, load and slips. No reward (one zero term), no
// time limit of its own; a non-finite state terminates.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "env_core.hpp"
#include "session.hpp"

namespace vdsim {

struct CommandTaskParams {
  int64_t ticks_per_period = 40;  // substeps per control period
  int n_wheels = 4;               // the level's wheels: L1 2 (F, R), L2 4 (FL, FR, RL, RR)
  template <class Ar>
  void archive(Ar& ar) { ar(ticks_per_period, n_wheels); }
};

class CommandTask {
 public:
  using Plant = Session;
  using Params = CommandTaskParams;
  using ResetState = std::array<double, 6>;  // X, Y, psi, vx, vy, r
  static constexpr int kActionSize = 2;      // steer, longitudinal
  static constexpr int kNonFinite = 4;       // flag bit: the state is not finite
  static constexpr int kStateColumns = 10;
  static constexpr int kWheelColumns = 6;  // omega, Fx, Fy, Fz, kappa, alpha

  CommandTask(const Params& params, const Session&) : params_(params) {}
  void vehicle_changed(const Session&) {}  // the mapping reads the vehicle at each step

  static EnvSpec spec(const Params& p) {
    EnvSpec e;
    e.obs_names = {"X", "Y", "psi", "vx", "vy", "r", "ax", "ay", "beta", "delta_rw"};
    static const char* const kL1[] = {"F", "R"};
    static const char* const kL2[] = {"FL", "FR", "RL", "RR"};
    const char* const* wheels = p.n_wheels == 2 ? kL1 : kL2;
    for (const char* key : {"omega", "Fx", "Fy", "Fz", "kappa", "alpha"})
      for (int i = 0; i < p.n_wheels; ++i) e.obs_names.push_back(std::string(key) + "_" + wheels[i]);
    e.action_names = {"steer", "longitudinal"};
    e.term_names = {"none"};
    e.default_weights = {0.0};
    e.info_names = {"reward", "t"};
    e.summary_names = {};
    e.flags = {{"non_finite", kNonFinite}};
    return e;
  }
  void obs_scale(const Session&, double* out) const {
    std::fill(out, out + obs_size(), 1.0);
  }
  int64_t ticks_per_period() const { return params_.ticks_per_period; }
  Command command_from_action(const Session& plant, const double* action) const {
    return Command{action[0] * plant.vehicle().max_steer,
                   longitudinal_from_action(plant, action[1])};
  }
  void reset(Session& plant, const ResetState& st) {
    plant.reset(st[0], st[1], st[2], st[3], st[4], st[5]);
  }

  // The state row now (see the file comment), as evaluate() writes it.
  void observe(Session& plant, const double*, float* obs) const {
    const State& s = plant.state();
    const Aux& a = plant.aux();
    const double vx = s[kVx], vy = s[kVy];
    const double row[kStateColumns] = {
        s[kX], s[kY], s[kPsi], vx, vy, s[kR], a.ax, a.ay,
        (vx != 0.0 || vy != 0.0) ? std::atan2(vy, vx) : 0.0, plant.realized_steer()};
    for (int j = 0; j < kStateColumns; ++j) obs[j] = static_cast<float>(row[j]);
    const int n = params_.n_wheels;
    float* w = obs + kStateColumns;
    for (int i = 0; i < n; ++i) {
      const WheelOut& o = a.wheel[static_cast<size_t>(i)];
      w[i] = static_cast<float>(s[kW0 + i]);
      w[n + i] = static_cast<float>(o.fx);
      w[2 * n + i] = static_cast<float>(o.fy);
      w[3 * n + i] = static_cast<float>(o.fz);
      w[4 * n + i] = static_cast<float>(o.kappa);
      w[5 * n + i] = static_cast<float>(o.alpha);
    }
  }

  int evaluate(Session& plant, const double* action, const double*, float* obs,
               double* terms, double* info, bool) {
    const State& s = plant.state();
    int flags = 0;
    for (int j = 0; j < 6; ++j)
      if (!std::isfinite(s[j])) flags = kNonFinite | kFlagTerminated;
    observe(plant, action, obs);
    if (terms) terms[0] = 0.0;
    info[0] = 0.0;
    info[1] = plant.time();
    return flags;
  }

  void summary(const Session&, double*) const {}

  template <class Ar>
  void archive(Ar& ar) { ar(params_); }

 private:
  int64_t obs_size() const { return kStateColumns + kWheelColumns * params_.n_wheels; }
  Params params_;
};

using CommandEnvCore = EnvCore<CommandTask>;

}  // namespace vdsim
