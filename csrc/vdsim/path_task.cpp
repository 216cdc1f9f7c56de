#include "path_task.hpp"

#include "fminmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace vdsim {

// ---------------------------------------------------------------- PathTask

PathTask::PathTask(const TaskParams& params, const Session& plant) : params_(params) {
  vehicle_changed(plant);
}

void PathTask::vehicle_changed(const Session& plant) {
  const VehicleParams& v = plant.vehicle();
  footprint_.front = v.cg_to_front + v.front_overhang;
  footprint_.rear = v.cg_to_rear + v.rear_overhang;
  footprint_.half_width = 0.5 * v.body_width;
}

EnvSpec PathTask::spec(const TaskParams&) {
  EnvSpec s;
  for (const char* n : kPathObsNames) s.obs_names.emplace_back(n);
  s.action_names = {"steer", "longitudinal"};
  for (const char* n : kTermNames) s.term_names.emplace_back(n);
  const RewardWeights w{};  // in kTermNames' order
  s.default_weights = {w.tracking, w.heading, w.speed, w.smoothness,
                       w.progress, w.cone,    w.terminal};
  for (const char* n : kPathInfoNames) s.info_names.emplace_back(n);
  s.summary_names = {"distance", "cone_hits", "rms_e_y", "max_abs_e_y", "pass_speed"};
  // In the order an outcome names them when several are set (CoreEnv.outcome).
  s.flags = {{"non_finite", kNonFinite}, {"spin_out", kSpinOut}, {"off_corridor", kOffCorridor},
             {"cone_hit", kConeHit}, {"stalled", kStalled}};
  return s;
}

CourseData CourseData::make(const double* path_xy, const double* speed, int64_t n_points,
                            const double* cones_xy, int64_t n_cones,
                            double corridor_half_width, double start_speed) {
  CourseData d;
  auto path = std::make_shared<PathTracker>();
  path->set(path_xy, speed, n_points);
  d.cones.set(cones_xy, n_cones, *path);
  d.path = std::move(path);
  d.corridor_half_width = corridor_half_width;
  d.start_speed = start_speed;
  return d;
}

void PathTask::set_course_data(const CourseData& data) {
  path_ = data.path;
  cones_.share_from(data.cones);
  params_.corridor_half_width = data.corridor_half_width;
  start_speed_ = data.start_speed;
  hint_ = -1;
  random_course_ = false;
  ++course_serial_;
}

void PathTask::set_random_course(const RandomCourseSpec& spec, double corridor_half_width) {
  if (spec.n < 2) throw std::invalid_argument("a random course needs n >= 2 points");
  random_spec_ = spec;
  random_corridor_ = corridor_half_width;
  random_course_ = true;
}

PathTask::ResetState PathTask::draw_start(const Session&, NumpyDraws& rng) {
  if (random_course_) {
    // In place when only this task holds the last drawn course (drawn_, and path_ when it
    // is the course in use).
    if (!drawn_ || drawn_.use_count() != (path_ == drawn_ ? 2 : 1))
      drawn_ = std::make_shared<PathTracker>();
    thread_local std::vector<double> kappa;  // the draw's scratch
    const bool ok = drawn_->refill([&](std::vector<double>& x, std::vector<double>& y,
                                       std::vector<double>& v, CoursePathBuilder& b) {
      return draw_random_course(random_spec_, rng, x, y, v, kappa, b);
    });
    path_ = drawn_;
    if (!ok)
      throw std::domain_error("the random course drawn is not finite (a path too short for "
                              "its curvature's scale, or bounds that are not finite)");
    static const ConeField kNoCones;
    cones_.share_from(kNoCones);
    params_.corridor_half_width = random_corridor_;
    start_speed_ = drawn_->speed_at(0);
    start_on_drawn_ = true;
    ++course_serial_;
  }
  require_course();
  const double dy = rng.uniform(-kStartNoiseY, kStartNoiseY);
  const double dpsi = rng.uniform(-kStartNoisePsi, kStartNoisePsi);
  const PathTracker& p = *path_;
  const double heading = std::atan2(p.y_at(1) - p.y_at(0), p.x_at(1) - p.x_at(0));
  const double x = p.x_at(0) - std::sin(heading) * dy;
  const double y = p.y_at(0) + std::cos(heading) * dy;
  return {x, y, heading + dpsi, start_speed_, 0.0, 0.0};
}

