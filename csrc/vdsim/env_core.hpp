// The env core: one episode of an env, made of a plant (the vehicle Session; later the
// dyno bench) and a task (path following; later car following, drive cycles).
//
// The generic part is written once here: action clamping to [-1, 1], the previous
// action, the latency sampler, the async timeline and the plant's command schedule, and
// the timing info columns. A task supplies its spec (names and sizes of the observation,
// action, reward-term and info rows), its reset, the action -> plant command mapping and
// the per-step evaluation (observation, reward terms, termination). The vector session
// steps any env core through EnvCoreBase and reads every size from the spec.
//
// Task interface (see PathTask):
//   using Plant;         plant type: advance(n), command_now(c),
//                        schedule(apply_tick, c, sample_tick), commands() (its
//                        CommandSchedule), tick(), time(), config().substep_dt
//   using Params;        the task's parameters (ticks_per_period among them)
//   using ResetState;    what reset() places the plant in
//   static constexpr int kActionSize;
//   Task(const Params&, const Plant&);
//   static EnvSpec spec(const Params&);      the task's own columns, default reward
//                                            weights and flag bits (EnvSpec)
//   void obs_scale(const Plant&, double* out) const;  // physical = obs * scale, one per
//                        task observation column; evaluate() divides by these and clips
//                        to +-kObsClip
//   int64_t ticks_per_period() const;
//   Command command_from_action(const Plant&, const double* action) const;  // clamped
//   void reset(Plant&, const ResetState&);
//   int evaluate(Plant&, const double* action, const double* prev_action, float* obs,
//                double* terms /* nullptr at reset */, double* info, bool score);
//   void observe(Plant&, const double* action, float* obs) const;  // evaluate()'s
//                        observation of the plant now, the task unchanged (the sensor
//                        delay's captures between step ends)
//   void summary(const Plant&, double* out) const;  // summary_names: the episode so far
//   On the vehicle Session (a plant with set_vehicle) also:
//   void vehicle_changed(const Plant&);  // re-derive what the task took from the vehicle
//
// Action history (set_action_history(k), docs/ENVS.md): the env core appends the last k
// actions (clamped to [-1, 1], float32, oldest first, zeros after reset) to the task's
// observation, columns action_{i}_{name} for i = k .. 1 (action_1: the action of the step
// that returned the observation).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "async_timeline.hpp"
#include "latency.hpp"
#include "numpy_draws.hpp"
#include "params.hpp"
#include "randomization.hpp"
#include "schedule.hpp"
#include "sensor.hpp"
#include "state.hpp"

