// Path-tracking task: the per-step task that the DLC and PathFollow environments translate
// to Gymnasium (on the generic EnvCore), over the reference path (path_tracker.hpp) and the
// cone field (cones.hpp). Everything here runs once per
// control period, so it neither allocates nor touches Python in step(); courses are set
// (and buffers sized) at reset time only.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cones.hpp"
#include "env_core.hpp"
#include "path_tracker.hpp"
#include "random_course.hpp"
#include "session.hpp"

namespace vdsim {

struct RewardWeights {
  double tracking = 1.0;    // -w (e_y / 1 m)^2
  double heading = 0.5;     // -w e_psi^2 [rad^2]
  double speed = 0.2;       // -w ((vx - v_ref) / 5 m/s)^2
  double smoothness = 0.05; // -w |a_k - a_{k-1}|^2
  double progress = 1.0;    // +w ds / (max(v_ref, 1) Tc)
  double cone = 5.0;        // -w per newly hit cone
  double terminal = 50.0;   // -w on termination
  template <class Ar>
  void archive(Ar& ar) { ar(tracking, heading, speed, smoothness, progress, cone, terminal); }
};

struct TaskParams {
  int64_t ticks_per_period = 40;     // substeps per control period
  double corridor_half_width = 3.0;  // |e_y| beyond this terminates [m]
  double cone_radius = 0.15;         // [m]
  bool terminate_on_cone = true;
  double spin_heading = 1.5707963267948966;  // |e_psi| beyond this is a spin-out [rad]
  double spin_beta = 0.7853981633974483;     // |beta| beyond this is a spin-out [rad]
  double beta_min_speed = 1.0;       // beta is only judged above this speed [m/s]
  // A stall terminates: vx below stall_speed_fraction * v_ref at every step end for
  // stall_time [s] (0: never). Without it a stopped car collects small penalties until
  // the time limit, and a policy learns that braking is safe (docs/ENVS.md).
  double stall_time = 2.0;
  double stall_speed_fraction = 0.25;
  RewardWeights weights{};
  template <class Ar>
  void archive(Ar& ar) {
    ar(ticks_per_period, corridor_half_width, cone_radius, terminate_on_cone, spin_heading,
       spin_beta, beta_min_speed, stall_time, stall_speed_fraction, weights);
  }
};

// Observation columns; scales divide the physical value (obs = value / scale, clipped).
constexpr int kPathObsSize = 16;
constexpr std::array<const char*, kPathObsSize> kPathObsNames = {
    "e_y", "e_psi", "vx", "vy", "r", "v_ref", "ax", "ay", "delta_rw", "prev_steer",
    "prev_long", "kappa_ref", "preview_y_5m", "preview_y_10m", "preview_y_20m",
    "preview_y_30m"};
constexpr std::array<double, 4> kPreviewDistances = {5.0, 10.0, 20.0, 30.0};  // [m]

constexpr int kTermSize = 7;
constexpr std::array<const char*, kTermSize> kTermNames = {
    "tracking", "heading", "speed", "smoothness", "progress", "cone", "terminal"};

// Per-step scalars of the path task's info row, in this order; the env core appends its
// timing columns (kTimingInfoNames) after them.
constexpr int kPathInfoSize = 10;
constexpr std::array<const char*, kPathInfoSize> kPathInfoNames = {
    "reward", "e_y", "s", "t", "vx", "X", "Y", "psi", "new_hits", "cone_hits"};
constexpr int kTimingInfo = kPathInfoSize;  // index of t_sample in the env core's info row
constexpr int kStepInfoSize = kPathInfoSize + kTimingInfoSize;

enum StepFlag : int {
  kTerminated = kFlagTerminated,
  kTruncated = kFlagTruncated,  // course end reached (or the env core's time limit)
  kConeHit = 4,       // a cone was hit this step
  kOffCorridor = 8,
  kSpinOut = 16,
  kNonFinite = 32,
  kStalled = 64,
};

// Scale of each observation column (physical = obs * scale); delta_rw's is the vehicle's
// max_steer.
void path_obs_scale(double max_steer, double* out);  // kPathObsSize values

// What the path observation is computed from: the plant's pose and motion (body frame),
// its accelerations, the realized road-wheel steer and the previous action.
struct PathObsInput {
  double X, Y, psi, vx, vy, r, ax, ay, delta_rw, prev_steer, prev_long;
};
// The path task's observation (kPathObsSize columns, normalized by path_obs_scale and
// clipped to +-kObsClip) at a finite state, projected with hint (the previous segment;
// -1: a global search): what PathTask::evaluate writes, and what PathObserver (the
// bindings) computes from a Plant's observation outside the env. Returns the projection;
// e_psi is the heading error.
Projection path_observation(const PathTracker& path, int64_t hint, const PathObsInput& in,
                            double max_steer, float* obs, double& e_psi);

// A course's immutable data: the reference path, the cones' geometry and the corridor.
// Built once per course (Course.core_data() in Python) and shared by every env on it:
// set_course_data() copies pointers, not the path.
struct CourseData {
  std::shared_ptr<const PathTracker> path = std::make_shared<const PathTracker>();
  ConeField cones;  // its geometry shared; a task takes it with share_from
  double corridor_half_width = 3.0;
  double start_speed = 0.0;  // the episode's initial vx [m/s]
  static CourseData make(const double* path_xy, const double* speed, int64_t n_points,
                         const double* cones_xy, int64_t n_cones, double corridor_half_width,
                         double start_speed);
};

// The path-following task on the vehicle Session: projection on the reference path,
// cones, observation, reward terms and termination. The env core (EnvCore<PathTask>,
// alias PathEnvCore) adds actions, latency and timing around it.
class PathTask {
 public:
  using Plant = Session;
  using Params = TaskParams;
  using ResetState = std::array<double, 6>;  // X, Y, psi, vx, vy, r
  static constexpr int kActionSize = 2;      // steer, longitudinal in [-1, 1]