void path_obs_scale(double max_steer, double* out) {
  const double fixed[kPathObsSize] = {2.0, 0.5, 30.0, 5.0, 1.0, 30.0, 10.0, 10.0,
                                      max_steer, 1.0, 1.0, 0.1,
                                      5.0, 5.0, 5.0, 5.0};
  std::copy(fixed, fixed + kPathObsSize, out);
}

Projection path_observation(const PathTracker& path, int64_t hint, const PathObsInput& in,
                            double max_steer, float* obs, double& e_psi) {
  const Projection p = path.project(in.X, in.Y, hint);
  e_psi = wrap_angle(in.psi - p.heading);
  const double c = std::cos(in.psi), sn = std::sin(in.psi);
  double raw[kPathObsSize] = {p.e_y, e_psi, in.vx, in.vy, in.r, p.v_ref, in.ax, in.ay,
                              in.delta_rw, in.prev_steer, in.prev_long, p.kappa,
                              0.0, 0.0, 0.0, 0.0};
  for (int j = 0; j < 4; ++j) {
    double px, py;
    path.point_at(p.s + kPreviewDistances[j], px, py);
    raw[12 + j] = -sn * (px - in.X) + c * (py - in.Y);
  }
  double scale[kPathObsSize];
  path_obs_scale(max_steer, scale);
  for (int j = 0; j < kPathObsSize; ++j)
    obs[j] = static_cast<float>(std::clamp(raw[j] / scale[j], -kObsClip, kObsClip));
  return p;
}

Command PathTask::command_from_action(const Session& plant, const double* action) const {
  const VehicleParams& p = plant.vehicle();
  const double a_steer = std::clamp(action[0], -1.0, 1.0);
  Command c;
  c.steer = a_steer * p.max_steer;
  c.longitudinal = longitudinal_from_action(plant, action[1]);
  return c;
}

void PathTask::reset(Session& plant, const ResetState& st) {
  plant.reset(st[0], st[1], st[2], st[3], st[4], st[5]);
  cones_.reset_hits();
  // A drawn course's car starts on its first point (draw_start, within 1 m of it): the
  // first projection searches around it, so that a short episode builds only the start
  // of its course. A search of the whole path (hint -1: any other start) would build all
  // of it; around the start it differs only on a course that passes its own start again
  // within the car's offset from it.
  const bool at_start = start_on_drawn_ && path_->size() > 0 &&
                        std::hypot(st[0] - path_->x_at(0), st[1] - path_->y_at(0)) <= 1.0;
  hint_ = at_start ? 0 : -1;
  start_on_drawn_ = false;
  n_scored_ = 0;
  sum_e2_ = max_abs_e_ = pass_speed_ = 0.0;
  passed_ = false;
  slow_since_ = -1.0;
}

void PathTask::summary(const Session&, double* out) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  out[0] = s_prev_;
  out[1] = static_cast<double>(cones_.total_hits());
  out[2] = n_scored_ > 0 ? std::sqrt(sum_e2_ / static_cast<double>(n_scored_)) : nan;
  out[3] = n_scored_ > 0 ? max_abs_e_ : nan;
  out[4] = passed_ ? pass_speed_ : nan;
}

void PathTask::observe(Session& session, const double* action, float* obs) const {
  require_course();
  const State& st = session.state();
  bool finite = true;
  for (double v : st) finite = finite && std::isfinite(v);
  if (!finite) {
    std::fill(obs, obs + kPathObsSize, 0.0f);
    return;
  }
  const Aux& aux = session.aux();
  double e_psi;
  path_observation(*path_, hint_,
                   {st[kX], st[kY], st[kPsi], st[kVx], st[kVy], st[kR], aux.ax, aux.ay,
                    session.realized_steer(), action[0], action[1]},
                   session.vehicle().max_steer, obs, e_psi);
}

void PathTask::require_course() const {
  if (path_->size() < 2)
    throw std::logic_error("the path task has no course: call set_course_data or "
                           "set_random_course before stepping it (the Python env's reset "
                           "sets one)");
}