namespace vdsim {

// Columns every env core appends to its task's info row: the step's sample timing (mode
// B): t_sample, t_apply [s], c_k [s], overrun (0/1), periods skipped by this step, the
// episode totals, and the sample and apply ticks on the substep clock (integers, exact in
// a double up to kMaxTicks: the ticks themselves, where t_apply / dt would be rounded
// back). Without latency: apply = sample = the step's start, the rest 0.
// With a network (set_network): lost (0/1: this step's command never applies; then
// t_apply is NaN and apply_tick -1), and the episode's n_lost and n_discarded (commands
// dropped because a newer one arrived first).
// With a sensor delay (set_obs_delay): obs_age [s], the age of the step's observation, and
// obs_tick, the tick of the plant it shows (without: 0 and the step's end).
constexpr int kTimingInfoSize = 14;
constexpr std::array<const char*, kTimingInfoSize> kTimingInfoNames = {
    "t_sample",    "t_apply",    "c_k",  "overrun", "skipped",     "n_overrun",
    "n_skipped",   "sample_tick", "apply_tick", "lost", "n_lost", "n_discarded",
    "obs_age", "obs_tick"};

// Flag bits every env core shares; a task's own bits (why it terminated) sit between.
constexpr int kFlagTerminated = 1;
constexpr int kFlagTruncated = 2;
constexpr int kFlagTimeLimit = 1 << 16;  // truncated by the env core's time limit

// Every task's observation columns are normalized (physical / scale) and clipped to
// [-kObsClip, kObsClip]; the observation space's bounds (the action history's columns,
// actions in [-1, 1], are not).
constexpr double kObsClip = 10.0;

// Episode-summary fields every env core starts its summary row with: env steps taken,
// the sum of their rewards, the plant's time [s]; the task's fields follow.
constexpr int kSummaryBaseSize = 3;
constexpr std::array<const char*, kSummaryBaseSize> kSummaryBaseNames = {"steps", "return",
                                                                          "time"};

// Names (and so sizes) of an env core's rows: observation (float32), action, reward
// terms, info (float64; the task's columns, then the timing columns) and the episode
// summary (float64; the base fields, then the task's: what sweeps tabulate); the default
// weight of each reward term (its Params' default) and the flag bits by name (the task's
// own, between the shared ones; the env core adds terminated, truncated, time_limit).
// The one place these facts are written: the Python envs read them from the bindings.
struct EnvSpec {
  std::vector<std::string> obs_names, action_names, term_names, info_names, summary_names;
  std::vector<double> default_weights;              // one per term_names entry
  // (name, bit); a task lists its own in the order an episode's outcome names them when
  // several are set (the first set wins: CoreEnv.outcome)
  std::vector<std::pair<std::string, int>> flags;
  int64_t obs_size() const { return static_cast<int64_t>(obs_names.size()); }
  int64_t action_size() const { return static_cast<int64_t>(action_names.size()); }
  int64_t term_size() const { return static_cast<int64_t>(term_names.size()); }
  int64_t info_size() const { return static_cast<int64_t>(info_names.size()); }
  int64_t summary_size() const { return static_cast<int64_t>(summary_names.size()); }
  bool operator==(const EnvSpec& o) const {
    return obs_names == o.obs_names && action_names == o.action_names &&
           term_names == o.term_names && info_names == o.info_names &&
           summary_names == o.summary_names && default_weights == o.default_weights &&
           flags == o.flags;
  }
  template <class Ar>
  void archive(Ar& ar) {
    ar(obs_names, action_names, term_names, info_names, summary_names, default_weights, flags);
  }
};

// What the vector session steps: any env core, sizes from spec().
class EnvCoreBase : public TickHook {
 public:
  ~EnvCoreBase() override = default;
  virtual const EnvSpec& spec() const = 0;
  // One env step from an action row; writes the obs, terms and info rows (info[0] is the
  // reward); returns the task's flag bits.
  virtual int step(const double* action, float* obs, double* terms, double* info,
                   double measured_delay) = 0;
  // An evaluation's end tick (set_run_end; none: the largest int64): no step advances
  // the plant past it (the task is evaluated where it stopped), and run_to_end() advances
  // the plant to it without a sample (the commands scheduled before it apply, the sensor
  // takes its captures): the run from its last sample to its end.
  virtual void set_run_end(int64_t tick) = 0;
  virtual int64_t run_end() const = 0;
  virtual void run_to_end() = 0;
  // An evaluation's grid rows (set_grid_rows(true)): the plant stops at every grid tick
  // (a multiple of the control period) that a step or run_to_end() passes, and records
  // there (tick, the sample tick of the command in force during it, the 10 state columns
  // of state_columns()); grid_rows() is the buffer, cleared by set_grid_rows. The stop
  // ends an integration step there, as a command does (none is cut when the period is a
  // whole number of max_step, every grid tick then a step boundary).
  static constexpr int kGridRowSize = 12;
  virtual void set_grid_rows(bool on) = 0;
  virtual bool grid_rows_on() const = 0;
  virtual const std::vector<double>& grid_rows() const = 0;
  // Benchmark reference: one control period of plant physics only (no latency, no task).
  virtual void advance_physics(const double* action) = 0;
  virtual bool measured_latency() const = 0;
  // The episode so far (since reset), spec().summary_names.
  virtual void summary(double* out) const = 0;
  // Replace the plant's vehicle parameters (and the task's values derived from them) or
  // its steering actuator chain; take effect at once, a reset() makes the state
  // consistent. false: the plant has no such parameters (the dyno bench).
  virtual bool set_vehicle(const VehicleParams&) { return false; }
  virtual bool set_actuator(const ActuatorParams&, int64_t /*dead_ticks*/) { return false; }
  virtual bool set_channel_delays(int64_t /*steer*/, int64_t /*longitudinal*/) { return false; }

  // What ClosedLoopEval's env form reads around each step (EvalStepper, bind_gym_step.cpp):
  // the next sample's grid index k, the tick of its controller call and the start of its
  // computation [s] (with latency or a network the timeline's, else the plant's grid
  // point now);
  virtual void next_sample(int64_t& k, int64_t& call_tick, double& t_start) const = 0;
  virtual int64_t plant_tick() const = 0;
  // the sample tick of the command in force during substep `tick` (-1: the reset's);
  virtual int64_t in_force_sample(int64_t tick) const = 0;
  // the plant command of an action (clamped to [-1, 1]): steer and longitudinal;
  virtual void command_of(const double* action, double* out) const = 0;
  // the trace's state columns now (X, Y, psi, vx, vy, r, ax, ay, beta, delta_rw, as
  // vdsim_gym.sim.plant.StateColumns gives them; the dyno: its speed and filtered
  // acceleration, NaN elsewhere); false: the plant has none.
  virtual bool state_columns(double* /*out*/) { return false; }
  // The whole episode reset in C++ (the vector env's in-batch autoreset): the task's
  // start drawn from rng.task (Task::draw_start, what the Python env's reset draws
  // through the same function), the latency seed from rng.latency, then reset(). false:
  // the task draws its start in Python (its core cannot reset itself).
  virtual bool reset_episode(const EpisodeRng& /*rng*/, float* /*obs*/, double* /*info*/) {
    return false;
  }
  virtual bool draws_start() const { return false; }
  // The last episode's randomization draws; nullptr without randomization.
  virtual const RandomDraws* randomization_draws() const { return nullptr; }
  // A copy of this env core: its parameters, configuration and state.
  virtual std::unique_ptr<EnvCoreBase> clone() const = 0;
  // This core becomes a copy of `snapshot` (a clone of a core of the same task): its
  // parameters, configuration and whole state, so that the same actions then step it as
  // they stepped the snapshot's source. false: `snapshot` is a core of another task,
  // nothing changed.
  virtual bool restore(const EnvCoreBase& snapshot) = 0;
  // Wall-clock mode C: the observation, info and flags of the plant now (no advance, no
  // scoring); an action's command taking effect now.
  virtual int peek(float* obs, double* info) = 0;
  virtual void latch(const double* action) = 0;
};

namespace detail {
// Whether a plant has vehicle parameters to replace (the vehicle Session does).
template <class P, class = void>
struct has_set_vehicle : std::false_type {};
template <class P>
struct has_set_vehicle<P, std::void_t<decltype(std::declval<P&>().set_vehicle(
                              std::declval<const VehicleParams&>()))>> : std::true_type {};
// Whether a plant is the chassis dyno's (speed and a filtered acceleration, no pose).
template <class P, class = void>
struct has_filtered_accel : std::false_type {};
// Whether a task draws its episode's start in C++ (draw_start(plant, NumpyDraws&)).
// Whether a task keeps a projection hint that peek() carries from copy to copy.
template <class T, class = void>
struct has_projection_hint : std::false_type {};
template <class T>
struct has_projection_hint<T, std::void_t<decltype(std::declval<T&>().carry_projection_hint(
                                  int64_t{}, int64_t{}))>> : std::true_type {};
template <class T, class = void>
struct has_draw_start : std::false_type {};
// Whether a plant's copy points into itself and must be rebound (the vehicle Session).
template <class P, class = void>
struct has_rebind_context : std::false_type {};
template <class P>
struct has_rebind_context<P, std::void_t<decltype(std::declval<P&>().rebind_context())>>
    : std::true_type {};
template <class T>
struct has_draw_start<T, std::void_t<decltype(std::declval<T&>().draw_start(
                             std::declval<const typename T::Plant&>(),
                             std::declval<NumpyDraws&>()))>> : std::true_type {};
template <class P>
struct has_filtered_accel<P, std::void_t<decltype(std::declval<const P&>().filtered_accel())>>
    : std::true_type {};
// Whether a plant has a robot driver's transport delay to replace (the dyno's).
template <class P, class = void>
struct has_driver_delay : std::false_type {};
template <class P>
struct has_driver_delay<P, std::void_t<decltype(std::declval<P&>().set_delay_steps(int64_t{}))>>
    : std::true_type {};
}  // namespace detail

template <class Task>
class EnvCore final : public EnvCoreBase {
 public:
  using Plant = typename Task::Plant;
  static constexpr int kActions = Task::kActionSize;