  PathTask(const TaskParams& params, const Session& plant);
  // The footprint from the plant's (new) vehicle: CG to the bumpers, half width.
  void vehicle_changed(const Session& plant);

  static EnvSpec spec(const TaskParams& params = TaskParams{});
  int64_t ticks_per_period() const { return params_.ticks_per_period; }
  // Action (clamped) -> plant command, per the session's longitudinal mode.
  Command command_from_action(const Session& plant, const double* action) const;
  void reset(Session& plant, const ResetState& state);
  // The episode's start: on the path's first point, heading along its first segment,
  // offset sideways by U(-kStartNoiseY, kStartNoiseY) and turned by
  // U(-kStartNoisePsi, kStartNoisePsi) (in that order from `rng`), at the course's start
  // speed, at rest otherwise. Requires a course.
  // With set_random_course, a new course is drawn first (draw_random_course; a
  // non-finite one: std::domain_error).
  ResetState draw_start(const Session& plant, NumpyDraws& rng);
  int64_t episode_limit_ticks() const { return -1; }  // the env's own limit
  static constexpr double kStartNoiseY = 0.05;                           // [m]
  static constexpr double kStartNoisePsi = 0.5 * (3.141592653589793 / 180.0);  // [rad]
  // Projects, checks the task, writes obs and (when terms) reward terms; flags.
  int evaluate(Session& plant, const double* action, const double* prev_action, float* obs,
               double* terms, double* info, bool score);
  // The observation of the plant now, as evaluate() would write it, without changing the
  // task (the sensor delay's captures between step ends; projected from the last hint).
  void observe(Session& plant, const double* action, float* obs) const;
  // distance [m], cone_hits, rms_e_y and max_abs_e_y [m] over the scored steps (NaN
  // before the first; NaN after a non-finite state), pass_speed [m/s] (vx at the course
  // end; NaN unless reached).
  void summary(const Session& plant, double* out) const;

  // Throws std::logic_error without a course (stepping one would read an empty path).
  void require_course() const;
  // The course of `data`, shared (the path and the cones' geometry are not copied), for
  // every episode from now on.
  void set_course_data(const CourseData& data);
  // A new random course every episode (draw_start), without cones, in a corridor of
  // +-corridor_half_width [m].
  void set_random_course(const RandomCourseSpec& spec, double corridor_half_width);
  // Bumped at every new course (set_course_data, a drawn one): which course is this.
  int64_t course_serial() const { return course_serial_; }
  // Wall-clock mode C's peek evaluates a fresh copy of this task each sample: it carries
  // the projection hint of the previous copy (where the car was last seen on this same
  // course), so the projection searches near the car, as a stepped task's does, instead
  // of the whole course from the hint of the last step.
  int64_t projection_hint() const { return hint_; }
  void carry_projection_hint(int64_t hint, int64_t serial) {
    if (hint >= 0 && serial == course_serial_) hint_ = hint;
  }
  double start_speed() const { return start_speed_; }
  void obs_scale(const Session& plant, double* out) const {  // kPathObsSize values
    path_obs_scale(plant.vehicle().max_steer, out);
  }
  const PathTracker& path() const { return *path_; }
  const ConeField& cones() const { return cones_; }
  const TaskParams& params() const { return params_; }

  // Every member, for the archive (archive.hpp). The course (path_, drawn_ and the
  // cones' geometry) is written as its pointees, once per blob: path_ and drawn_ still
  // share one tracker after reading when they did (draw_start's in-place rule).
  template <class Ar>
  void archive(Ar& ar) {
    ar(params_, footprint_, path_, start_speed_, random_course_, random_spec_, random_corridor_,
       course_serial_, drawn_, cones_, hint_, start_on_drawn_, s_prev_, n_scored_, sum_e2_,
       max_abs_e_, pass_speed_, passed_, slow_since_);
    if constexpr (Ar::kReading) {
      if (!path_) throw std::invalid_argument("vdsim archive: a path task without its path");
    }
  }

 private:
  TaskParams params_;
  Footprint footprint_;
  std::shared_ptr<const PathTracker> path_ = std::make_shared<const PathTracker>();
  double start_speed_ = 0.0;  // the course's
  bool random_course_ = false;
  RandomCourseSpec random_spec_;
  double random_corridor_ = 0.0;
  int64_t course_serial_ = 0;
  // The tracker of the last drawn course: the next is drawn into it in place unless
  // something else holds it (a copy of this task, e.g. a replicated row).
  std::shared_ptr<PathTracker> drawn_;
  ConeField cones_;
  int64_t hint_ = -1;
  bool start_on_drawn_ = false;  // draw_start placed the car on a drawn course's start
  double s_prev_ = 0.0;
  int64_t n_scored_ = 0;
  double sum_e2_ = 0.0, max_abs_e_ = 0.0, pass_speed_ = 0.0;
  bool passed_ = false;
  double slow_since_ = -1.0;  // session time of the first step end of the current slow run
};

using PathEnvCore = EnvCore<PathTask>;

}  // namespace vdsim
