// Car following (VDSim-ACC-v0): the ego vehicle on a straight road behind a lead vehicle
// whose speed comes per control period from the episode's scenario (drawn in Python, or a
// sensor CSV). One action: the longitudinal command (a target acceleration through the
// cascade by default). Header-only, on the generic env core.
//
// Lead model, as the reference workflow: the lead is absent where its speed is NaN; when
// it appears at period k its rear bumper is placed `distance[k]` ahead of the ego's front
// bumper, then it moves at speed[k] over each period (piecewise constant); the gap is
// computed from the two positions, never copied from the scenario.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "env_core.hpp"
#include "fminmax.hpp"
#include "session.hpp"

namespace vdsim {

// Each cost is a saturating c(x) = x^2 / (1 + x^2) (about x^2 near the target, never above
// 1), so a step's costs never exceed the sum of their weights (1.0 by default) and the
// `alive` pay (1.0) covers them: every step survived earns >= 0, and a collision forfeits
// the rest of the episode on top of its penalty. Ending an episode early never pays.
struct AccWeights {
  double gap = 0.4;        // -w c((gap - desired) / desired) while a lead is present
  double speed = 0.2;      // -w c((v - v_set) / 5 m/s) while free; overspeed only with a lead
  double jerk = 0.1;       // -w c(jerk / 2.5 m/s^3), jerk from the commanded action
  double comfort = 0.1;    // -w c(ax / 3 m/s^2)
  double safety = 0.2;     // -w (1 - ttc / ttc_safe) while closing with ttc < ttc_safe
  double collision = 100.0; // -w on collision
  double alive = 1.0;      // +w per step that does not end in a collision
  template <class Ar>
  void archive(Ar& ar) { ar(gap, speed, jerk, comfort, safety, collision, alive); }
};

struct AccTaskParams {
  int64_t ticks_per_period = 40;
  double time_headway = 1.5;  // [s]
  double min_distance = 5.0;  // [m]
  double ttc_safe = 3.0;      // [s]
  double ttc_cap = 10.0;      // [s]: TTC beyond this, or not closing, reads as the cap
  AccWeights weights{};
  template <class Ar>
  void archive(Ar& ar) {
    ar(ticks_per_period, time_headway, min_distance, ttc_safe, ttc_cap, weights);
  }
};

// The scenario families, in vdsim_gym.envs.acc_scenarios.FAMILIES' order.
inline constexpr int kAccFamilyCount = 6;  // cruise, follow, cut_in, hard_brake,
                                           // stop_and_go, lead_leaves

class AccTask {
 public:
  using Plant = Session;
  using Params = AccTaskParams;
  using ResetState = std::array<double, 2>;  // vx0 [m/s], v_set [m/s]
  static constexpr int kActionSize = 1;
  static constexpr int kObsSize = 10;
  static constexpr int kCollision = 4;  // flag bits
  static constexpr int kNonFinite = 8;

  AccTask(const Params& params, const Session& plant) : params_(params) {
    vehicle_changed(plant);
  }
  // CG to front bumper from the plant's (new) vehicle.
  void vehicle_changed(const Session& plant) {
    const VehicleParams& v = plant.vehicle();
    front_ = v.cg_to_front + v.front_overhang;
  }

  static EnvSpec spec(const Params&) {
    EnvSpec e;
    e.obs_names = {"ego_speed", "set_speed", "gap", "rel_speed", "desired_gap", "ttc",
                   "not_closing", "lead_present", "ax", "prev_accel"};
    e.action_names = {"accel"};
    e.term_names = {"gap", "speed", "jerk", "comfort", "safety", "collision", "alive"};
    const AccWeights w{};  // in term_names' order
    e.default_weights = {w.gap, w.speed, w.jerk, w.comfort, w.safety, w.collision, w.alive};
    e.info_names = {"reward", "gap", "lead_speed", "ttc", "lead_present", "ego_speed",
                    "ax", "t"};
    e.summary_names = {"min_gap", "collision", "rms_jerk", "rms_time_gap_error"};
    e.flags = {{"collision", kCollision}, {"non_finite", kNonFinite}};
    return e;
  }
  // ego_speed, set_speed / 30 m/s, gap / 100 m, rel_speed / 10 m/s, desired_gap / 100 m,
  // ttc / ttc_cap, the two flags, ax / 5 m/s^2, the previous action.
  void obs_scale(const Session&, double* out) const {
    const double s[kObsSize] = {30.0, 30.0, 100.0, 10.0, 100.0, params_.ttc_cap,
                                1.0,  1.0,  5.0,   1.0};
    std::copy(s, s + kObsSize, out);
  }
  int64_t ticks_per_period() const { return params_.ticks_per_period; }
  Command command_from_action(const Session& plant, const double* action) const {
    return Command{0.0, longitudinal_from_action(plant, action[0])};
  }