  template <class... PlantArgs>
  explicit EnvCore(const typename Task::Params& params, PlantArgs&&... plant_args)
      : plant_(std::forward<PlantArgs>(plant_args)...), task_(params, plant_) {
    const EnvSpec task_spec = Task::spec(params);
    task_info_ = task_spec.info_size();
    task_obs_ = task_spec.obs_size();
    eval_obs_.assign(static_cast<size_t>(task_obs_), 0.0f);
    spec_ = intern(full_spec(task_spec));
  }
  // A copy: the same parameters, configuration (latency, network, sensor delay, time
  // limit, action history) and state, the course and cycles shared (immutable). What a
  // vector env builds its rows from (clone).
  EnvCore(const EnvCore&) = default;
  std::unique_ptr<EnvCoreBase> clone() const override { return std::make_unique<EnvCore>(*this); }
  bool restore(const EnvCoreBase& snapshot) override {
    const auto* other = dynamic_cast<const EnvCore*>(&snapshot);
    if (other == nullptr) return false;
    if (other != this) {
      *this = *other;  // every member, as the copy constructor copies them
      if constexpr (detail::has_rebind_context<Plant>::value) plant_.rebind_context();
    }
    return true;
  }

  // The spec of an env core on this task (no action history): the task's, with the
  // timing info columns, the summary's base fields and the shared flag bits added.
  static EnvSpec full_spec(EnvSpec s) {
    for (const char* n : kTimingInfoNames) s.info_names.emplace_back(n);
    std::vector<std::string> summary(kSummaryBaseNames.begin(), kSummaryBaseNames.end());
    summary.insert(summary.end(), s.summary_names.begin(), s.summary_names.end());
    s.summary_names = std::move(summary);
    std::vector<std::pair<std::string, int>> flags = {{"terminated", kFlagTerminated},
                                                      {"truncated", kFlagTruncated}};
    flags.insert(flags.end(), s.flags.begin(), s.flags.end());
    flags.emplace_back("time_limit", kFlagTimeLimit);
    s.flags = std::move(flags);
    return s;
  }
  // The spec of an env core built with the task's default parameters.
  static EnvSpec default_spec() { return full_spec(Task::spec(typename Task::Params{})); }

  const EnvSpec& spec() const override { return *spec_; }
  int64_t task_info_size() const { return task_info_; }

  // Physical value of each observation column = obs * scale (spec().obs_size() values):
  // the task's scales, then 1 for the action history's columns.
  void obs_scale(double* out) const {
    task_.obs_scale(plant_, out);
    std::fill(out + task_obs_, out + spec_->obs_size(), 1.0);
  }

  // Appends the last k actions to the observation (see the file comment); changes the
  // spec's obs_names, so set it before the buffers are sized (and before a vector
  // session is built on this core). Takes effect at the next reset().
  void set_action_history(int64_t k) {
    if (k < 0) k = 0;
    history_k_ = k;
    history_.assign(static_cast<size_t>(k) * kActions, 0.0f);
    EnvSpec s = *spec_;
    s.obs_names.resize(static_cast<size_t>(task_obs_));
    for (int64_t i = k; i >= 1; --i)
      for (const auto& name : s.action_names)
        s.obs_names.push_back("action_" + std::to_string(i) + "_" + name);
    spec_ = intern(std::move(s));
  }
  int64_t action_history() const { return history_k_; }

