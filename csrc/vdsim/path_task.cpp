#include "path_task.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace vdsim {

namespace {

constexpr double kPi = 3.14159265358979323846;

inline double wrap_angle(double a) {
  // Into [-pi, pi]; remainder keeps it exact for angles already in range.
  return std::remainder(a, 2.0 * kPi);
}

}  // namespace

// ---------------------------------------------------------------- PathTracker

void PathTracker::set(const double* xy, const double* speed, int64_t n) {
  x_.resize(n);
  y_.resize(n);
  v_.assign(speed, speed + n);
  s_.assign(n, 0.0);
  seg_len_.assign(n > 1 ? n - 1 : 0, 0.0);
  heading_.assign(n, 0.0);
  kappa_.assign(n, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    x_[i] = xy[2 * i];
    y_[i] = xy[2 * i + 1];
  }
  for (int64_t i = 0; i + 1 < n; ++i) {
    seg_len_[i] = std::hypot(x_[i + 1] - x_[i], y_[i + 1] - y_[i]);
    s_[i + 1] = s_[i] + seg_len_[i];
  }
  if (n < 2) return;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t a = i > 0 ? i - 1 : 0, b = i + 1 < n ? i + 1 : n - 1;
    heading_[i] = std::atan2(y_[b] - y_[a], x_[b] - x_[a]);
  }
  // Curvature of the circle through each point and its neighbours (Menger), signed.
  for (int64_t i = 1; i + 1 < n; ++i) {
    const double ax = x_[i] - x_[i - 1], ay = y_[i] - y_[i - 1];
    const double bx = x_[i + 1] - x_[i], by = y_[i + 1] - y_[i];
    const double cx = x_[i + 1] - x_[i - 1], cy = y_[i + 1] - y_[i - 1];
    const double den = std::hypot(ax, ay) * std::hypot(bx, by) * std::hypot(cx, cy);
    kappa_[i] = den > 0.0 ? 2.0 * (ax * by - ay * bx) / den : 0.0;
  }
  if (n >= 3) {
    kappa_[0] = kappa_[1];
    kappa_[n - 1] = kappa_[n - 2];
  }
}

void PathTracker::segment_param(int64_t i, double x, double y, double& t, double& d2) const {
  const double dx = x_[i + 1] - x_[i], dy = y_[i + 1] - y_[i];
  const double l2 = dx * dx + dy * dy;
  t = l2 > 0.0 ? ((x - x_[i]) * dx + (y - y_[i]) * dy) / l2 : 0.0;
  const int64_t last = static_cast<int64_t>(x_.size()) - 2;
  // The end segments extend as rays: no clamp before the start or past the end.
  if (t < 0.0 && i > 0) t = 0.0;
  if (t > 1.0 && i < last) t = 1.0;
  double qx, qy;
  if (t == 0.0) { qx = x_[i]; qy = y_[i]; }
  else if (t == 1.0) { qx = x_[i + 1]; qy = y_[i + 1]; }
  else { qx = x_[i] + t * dx; qy = y_[i] + t * dy; }
  d2 = (x - qx) * (x - qx) + (y - qy) * (y - qy);
}

int64_t PathTracker::search(double x, double y, int64_t lo, int64_t hi, double& best_d2) const {
  int64_t best = lo;
  best_d2 = std::numeric_limits<double>::infinity();
  for (int64_t i = lo; i < hi; ++i) {
    double t, d2;
    segment_param(i, x, y, t, d2);
    if (d2 < best_d2) {
      best_d2 = d2;
      best = i;
    }
  }
  return best;
}

Projection PathTracker::project(double x, double y, int64_t hint) const {
  const int64_t nseg = size() - 1;
  double d2;
  int64_t i;
  if (hint >= 0 && hint < nseg) {
    const int64_t lo = std::max<int64_t>(0, hint - kWindow);
    const int64_t hi = std::min<int64_t>(nseg, hint + kWindow + 1);
    i = search(x, y, lo, hi, d2);
    // A minimum on the window's edge may continue outside it: search everything.
    if ((i == lo && lo > 0) || (i == hi - 1 && hi < nseg)) i = search(x, y, 0, nseg, d2);
  } else {
    i = search(x, y, 0, nseg, d2);
  }
  double t;
  segment_param(i, x, y, t, d2);
  const double dx = x_[i + 1] - x_[i], dy = y_[i + 1] - y_[i];
  const double qx = x_[i] + t * dx, qy = y_[i] + t * dy;
  const double cross = dx * (y - qy) - dy * (x - qx);
  const double w = std::clamp(t, 0.0, 1.0);
  Projection p;
  p.index = i;
  p.s = s_[i] + t * seg_len_[i];
  p.e_y = std::copysign(std::sqrt(d2), cross);
  p.heading = wrap_angle(heading_[i] + w * wrap_angle(heading_[i + 1] - heading_[i]));
  p.kappa = kappa_[i] + w * (kappa_[i + 1] - kappa_[i]);
  p.v_ref = v_[i] + w * (v_[i + 1] - v_[i]);
  return p;
}