  // The lead per period: speed [m/s] (NaN: absent) and the sensor distance [m] used
  // where the lead (re)appears. Set before reset.
  void set_scenario(const double* lead_speed, const double* distance, int64_t n) {
    if (n < 1) throw std::invalid_argument("the scenario needs at least one period");
    speed_.assign(lead_speed, lead_speed + n);
    distance_.assign(distance, distance + n);
    family_ = -1;  // this scenario until draw_start draws another
  }
  bool has_scenario() const { return family_ >= 0 || !speed_.empty(); }

  // Where an episode's scenario comes from. Drawn: a family picked from `families`
  // (indices in kAccFamilies; integers(len) from the env's np_random), then its draws
  // over `periods` control periods of `dt` [s] (set_speed [m/s] drawn in U(20, 30) when
  // NaN). Fixed: the scenario set_scenario() set, started at (ego_speed0, set_speed).
  void set_drawn(std::vector<int> families, int64_t periods, double dt, double set_speed) {
    if (families.empty() || periods < 1 || !(dt > 0.0))
      throw std::invalid_argument("set_drawn: families, periods >= 1 and dt > 0");
    for (int f : families)
      if (f < 0 || f >= kAccFamilyCount) throw std::invalid_argument("set_drawn: bad family");
    families_ = std::move(families);
    periods_ = periods;
    dt_ = dt;
    set_speed_ = set_speed;
  }
  void set_fixed(double ego_speed0, double set_speed) {
    families_.clear();
    fixed_ = {ego_speed0, set_speed};
  }
  // The episode limit draw_start sets [substeps] (-1: the env's own).
  void set_episode_limit_ticks(int64_t ticks) { limit_ticks_ = ticks; }
  int64_t episode_limit_ticks() const { return limit_ticks_; }
  // This episode's family (index in kAccFamilies; -1: the fixed scenario).
  int family() const { return family_; }
  const ResetState& start() const { return start_; }  // this episode's (vx0, v_set)
  // The lead's speed [m/s] and sensor distance [m] in period i (NaN: no lead) of this
  // episode's scenario: a drawn family's are evaluated per period, when the lead reaches
  // it (a reset costs the draws, not the whole profile), by the formulas the profile had.
  double lead_speed_at(int64_t i) const {
    if (family_ < 0) return speed_[static_cast<size_t>(i)];
    const DrawnLead& g = drawn_;
    const double t = static_cast<double>(i) * dt_;
    constexpr double kTwoPi = 2.0 * 3.141592653589793;
    switch (family_) {
      case kFollow: return g.v + g.a * std::sin(kTwoPi * t / g.b);
      case kCutIn: return t >= g.a ? g.v : kNaN;
      case kHardBrake: return std::max(g.v - g.b * std::max(t - g.a, 0.0), 0.0);
      case kStopAndGo: return 0.5 * g.v * (1.0 - std::cos(kTwoPi * t / g.b));
      case kLeadLeaves: return t < g.a ? g.v : kNaN;
      default: return kNaN;
    }
  }
  double lead_distance_at(int64_t i) const {
    if (family_ < 0) return distance_[static_cast<size_t>(i)];
    const double t = static_cast<double>(i) * dt_;
    switch (family_) {
      case kFollow: case kHardBrake: case kStopAndGo: return drawn_.d;
      case kCutIn: return t >= drawn_.a ? drawn_.d : kNaN;
      case kLeadLeaves: return t < drawn_.a ? drawn_.d : kNaN;
      default: return kNaN;
    }
  }