  // Vehicle parameters and the steering actuator of a vehicle Session (EnvCoreBase).
  bool set_vehicle(const VehicleParams& v) override {
    if constexpr (detail::has_set_vehicle<Plant>::value) {
      plant_.set_vehicle(v);
      task_.vehicle_changed(plant_);
      return true;
    } else {
      (void)v;
      return false;
    }
  }
  bool set_channel_delays(int64_t steer, int64_t longitudinal) override {
    if constexpr (detail::has_set_vehicle<Plant>::value) {
      plant_.set_channel_delays(steer, longitudinal);
      return true;
    } else {
      (void)steer, (void)longitudinal;
      return false;
    }
  }
  bool set_actuator(const ActuatorParams& a, int64_t dead_ticks) override {
    if constexpr (detail::has_set_vehicle<Plant>::value) {
      plant_.set_actuator(a, dead_ticks);
      return true;
    } else {
      (void)a, (void)dead_ticks;
      return false;
    }
  }

  // Places the plant (the task's reset) and writes the first observation. With latency,
  // the timeline restarts at k = 0 and the delay generator is reseeded.
  void reset(const typename Task::ResetState& state, float* obs, double* info,
             uint64_t latency_seed = 0) {
    task_.reset(plant_, state);
    prev_action_.fill(0.0);
    action_.fill(0.0);
    steps_ = 0;
    return_ = 0.0;
    if (latency_on_ || network_on_) {
      timeline_.reset();
      sampler_.reseed(latency_seed);
      network_.reseed(latency_seed);
      n_lost_ = n_discarded_ = 0;
    }
    if (sensor_on_) sensor_.reset(latency_seed ^ kSensorStream);
    task_.evaluate(plant_, action_.data(), prev_action_.data(), obs, nullptr, info, false);
    std::copy(obs, obs + task_obs_, eval_obs_.begin());
    std::fill(info + task_info_, info + task_info_ + kTimingInfoSize, 0.0);
    info[task_info_ + kObsTickColumn] = static_cast<double>(plant_.tick());
    std::fill(history_.begin(), history_.end(), 0.0f);
    write_history(obs);
  }

  // The task's start for this episode from `rng` (the env's np_random), and what the
  // task sets with it (the dyno: the cycle and its time limit). Tasks without
  // draw_start: std::logic_error.
  typename Task::ResetState draw_start(NpBitGen* rng) {
    if constexpr (detail::has_draw_start<Task>::value) {
      NumpyDraws draws(rng);
      const auto state = task_.draw_start(plant_, draws);
      const int64_t limit = task_.episode_limit_ticks();
      if (limit >= 0) limit_ticks_ = limit;
      return state;
    } else {
      (void)rng;
      throw std::logic_error("this task draws its episode's start in Python");
    }
  }
  bool draws_start() const override { return detail::has_draw_start<Task>::value; }
  bool reset_episode(const EpisodeRng& rng, float* obs, double* info) override {
    if constexpr (detail::has_draw_start<Task>::value) {
      const auto state = draw_start(rng.task);
      if (rand_) randomize_episode(rng.task);
      reset(state, obs, info, draw_latency_seed(rng.latency, rng.model_seed));
      return true;
    } else {
      (void)rng, (void)obs, (void)info;
      return false;
    }
  }

  // Domain randomization (randomization.hpp): set once; each episode's draws then come
  // from randomize_episode (the Python env's reset, after draw_start) or reset_episode.
  void set_randomization(const RandomizationSpec& spec) {
    rand_ = std::make_shared<const RandomizationSpec>(spec);
    std::fill(std::begin(draws_.value), std::end(draws_.value),
              std::numeric_limits<double>::quiet_NaN());
  }
  bool randomizes() const { return static_cast<bool>(rand_); }
  const RandomDraws* randomization_draws() const override { return rand_ ? &draws_ : nullptr; }
  // The last episode's draws (NaN: not randomized, or no episode drawn yet).
  const RandomDraws& episode_draws() const { return draws_; }
  // One uniform draw per range from rng (numpy's Generator.uniform, in draw order), each
  // applied to the plant and this core as vdsim_gym.sim.randomization describes; reset()
  // after. The channels' and the driver's draws are kept snapped to their whole ticks.
  void randomize_episode(NpBitGen* rng) {
    const RandomizationSpec& s = *rand_;
    NumpyDraws d(rng);
    RandomDraws out;
    std::fill(std::begin(out.value), std::end(out.value),
              std::numeric_limits<double>::quiet_NaN());
    for (size_t k = 0; k < s.keys.size(); ++k) out.value[s.keys[k]] = d.uniform(s.lo[k], s.hi[k]);
    if (s.has(kRandMass) || s.has(kRandCgX) || s.has(kRandFriction) || s.has(kRandCornering))
      set_vehicle(randomized_vehicle(s.vehicle, out, s));
    if (s.has(kRandActuatorLag)) {
      ActuatorParams a = s.actuator;
      a.time_constant = out.value[kRandActuatorLag];
      set_actuator(a, s.actuator_dead_ticks);
    }
    if (s.has(kRandLatencyMean)) {  // fixed(c) without jitter, else uniform(c (1 -+ j))
      const double c = out.value[kRandLatencyMean];
      const double j = s.has(kRandLatencyJitter) ? out.value[kRandLatencyJitter] : 0.0;
      LatencySpec l;
      if (j == 0.0) {
        l.kind = LatencyKind::Fixed;
        l.c = c;
      } else {
        l.kind = LatencyKind::Uniform;
        l.lo = c * (1.0 - j);
        l.hi = c * (1.0 + j);
      }
      set_latency(l, s.overrun);
    }
    const double dt = plant_.config().substep_dt;
    if (s.has(kRandSteerDelay) || s.has(kRandLongitudinalDelay)) {
      int64_t ticks[2] = {s.steer_dead_ticks, s.longitudinal_dead_ticks};
      const RandomKey keys[2] = {kRandSteerDelay, kRandLongitudinalDelay};
      for (int c = 0; c < 2; ++c) {
        if (!s.has(keys[c])) continue;
        ticks[c] = nearest_ticks(out.value[keys[c]], dt);
        out.value[keys[c]] = static_cast<double>(ticks[c]) * dt;
      }
      set_channel_delays(ticks[0], ticks[1]);
    }
    if (s.has(kRandLoss)) {
      NetworkSpec n = s.network;
      n.drop = out.value[kRandLoss];
      set_network(n, s.overrun);
    }
    if (s.has(kRandObsDelay)) {
      LatencySpec o;
      o.kind = LatencyKind::Fixed;
      o.c = out.value[kRandObsDelay];
      set_obs_delay(o);
    }
    if constexpr (detail::has_driver_delay<Plant>::value) {
      if (s.has(kRandDriverDelay)) {
        const int64_t n = nearest_ticks(out.value[kRandDriverDelay], dt);
        plant_.set_delay_steps(n);
        out.value[kRandDriverDelay] = static_cast<double>(n) * dt;
      }
    }
    draws_ = out;
  }