int PathTask::evaluate(Session& session, const double* action, const double* prev_action,
                       float* obs_out, double* terms_out, double* info_out, bool score) {
  require_course();
  const State& st = session.state();
  const double X = st[kX], Y = st[kY], psi = st[kPsi], vx = st[kVx], vy = st[kVy], r = st[kR];
  const RewardWeights& w = params_.weights;
  int flags = 0;
  bool finite = true;
  for (double v : st) finite = finite && std::isfinite(v);
  if (!finite) {
    std::fill(obs_out, obs_out + kPathObsSize, 0.0f);
    if (terms_out) {
      std::fill(terms_out, terms_out + kTermSize, 0.0);
      terms_out[6] = -w.terminal;
    }
    const double info[kTimingInfo] = {score ? -w.terminal : 0.0, std::nan(""), s_prev_,
                                        session.time(), vx, X, Y, psi, 0.0,
                                        static_cast<double>(cones_.total_hits())};
    std::copy(info, info + kTimingInfo, info_out);
    if (score) {  // the episode's e_y statistics become NaN, as its last e_y is
      ++n_scored_;
      sum_e2_ = max_abs_e_ = std::numeric_limits<double>::quiet_NaN();
    }
    return kNonFinite | kTerminated;
  }

  const Aux& aux = session.aux();
  double e_psi;
  const Projection p = path_observation(
      *path_, hint_,
      {X, Y, psi, vx, vy, r, aux.ax, aux.ay, session.realized_steer(), action[0], action[1]},
      session.vehicle().max_steer, obs_out, e_psi);
  const double control_period =
      static_cast<double>(params_.ticks_per_period) * session.config().substep_dt;
  hint_ = p.index;

  int fresh = 0;
  double reward = 0.0;
  if (score) {
    fresh = cones_.update(X, Y, psi, p.s, footprint_, params_.cone_radius);
    if (fresh > 0) flags |= kConeHit | (params_.terminate_on_cone ? kTerminated : 0);
    if (std::fabs(p.e_y) > params_.corridor_half_width) flags |= kOffCorridor | kTerminated;
    const bool slipping = std::hypot(vx, vy) > params_.beta_min_speed &&
                          std::fabs(std::atan2(vy, vx)) > params_.spin_beta;
    if (std::fabs(e_psi) > params_.spin_heading || slipping) flags |= kSpinOut | kTerminated;
    if (vx < params_.stall_speed_fraction * p.v_ref) {
      if (slow_since_ < 0.0) slow_since_ = session.time();
      if (params_.stall_time > 0.0 && session.time() - slow_since_ >= params_.stall_time)
        flags |= kStalled | kTerminated;
    } else {
      slow_since_ = -1.0;
    }
    if (path_->past_end(p.s) && !(flags & kTerminated)) {
      flags |= kTruncated;
      passed_ = true;
      pass_speed_ = vx;
    }
    ++n_scored_;
    sum_e2_ += p.e_y * p.e_y;
    max_abs_e_ = fmax_inl(max_abs_e_, std::fabs(p.e_y));  // finite: the state is

    const double ds = p.s - s_prev_;
    const double du0 = action[0] - prev_action[0], du1 = action[1] - prev_action[1];
    const double dv = (vx - p.v_ref) / 5.0;
    const double terms[kTermSize] = {
        -w.tracking * p.e_y * p.e_y,
        -w.heading * e_psi * e_psi,
        -w.speed * dv * dv,
        -w.smoothness * (du0 * du0 + du1 * du1),
        w.progress * ds / (fmax_inl(p.v_ref, 1.0) * control_period),
        -w.cone * fresh,
        (flags & kTerminated) ? -w.terminal : 0.0,
    };
    for (int j = 0; j < kTermSize; ++j) reward += terms[j];
    if (terms_out) std::copy(terms, terms + kTermSize, terms_out);
  }
  s_prev_ = p.s;
  const double info[kTimingInfo] = {reward, p.e_y, p.s, session.time(), vx, X, Y, psi,
                                      static_cast<double>(fresh),
                                      static_cast<double>(cones_.total_hits())};
  std::copy(info, info + kTimingInfo, info_out);
  return flags;
}

}  // namespace vdsim