  // The episode's scenario and start (vx0, v_set): the families' draws of
  // docs/ENVS.md ("ACC"), in their order (tests/envs/test_acc_draws.py holds them to the
  // numpy version they replaced), or the fixed one.
  ResetState draw_start(const Session&, NumpyDraws& rng) {
    if (families_.empty()) {
      if (speed_.empty()) throw std::logic_error("the ACC core has no scenario source");
      family_ = -1;
      start_ = fixed_;
      return fixed_;
    }
    family_ = families_[static_cast<size_t>(rng.integers(families_.size()))];
    DrawnLead& g = drawn_;
    const double v_set = std::isnan(set_speed_) ? rng.uniform(20.0, 30.0) : set_speed_;
    double v0 = v_set * rng.uniform(0.7, 1.0);
    switch (family_) {
      case kFollow:  // a steady lead with a slow oscillation
        g.v = rng.uniform(0.5, 0.9) * v_set;
        g.a = rng.uniform(0.0, 2.0);
        g.b = rng.uniform(8.0, 20.0);
        g.d = rng.uniform(25.0, 60.0);
        v0 = g.v;
        break;
      case kCutIn:  // a slower car appears close ahead
        g.a = rng.uniform(5.0, 10.0);
        g.v = v0 - rng.uniform(2.0, 6.0);
        g.d = rng.uniform(10.0, 20.0);
        break;
      case kHardBrake:
        g.v = rng.uniform(0.6, 0.9) * v_set;
        g.a = rng.uniform(5.0, 10.0);
        g.b = rng.uniform(4.0, 7.0);
        g.d = rng.uniform(30.0, 50.0);
        v0 = g.v;
        break;
      case kStopAndGo:
        g.v = rng.uniform(10.0, 15.0);
        g.b = rng.uniform(12.0, 20.0);
        g.d = rng.uniform(15.0, 30.0);
        v0 = 0.0;
        break;
      case kLeadLeaves:
        g.v = rng.uniform(0.5, 0.8) * v_set;
        g.a = rng.uniform(8.0, 15.0);
        g.d = rng.uniform(25.0, 45.0);
        v0 = g.v;
        break;
      default: break;  // cruise: no lead
    }
    start_ = {v0, v_set};
    return start_;
  }

  void reset(Session& plant, const ResetState& st) {
    if (!has_scenario()) throw std::logic_error("set_scenario() or draw_start() before reset()");
    plant.reset(0.0, 0.0, 0.0, st[0], 0.0, 0.0);
    v_set_ = st[1];
    prev_tick_ = 0;
    lead_ = Lead{};
    place_lead(lead_, plant.state()[kX], 0);
    n_ = n_follow_ = 0;
    min_gap_ = std::numeric_limits<double>::infinity();
    sum_jerk2_ = sum_tg2_ = 0.0;
    collided_ = false;
  }

  // Stepping needs the episode's lead: without a scenario there is none to read.
  void require_scenario() const {
    if (!has_scenario())
      throw std::logic_error("the ACC task has no scenario: call set_scenario and reset "
                             "before stepping it (the Python env's reset does both)");
  }