  // Without latency: the command takes effect now, the plant advances one control period,
  //   then the task is evaluated.
  // With latency: the action is the sample at grid index k = timeline.next_k(); its delay
  //   c_k is drawn (LatencyKind::Measured: c_k = measured_delay), committed on the
  //   timeline and the command scheduled at its apply tick; the plant advances to the next
  //   sample's grid tick (skip: possibly several periods; queue: one) and the task is
  //   evaluated there (termination is checked at the end of the env step only).
  int step(const double* action, float* obs, double* terms, double* info,
           double measured_delay = std::numeric_limits<double>::quiet_NaN()) override {
    const int64_t end = run_end_;
    prev_action_ = action_;
    for (int j = 0; j < kActions; ++j) action_[j] = std::clamp(action[j], -1.0, 1.0);
    const auto cmd = task_.command_from_action(plant_, action_.data());
    const int64_t period = task_.ticks_per_period();
    double timing[kTimingInfoSize];
    if (!latency_on_ && !network_on_) {
      const double t0 = plant_.time();
      const int64_t tick0 = plant_.tick();
      plant_.command_now(cmd);
      advance_to(std::min(tick0 + period, end));
      timing[0] = timing[1] = t0;
      std::fill(timing + 2, timing + 7, 0.0);
      timing[7] = timing[8] = static_cast<double>(tick0);
      std::fill(timing + 9, timing + kTimingInfoSize, 0.0);
    } else {
      const int64_t k = timeline_.next_k();
      const double c = !latency_on_ ? 0.0
                       : sampler_.spec().kind == LatencyKind::Measured ? measured_delay
                                                                       : sampler_.draw();
      const int64_t skipped_before = timeline_.n_skipped();
      const SampleTiming s = timeline_.commit(k, c);
      const double dt = plant_.config().substep_dt;
      int64_t apply = s.apply_tick;
      bool lost = false;
      if (network_on_) {
        lost = network_.lost();
        const double n = network_.delay();  // drawn for every command: streams stay aligned
        if (lost) {
          ++n_lost_;
        } else {
          if (n > 0.0) apply = ceil_ticks(s.t_finish + n, dt);
          n_discarded_ += static_cast<int64_t>(plant_.discard_after(apply));
        }
      }
      if (!lost) plant_.schedule(apply, cmd, s.sample_tick);
      advance_to(std::min(timeline_.next_k() * period, end));
      timing[0] = static_cast<double>(s.sample_tick) * dt;
      timing[1] = lost ? std::numeric_limits<double>::quiet_NaN()
                       : static_cast<double>(apply) * dt;
      timing[2] = s.c;
      timing[3] = s.overrun ? 1.0 : 0.0;
      timing[4] = static_cast<double>(timeline_.n_skipped() - skipped_before);
      timing[5] = static_cast<double>(timeline_.n_overrun());
      timing[6] = static_cast<double>(timeline_.n_skipped());
      timing[7] = static_cast<double>(s.sample_tick);
      timing[8] = lost ? -1.0 : static_cast<double>(apply);
      timing[9] = lost ? 1.0 : 0.0;
      timing[10] = static_cast<double>(n_lost_);
      timing[11] = static_cast<double>(n_discarded_);
    }
    int flags =
        task_.evaluate(plant_, action_.data(), prev_action_.data(), obs, terms, info, true);
    deliver(obs, timing);
    std::copy(timing, timing + kTimingInfoSize, info + task_info_);
    push_history();
    write_history(obs);
    ++steps_;
    return_ += info[0];
    // The time limit truncates an episode the task has not ended, at the first step whose
    // end reaches it (a time, not a step count: a skip step spans several periods).
    if (limit_ticks_ > 0 && plant_.tick() >= limit_ticks_ &&
        !(flags & (kFlagTerminated | kFlagTruncated)))
      flags |= kFlagTruncated | kFlagTimeLimit;
    return flags;
  }