void PathTracker::point_at(double s, double& x, double& y) const {
  const int64_t nseg = size() - 1;
  int64_t i = std::upper_bound(s_.begin(), s_.end(), s) - s_.begin() - 1;
  i = std::clamp<int64_t>(i, 0, nseg - 1);
  const double t = seg_len_[i] > 0.0 ? (s - s_[i]) / seg_len_[i] : 0.0;
  x = x_[i] + t * (x_[i + 1] - x_[i]);
  y = y_[i] + t * (y_[i + 1] - y_[i]);
}

// ---------------------------------------------------------------- cones

// The footprint's heading enters as (cos psi, sin psi), computed once per car pose rather
// than once per cone.
static bool disc_hits_footprint_cs(double cx, double cy, double radius, double x, double y,
                                   double c, double sn, const Footprint& fp) {
  const double dx = cx - x, dy = cy - y;
  const double lx = c * dx + sn * dy, ly = -sn * dx + c * dy;  // body frame
  const double qx = std::clamp(lx, -fp.rear, fp.front);
  const double qy = std::clamp(ly, -fp.half_width, fp.half_width);
  return (lx - qx) * (lx - qx) + (ly - qy) * (ly - qy) <= radius * radius;
}

bool disc_hits_footprint(double cx, double cy, double radius, double x, double y, double psi,
                         const Footprint& fp) {
  return disc_hits_footprint_cs(cx, cy, radius, x, y, std::cos(psi), std::sin(psi), fp);
}

void ConeField::set(const double* xy, int64_t n, const PathTracker& path) {
  cx_.resize(n);
  cy_.resize(n);
  std::vector<double> s(n);
  for (int64_t k = 0; k < n; ++k) {
    cx_[k] = xy[2 * k];
    cy_[k] = xy[2 * k + 1];
    s[k] = path.project(cx_[k], cy_[k], -1).s;
  }
  sorted_idx_.resize(n);
  std::iota(sorted_idx_.begin(), sorted_idx_.end(), int64_t{0});
  std::stable_sort(sorted_idx_.begin(), sorted_idx_.end(),
                   [&](int64_t a, int64_t b) { return s[a] < s[b]; });
  sorted_s_.resize(n);
  for (int64_t k = 0; k < n; ++k) sorted_s_[k] = s[sorted_idx_[k]];
  hit_.assign(n, 0);
  total_ = 0;
}

void ConeField::reset_hits() {
  std::fill(hit_.begin(), hit_.end(), 0);
  total_ = 0;
}

int ConeField::update(double x, double y, double psi, double s, const Footprint& fp,
                      double radius) {
  // Any footprint point is within reach of the CG; kMargin covers the stretch of arc
  // length for points off the path on a bend (see docs/ENVS.md).
  const double lo = s - fp.rear - radius - kMargin, hi = s + fp.front + radius + kMargin;
  auto k = std::lower_bound(sorted_s_.begin(), sorted_s_.end(), lo) - sorted_s_.begin();
  int fresh = 0;
  const int64_t n = size();
  if (k >= n || sorted_s_[k] > hi) return 0;  // no cone near: no trigonometry
  const double cs = std::cos(psi), sn = std::sin(psi);
  for (; k < n && sorted_s_[k] <= hi; ++k) {
    const int64_t c = sorted_idx_[k];
    if (hit_[c]) continue;
    if (disc_hits_footprint_cs(cx_[c], cy_[c], radius, x, y, cs, sn, fp)) {
      hit_[c] = 1;
      ++fresh;
    }
  }
  total_ += fresh;
  return fresh;
}

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
  s.flags = {{"cone_hit", kConeHit}, {"off_corridor", kOffCorridor}, {"spin_out", kSpinOut},
             {"non_finite", kNonFinite}, {"stalled", kStalled}};
  return s;
}

void PathTask::set_course(const double* path_xy, const double* speed, int64_t n_points,
                          const double* cones_xy, int64_t n_cones, double corridor_half_width) {
  path_.set(path_xy, speed, n_points);
  cones_.set(cones_xy, n_cones, path_);
  params_.corridor_half_width = corridor_half_width;
  hint_ = -1;
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
  hint_ = -1;
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

int PathTask::evaluate(Session& session, const double* action, const double* prev_action,
                       float* obs_out, double* terms_out, double* info_out, bool score) {
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
      path_, hint_,
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
    if (p.s >= path_.length() && !(flags & kTerminated)) {
      flags |= kTruncated;
      passed_ = true;
      pass_speed_ = vx;
    }
    ++n_scored_;
    sum_e2_ += p.e_y * p.e_y;
    max_abs_e_ = std::fmax(max_abs_e_, std::fabs(p.e_y));  // finite: the state is

    const double ds = p.s - s_prev_;
    const double du0 = action[0] - prev_action[0], du1 = action[1] - prev_action[1];
    const double dv = (vx - p.v_ref) / 5.0;
    const double terms[kTermSize] = {
        -w.tracking * p.e_y * p.e_y,
        -w.heading * e_psi * e_psi,
        -w.speed * dv * dv,
        -w.smoothness * (du0 * du0 + du1 * du1),
        w.progress * ds / (std::fmax(p.v_ref, 1.0) * control_period),
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