  int evaluate(Session& plant, const double* action, const double* prev_action, float* obs,
               double* terms, double* info, bool score) {
    require_scenario();
    const double tc = static_cast<double>(params_.ticks_per_period) * plant.config().substep_dt;
    advance_lead(lead_, plant.state()[kX], plant.tick() / params_.ticks_per_period, tc);
    const Reading g = read(plant, lead_, 0.0);
    const double v = g.v, ax = g.ax, v_lead = g.v_lead, gap = g.gap, desired = g.desired,
                 ttc_raw = g.ttc_raw;
    const bool present = lead_.present, closing = g.closing, finite = g.finite;
    int flags = 0;
    if (!finite) flags |= kNonFinite | kFlagTerminated;
    else if (present && gap <= 0.0) flags |= kCollision | kFlagTerminated;
    write_obs(plant, g, action, obs);

    const AccWeights& w = params_.weights;
    const double a_span = action[0] >= prev_action[0] ? plant.vehicle().max_acceleration
                                                      : plant.vehicle().max_deceleration;
    // Over the time since the previous action (several periods when a skip step spans
    // them), so that the jerk does not grow with the delay by arithmetic alone.
    const double span_t = std::max(
        static_cast<double>(plant.tick() - prev_tick_) * plant.config().substep_dt, tc);
    const double jerk = (action[0] - prev_action[0]) * a_span / span_t;
    if (score) prev_tick_ = plant.tick();
    double reward = 0.0;
    if (terms) {
      const auto cost = [](double x) { return x * x / (1.0 + x * x); };
      // relative gap error: a far lead (a stopped ego) costs at most the weight
      const double eg = present ? (gap - desired) / desired : 0.0;
      const double ev = (present ? std::max(v - v_set_, 0.0) : v - v_set_) / 5.0;
      terms[0] = -w.gap * cost(eg);
      terms[1] = -w.speed * cost(ev);
      terms[2] = -w.jerk * cost(jerk / 2.5);  // ISO 15622 ACC jerk limit, 2.5 m/s^3
      terms[3] = -w.comfort * cost(ax / 3.0);
      terms[4] = closing && ttc_raw < params_.ttc_safe
                     ? -w.safety * (1.0 - std::max(ttc_raw, 0.0) / params_.ttc_safe) : 0.0;
      terms[5] = (flags & kFlagTerminated) ? -w.collision : 0.0;
      terms[6] = (flags & kFlagTerminated) ? 0.0 : w.alive;
      if (!finite) std::fill(terms, terms + 5, 0.0);
      for (int j = 0; j < 7; ++j) reward += terms[j];
    }
    if (score) {
      ++n_;
      sum_jerk2_ += jerk * jerk;
      if (present) {
        min_gap_ = fmin_inl(min_gap_, gap);
        if (v > 1.0) {
          const double tg = gap / v - params_.time_headway;
          sum_tg2_ += tg * tg;
          ++n_follow_;
        }
      }
      collided_ = collided_ || (flags & kCollision);
    }
    // No lead: gap +inf, lead_speed 0; not closing: ttc +inf (infinite, not NaN, so that
    // infos compare equal run to run).
    const double inf = std::numeric_limits<double>::infinity();
    info[0] = reward;
    info[1] = present ? gap : inf;
    info[2] = v_lead;
    info[3] = closing ? ttc_raw : inf;
    info[4] = present ? 1.0 : 0.0;
    info[5] = v;
    info[6] = ax;
    info[7] = plant.time();
    return flags;
  }

  // The observation of the plant now, as evaluate() would write it, without changing the
  // task (the sensor delay's captures between step ends): the lead where it is now, moved
  // on at its period's speed.
  void observe(Session& plant, const double* action, float* obs) const {
    require_scenario();
    const int64_t P = params_.ticks_per_period;
    const double dt = plant.config().substep_dt;
    const int64_t k_now = plant.tick() / P;
    Lead l = lead_;
    advance_lead(l, plant.state()[kX], k_now, static_cast<double>(P) * dt);
    write_obs(plant, read(plant, l, static_cast<double>(plant.tick() - k_now * P) * dt),
              action, obs);
  }

  void summary(const Session&, double* out) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out[0] = std::isfinite(min_gap_) ? min_gap_ : nan;
    out[1] = collided_ ? 1.0 : 0.0;
    out[2] = n_ > 0 ? std::sqrt(sum_jerk2_ / static_cast<double>(n_)) : nan;
    out[3] = n_follow_ > 0 ? std::sqrt(sum_tg2_ / static_cast<double>(n_follow_)) : nan;
  }

  const Params& params() const { return params_; }
  int64_t periods() const {
    return family_ < 0 ? static_cast<int64_t>(speed_.size()) : periods_;
  }

  // Every member, for the archive (archive.hpp): the parameters, the scenario source, this
  // episode's scenario and lead, and the episode's statistics.
  template <class Ar>
  void archive(Ar& ar) {
    ar(params_, front_, speed_, distance_, families_, periods_, dt_, set_speed_, fixed_, start_,
       family_, drawn_, limit_ticks_, v_set_, lead_, prev_tick_, n_, n_follow_, min_gap_,
       sum_jerk2_, sum_tg2_, collided_);
    if constexpr (Ar::kReading) {
      if (family_ >= kAccFamilyCount || (family_ < 0 && has_scenario() &&
                                         distance_.size() != speed_.size()))
        throw std::invalid_argument("vdsim archive: an ACC task with a broken scenario");
    }
  }