  void set_grid_rows(bool on) override {
    grid_rows_on_ = on;
    grid_rows_.clear();
  }
  bool grid_rows_on() const override { return grid_rows_on_; }
  const std::vector<double>& grid_rows() const override { return grid_rows_; }
  void set_run_end(int64_t tick) override { run_end_ = tick; }
  int64_t run_end() const override { return run_end_; }
  void run_to_end() override {
    if (run_end_ > plant_.tick() && run_end_ < std::numeric_limits<int64_t>::max()) {
      // A grid tick the run stands on without its sample (a queue's last, called at or
      // after the end) has its row too.
      if (grid_rows_on_ && plant_.tick() % task_.ticks_per_period() == 0) record_grid_row();
      advance_to(run_end_);
    }
  }

  void next_sample(int64_t& k, int64_t& call_tick, double& t_start) const override {
    if (!latency_on_ && !network_on_) {
      k = plant_.tick() / task_.ticks_per_period();
      call_tick = plant_.tick();
      t_start = plant_.time();
      return;
    }
    k = timeline_.next_k();
    call_tick = timeline_.call_tick(k);
    t_start = timeline_.start_time(k);
  }
  int64_t plant_tick() const override { return plant_.tick(); }
  int64_t in_force_sample(int64_t tick) const override {
    return plant_.commands().in_force_during(tick).sample_tick;
  }
  void command_of(const double* action, double* out) const override {
    const Command c = command_for(action);
    out[0] = c.steer;
    out[1] = c.longitudinal;
  }
  bool state_columns(double* out) override {
    if constexpr (detail::has_set_vehicle<Plant>::value) {
      const State& s = plant_.state();
      const double vx = s[kVx], vy = s[kVy];
      const Aux& a = plant_.aux();
      out[0] = s[kX], out[1] = s[kY], out[2] = s[kPsi], out[3] = vx, out[4] = vy;
      out[5] = s[kR], out[6] = a.ax, out[7] = a.ay;
      // sim.plant._state_columns: math.atan2(vy, vx) if (vx or vy) else 0.0
      out[8] = (vx != 0.0 || vy != 0.0) ? std::atan2(vy, vx) : 0.0;
      out[9] = plant_.realized_steer();
      return true;
    } else if constexpr (detail::has_filtered_accel<Plant>::value) {
      // The dyno's plant_observation: vx its speed, ax its filtered acceleration, the
      // vehicle's other columns NaN (DynoEnv.plant_observation).
      std::fill(out, out + 10, std::numeric_limits<double>::quiet_NaN());
      out[3] = plant_.speed();
      out[6] = plant_.filtered_accel();
      return true;
    } else {
      (void)out;
      return false;
    }
  }

  void summary(double* out) const override {
    out[0] = static_cast<double>(steps_);
    out[1] = return_;
    out[2] = plant_.time();
    task_.summary(plant_, out + kSummaryBaseSize);
  }

  // Wall-clock mode C: the observation, info row and flags of the plant as it is now,
  // without advancing it. A copy of the task evaluates and scores (so the terminal states
  // a task finds only when scoring, a path task's off-corridor, spin-out, cone hit and
  // course end, are reported), leaving the task's own state, e.g. its episode
  // statistics, untouched. A state that needs time to build up (a path task's stall) is
  // not seen: each copy starts from the task's state.
  int peek(float* obs, double* info) override {
    if (peek_.task) {
      if constexpr (detail::has_projection_hint<Task>::value) {
        const int64_t hint = peek_.task->projection_hint();
        const int64_t serial = peek_.task->course_serial();
        *peek_.task = task_;
        peek_.task->carry_projection_hint(hint, serial);
      } else {
        *peek_.task = task_;
      }
    } else {
      peek_.task = std::make_unique<Task>(task_);
    }
    Task& t = *peek_.task;
    const int flags = t.evaluate(plant_, action_.data(), prev_action_.data(), obs, nullptr,
                                 info, true);
    std::fill(info + task_info_, info + task_info_ + kTimingInfoSize, 0.0);
    write_history(obs);
    return flags;
  }
  // Wall-clock mode C: an action's command takes effect now (the previous action moves to
  // prev_action, as in step()).
  void latch(const double* action) override {
    prev_action_ = action_;
    for (int j = 0; j < kActions; ++j) action_[j] = std::clamp(action[j], -1.0, 1.0);
    plant_.command_now(task_.command_from_action(plant_, action_.data()));
    push_history();
  }
  // The plant command an action stands for now (the watchdog's fail-safe).
  Command command_for(const double* action) const {
    std::array<double, kActions> a;
    for (int j = 0; j < kActions; ++j) a[j] = std::clamp(action[j], -1.0, 1.0);
    return task_.command_from_action(plant_, a.data());
  }

  void advance_physics(const double* action) override {
    std::array<double, kActions> a;
    for (int j = 0; j < kActions; ++j) a[j] = std::clamp(action[j], -1.0, 1.0);
    plant_.command_now(task_.command_from_action(plant_, a.data()));
    plant_.advance(task_.ticks_per_period());
  }

  // Computation latency (mode B). Takes effect at the next reset().
  void set_latency(const LatencySpec& spec, OverrunPolicy policy) {
    sampler_ = LatencySampler(spec);
    timeline_ = AsyncTimeline(plant_.config().substep_dt, task_.ticks_per_period(), policy);
    latency_on_ = true;
  }
  void clear_latency() { latency_on_ = false; }
  // A network between the controller and the plant (NetworkChannel). Without a latency
  // model the commands take the latency path with no computation delay (c = 0: the
  // undelayed run, bit for bit). Takes effect at the next reset().
  void set_network(const NetworkSpec& spec, OverrunPolicy policy) {
    network_ = NetworkChannel(spec);
    if (!latency_on_)
      timeline_ = AsyncTimeline(plant_.config().substep_dt, task_.ticks_per_period(), policy);
    network_on_ = true;
  }
  void clear_network() { network_on_ = false; }
  // A sensor delay (sensor.hpp): each step's observation (the task's columns; the action
  // history stays current) is the task's observation of the plant at its capture tick,
  // the age drawn per grid sample from `age` (seeded per episode from reset()'s seed). The
  // plant stops at every capture between step ends, which ends an integration step there
  // as a command does. Takes effect at the next reset().
  void set_obs_delay(const LatencySpec& age) {
    sensor_ = SensorSchedule(age, plant_.config().substep_dt, task_.ticks_per_period(),
                             task_obs_);
    sensor_on_ = true;
  }
  void clear_obs_delay() { sensor_on_ = false; }
  bool has_obs_delay() const { return sensor_on_; }
  // Mode C (the real-time runner's TickHook, on its thread under its mutex): takes the
  // captures due at the plant's tick now (the observation with the latched action).
  void after_tick() override {
    if (!sensor_on_) return;
    const int64_t now = plant_.tick();
    sensor_.plan(now);
    for (size_t i = 0; i < sensor_.size() && sensor_.tick(i) <= now; ++i) {
      if (sensor_.done(i)) continue;
      if (now == 0)  // at the reset (before the runner starts): its own observation
        std::copy(eval_obs_.begin(), eval_obs_.end(), sensor_.row(i));
      else
        task_.observe(plant_, action_.data(), sensor_.row(i));
      sensor_.mark_done(i);
    }
  }
  // Mode C: writes the observation captured for the newest grid sample at or before now
  // into obs's task columns (the latest capture taken, should that one not be due yet:
  // the control thread woke before the plant reached it; the reset's before the first);
  // returns its capture tick.
  int64_t sensor_read(float* obs) {
    const int64_t best = sensor_.newest_done(plant_.tick() / task_.ticks_per_period());
    if (best < 0) {  // none yet: the reset's observation
      std::copy(eval_obs_.begin(), eval_obs_.end(), obs);
      return 0;
    }
    const size_t b = static_cast<size_t>(best);
    std::copy_n(sensor_.row(b), task_obs_, obs);
    const int64_t c = sensor_.tick(b);
    sensor_.release_before(sensor_.grid(b));
    return c;
  }
  bool has_network() const { return network_on_; }
  int64_t n_lost() const { return n_lost_; }
  int64_t n_discarded() const { return n_discarded_; }
  // Episode time limit in substeps from reset (0: none).
  void set_time_limit_ticks(int64_t ticks) { limit_ticks_ = ticks; }
  int64_t time_limit_ticks() const { return limit_ticks_; }
  bool has_latency() const { return latency_on_; }
  bool measured_latency() const override {
    return latency_on_ && sampler_.spec().kind == LatencyKind::Measured;
  }
  const AsyncTimeline& timeline() const { return timeline_; }
  double control_period() const {
    return static_cast<double>(task_.ticks_per_period()) * plant_.config().substep_dt;
  }

  Plant& plant() { return plant_; }
  const Plant& plant() const { return plant_; }
  Task& task() { return task_; }
  const Task& task() const { return task_; }

  // Every member, for the archive (archive.hpp; pickled by bind_env_core.hpp): the plant,
  // the task and the core's configuration and state. Rules: peek_ is scratch, not
  // written (a loaded core starts without, as a copy does); spec_ is written whole and
  // interned again after reading (sharing between cores is not state); rand_ is written
  // as its pointee.
  template <class Ar>
  void archive(Ar& ar) {
    ar(plant_, task_);
    ar.skip(peek_, grid_rows_);
    ar(spec_, task_info_, task_obs_, history_k_, history_, action_, prev_action_, latency_on_,
       network_on_, network_, n_lost_, n_discarded_, limit_ticks_, run_end_, grid_rows_on_,
       steps_, return_,
       sampler_,
       timeline_, sensor_on_, sensor_, eval_obs_, rand_, draws_);
    if constexpr (Ar::kReading) {
      if (!spec_) throw std::invalid_argument("vdsim archive: an env core without its spec");
      spec_ = intern(*spec_);
      peek_.task.reset();
    }
  }
  // A core to read an archive into: the task's default parameters on the plant's blank
  // (every member is then the archive's).
  static std::unique_ptr<EnvCore> blank() {
    return std::make_unique<EnvCore>(typename Task::Params{}, Plant::blank());
  }