 private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  enum Family { kCruise = 0, kFollow, kCutIn, kHardBrake, kStopAndGo, kLeadLeaves };
  // A drawn family's numbers (by family: v the lead's speed or v_max; a the amplitude,
  // t_in, t_b or t_out; b the period or the deceleration; d the sensor distance).
  struct DrawnLead {
    double v = 0.0, a = 0.0, b = 0.0, d = 0.0;
    template <class Ar>
    void archive(Ar& ar) { ar(v, a, b, d); }
  };
  int64_t last() const { return periods() - 1; }
  // The lead at the start of period k: its rear bumper's position and presence.
  struct Lead {
    int64_t k = 0;
    double x = 0.0;
    bool present = false;
    template <class Ar>
    void archive(Ar& ar) { ar(k, x, present); }
  };
  // Presence at period k: appears (placed from the sensor distance) or leaves.
  void place_lead(Lead& l, double ego_x, int64_t k) const {
    const int64_t i = std::min(k, last());
    const double v = lead_speed_at(i), d = lead_distance_at(i);
    const bool here = std::isfinite(v) && std::isfinite(d);
    if (here && !l.present) l.x = ego_x + front_ + d;
    l.present = here;
  }
  // The lead over the periods that passed up to k_now (several with skip).
  void advance_lead(Lead& l, double ego_x, int64_t k_now, double tc) const {
    while (l.k < k_now) {
      if (l.present) l.x += lead_speed_at(std::min<int64_t>(l.k, last())) * tc;
      ++l.k;
      place_lead(l, ego_x, l.k);
    }
  }
  // What the task reads of the plant and a lead `ahead` [s] into its period.
  struct Reading {
    double v, ax, v_lead, gap, desired, ttc_raw, ttc;
    bool present, closing, finite;
  };
  Reading read(Session& plant, const Lead& l, double ahead) const {
    const State& s = plant.state();
    Reading g;
    g.present = l.present;
    g.v = s[kVx];
    g.ax = plant.aux().ax;
    g.v_lead = l.present ? lead_speed_at(std::min<int64_t>(l.k, last())) : 0.0;
    const double lead_x = ahead > 0.0 ? l.x + g.v_lead * ahead : l.x;
    g.gap = l.present ? lead_x - (s[kX] + front_) : 0.0;
    g.desired = params_.min_distance + params_.time_headway * std::max(g.v, 0.0);
    g.closing = l.present && g.v > g.v_lead;
    g.ttc_raw = g.closing ? g.gap / (g.v - g.v_lead) : std::numeric_limits<double>::infinity();
    g.ttc = std::min(std::max(g.ttc_raw, 0.0), params_.ttc_cap);
    g.finite = std::isfinite(g.v) && std::isfinite(g.ax) && std::isfinite(s[kX]);
    return g;
  }
  void write_obs(const Session& plant, const Reading& g, const double* action,
                 float* obs) const {
    const double raw[kObsSize] = {g.v, v_set_, g.gap, g.v_lead - g.v, g.desired, g.ttc,
                                  g.closing ? 0.0 : 1.0, g.present ? 1.0 : 0.0, g.ax,
                                  action[0]};
    double scale[kObsSize];
    obs_scale(plant, scale);
    for (int j = 0; j < kObsSize; ++j)
      obs[j] = g.finite
                   ? static_cast<float>(std::clamp(raw[j] / scale[j], -kObsClip, kObsClip))
                   : 0.0f;
  }

  Params params_;
  double front_ = 0.0;  // CG to front bumper [m]
  std::vector<double> speed_, distance_;
  // the scenario source (set_drawn / set_fixed) and this episode's family
  std::vector<int> families_;
  int64_t periods_ = 0;
  double dt_ = 0.0, set_speed_ = 0.0;
  ResetState fixed_{}, start_{};
  int family_ = -1;
  DrawnLead drawn_;
  int64_t limit_ticks_ = -1;
  double v_set_ = 0.0;
  Lead lead_;
  int64_t prev_tick_ = 0;
  int64_t n_ = 0, n_follow_ = 0;
  double min_gap_ = 0.0, sum_jerk2_ = 0.0, sum_tg2_ = 0.0;
  bool collided_ = false;
};

using AccEnvCore = EnvCore<AccTask>;

}  // namespace vdsim