 private:
  // The action history: shift by one action, the current (clamped) action last.
  void push_history() {
    if (history_k_ == 0) return;
    std::copy(history_.begin() + kActions, history_.end(), history_.begin());
    for (int j = 0; j < kActions; ++j)
      history_[history_.size() - kActions + j] = static_cast<float>(action_[j]);
  }
  void write_history(float* obs) const {
    std::copy(history_.begin(), history_.end(), obs + task_obs_);
  }
  // Advances the plant to tick `end`; with a sensor delay, stopping at each capture
  // planned before it to take the task's observation there (a capture at the step's start
  // is the observation evaluated there; one at `end` is taken by deliver()).
  void advance_to(int64_t end) {
    if (grid_rows_on_) {  // stop at each grid tick inside, record its row
      const int64_t period = task_.ticks_per_period();
      for (int64_t g = (plant_.tick() / period + 1) * period; g < end; g += period) {
        advance_plant_to(g);
        record_grid_row();
      }
    }
    advance_plant_to(end);
  }
  // The grid row of the plant's tick now (set_grid_rows).
  void record_grid_row() {
    const int64_t g = plant_.tick();
    const size_t at = grid_rows_.size();
    grid_rows_.resize(at + kGridRowSize);
    double* r = grid_rows_.data() + at;
    r[0] = static_cast<double>(g);
    r[1] = static_cast<double>(plant_.commands().in_force_during(g).sample_tick);
    if (!state_columns(r + 2))
      std::fill(r + 2, r + kGridRowSize, std::numeric_limits<double>::quiet_NaN());
  }
  // advance_to's plant advance, with the sensor's captures.
  void advance_plant_to(int64_t end) {
    if (sensor_on_) {
      const int64_t start = plant_.tick();
      sensor_.plan(end);
      for (size_t i = 0; i < sensor_.size() && sensor_.tick(i) < end; ++i) {
        if (sensor_.done(i)) continue;
        const int64_t c = sensor_.tick(i);
        if (c == start) {
          std::copy(eval_obs_.begin(), eval_obs_.end(), sensor_.row(i));
        } else if (i > 0 && sensor_.tick(i - 1) == c) {  // clamped onto the previous one
          std::copy_n(sensor_.row(i - 1), task_obs_, sensor_.row(i));
        } else {
          plant_.advance(c - plant_.tick());
          task_.observe(plant_, action_.data(), sensor_.row(i));
        }
        sensor_.mark_done(i);
      }
    }
    plant_.advance(end - plant_.tick());
  }
  // After a step's evaluation at its end: with a sensor delay, the observation it
  // returns becomes that of its grid sample's capture (the captures at this tick take the
  // evaluation's), and the timing columns say its age.
  void deliver(float* obs, double* timing) {
    const int64_t now = plant_.tick();
    timing[kObsTickColumn] = static_cast<double>(now);
    timing[kObsTickColumn - 1] = 0.0;
    if (!sensor_on_) return;
    std::copy(obs, obs + task_obs_, eval_obs_.begin());
    for (size_t i = 0; i < sensor_.size() && sensor_.tick(i) <= now; ++i) {
      if (sensor_.done(i)) continue;
      std::copy(obs, obs + task_obs_, sensor_.row(i));
      sensor_.mark_done(i);
    }
    sensor_.release_before(now / sensor_.period());  // now is the grid index's tick
    const int64_t c = sensor_.tick(0);
    std::copy_n(sensor_.row(0), task_obs_, obs);
    timing[kObsTickColumn] = static_cast<double>(c);
    timing[kObsTickColumn - 1] = static_cast<double>(now - c) * plant_.config().substep_dt;
  }
  static constexpr int kObsTickColumn = kTimingInfoSize - 1;
  static constexpr uint64_t kSensorStream = 0x5E45'0A6Eull;

  // Member by member (restore's; private: the plant's context is rebound after it).
  EnvCore& operator=(const EnvCore&) = default;

  Plant plant_;
  Task task_;
  // peek()'s copy of the task, made at the first peek and reused (its buffers keep their
  // capacity: no allocation in a wall-clock sample); a copy of the core starts without.
  struct PeekScratch {
    std::unique_ptr<Task> task;
    PeekScratch() = default;
    PeekScratch(const PeekScratch&) {}
    PeekScratch& operator=(const PeekScratch&) { return *this; }
  } peek_;
  // Shared by the cores of one task with equal specs (intern): its names are ~3 KiB, and
  // a vector env holds thousands of cores.
  std::shared_ptr<const EnvSpec> spec_;

  // The one shared copy of a spec equal to s (the last one interned per task; cores built
  // one after the other mostly ask for the same).
  static std::shared_ptr<const EnvSpec> intern(EnvSpec s) {
    static std::mutex mu;
    static std::shared_ptr<const EnvSpec> last;
    std::lock_guard<std::mutex> lock(mu);
    if (!last || !(*last == s)) last = std::make_shared<const EnvSpec>(std::move(s));
    return last;
  }
  int64_t task_info_ = 0;
  int64_t task_obs_ = 0;  // the task's observation columns (the history follows them)
  int64_t history_k_ = 0;
  std::vector<float> history_;  // history_k_ actions, oldest first
  std::array<double, kActions> action_{}, prev_action_{};
  bool latency_on_ = false;
  bool network_on_ = false;
  NetworkChannel network_;
  int64_t n_lost_ = 0, n_discarded_ = 0;
  int64_t limit_ticks_ = 0;
  int64_t run_end_ = std::numeric_limits<int64_t>::max();  // set_run_end
  bool grid_rows_on_ = false;  // set_grid_rows
  std::vector<double> grid_rows_;  // the evaluation's grid rows (scratch: not archived)
  int64_t steps_ = 0;
  double return_ = 0.0;
  LatencySampler sampler_;
  AsyncTimeline timeline_;
  bool sensor_on_ = false;
  SensorSchedule sensor_;
  std::vector<float> eval_obs_;  // the task's observation at the last evaluation
  std::shared_ptr<const RandomizationSpec> rand_;  // shared by copies (immutable)
  RandomDraws draws_{};
};

}  // namespace vdsim
