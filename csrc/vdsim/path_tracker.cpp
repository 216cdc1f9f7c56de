#include "path_tracker.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace vdsim {

// ---------------------------------------------------------------- PathTracker

PathTracker& PathTracker::operator=(const PathTracker& other) {
  if (this == &other) return *this;
  std::lock_guard<std::mutex> lock(other.grow_);
  x_ = other.x_, y_ = other.y_, s_ = other.s_, seg_len_ = other.seg_len_, v_ = other.v_;
  builder_ = other.builder_;
  built_.store(other.built_.load(std::memory_order_acquire), std::memory_order_release);
  return *this;
}

void PathTracker::set(const double* xy, const double* speed, int64_t n) {
  x_.resize(n);
  y_.resize(n);
  v_.assign(speed, speed + n);
  for (int64_t i = 0; i < n; ++i) {
    x_[i] = xy[2 * i];
    y_[i] = xy[2 * i + 1];
  }
  size_lengths();
  set_lengths(0, n > 1 ? n - 1 : 0);
  built_.store(n, std::memory_order_release);
}

int64_t PathTracker::size_lengths() {
  const int64_t n = size();
  s_.resize(n);
  seg_len_.resize(n > 1 ? n - 1 : 0);
  if (n > 0) s_[0] = 0.0;
  return n;
}

void PathTracker::set_lengths(int64_t from, int64_t to) const {
  for (int64_t i = from; i < to; ++i) {
    seg_len_[i] = std::hypot(x_[i + 1] - x_[i], y_[i + 1] - y_[i]);
    s_[i + 1] = s_[i] + seg_len_[i];
  }
}

void PathTracker::grow(int64_t points) const {
  std::lock_guard<std::mutex> lock(grow_);
  const int64_t n = size(), built = built_.load(std::memory_order_relaxed);
  if (points <= built) return;
  // At least 64 more points at a time: a step reads a few past the last.
  const int64_t upto = std::min(n, std::max(points, built + 64));
  builder_.build(upto - 1, x_.data(), y_.data());
  set_lengths(built - 1, upto - 1);
  built_.store(upto, std::memory_order_release);
}

bool PathTracker::past_end(double s) const {
  const int64_t built = built_.load(std::memory_order_acquire);
  if (built > 0 && built < size() && s < s_[built - 1]) return false;  // length >= s_[built - 1]
  return s >= length();
}

double PathTracker::heading_at(int64_t i) const {
  const int64_t n = size();
  if (n < 2) return 0.0;
  const int64_t a = i > 0 ? i - 1 : 0, b = i + 1 < n ? i + 1 : n - 1;
  ensure(b + 1);
  return std::atan2(y_[b] - y_[a], x_[b] - x_[a]);
}

double PathTracker::kappa_at(int64_t i) const {
  const int64_t n = size();
  if (n < 3) return 0.0;
  i = std::clamp<int64_t>(i, 1, n - 2);  // the ends take their neighbour's
  ensure(i + 2);
  const double ax = x_[i] - x_[i - 1], ay = y_[i] - y_[i - 1];
  const double bx = x_[i + 1] - x_[i], by = y_[i + 1] - y_[i];
  const double cx = x_[i + 1] - x_[i - 1], cy = y_[i + 1] - y_[i - 1];
  // |a| and |b| are the segment lengths (the same hypot of the same differences).
  const double den = seg_len_[i - 1] * seg_len_[i] * std::hypot(cx, cy);
  return den > 0.0 ? 2.0 * (ax * by - ay * bx) / den : 0.0;
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
  // A long search (the whole path: a reset's first projection) skips the segments that
  // cannot come closer than the best so far: an inner segment lies within its length of
  // its start, so its distance is at least |P - start| - length. The margin (1e-7 of the
  // distances, and 1e-9 of the coordinates' size) is far above the roundings of either
  // distance, so a skipped segment's d2 would have been larger than the best's: the same
  // segment is found. The end segments extend as rays and are never skipped.
  const bool prune = hi - lo > 4 * kWindow;
  const int64_t last = size() - 2;
  double reach = std::numeric_limits<double>::infinity();  // sqrt(best_d2), with margin
  for (int64_t i = lo; i < hi; ++i) {
    if (prune && i > 0 && i < last) {
      const double ex = x - x_[i], ey = y - y_[i];
      const double size =
          1.0 + std::fabs(x) + std::fabs(y) + std::fabs(x_[i]) + std::fabs(y_[i]);
      const double bound = reach + seg_len_[i] * (1.0 + 1e-7) + 1e-9 * size;
      if (ex * ex + ey * ey > bound * bound) continue;
    }
    double t, d2;
    segment_param(i, x, y, t, d2);
    if (d2 < best_d2) {
      best_d2 = d2;
      best = i;
      reach = std::sqrt(d2) * (1.0 + 1e-7);
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
    ensure(hi + 1);
    i = search(x, y, lo, hi, d2);
    // A minimum on the window's edge may continue outside it: search everything.
    if ((i == lo && lo > 0) || (i == hi - 1 && hi < nseg)) {
      ensure(nseg + 1);
      i = search(x, y, 0, nseg, d2);
    }
  } else {
    ensure(nseg + 1);
    i = search(x, y, 0, nseg, d2);
  }
  ensure(std::min(nseg + 1, i + 3));  // the headings and curvatures at i and i + 1
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
  const double h0 = heading_at(i), h1 = heading_at(i + 1);
  p.heading = wrap_angle(h0 + w * wrap_angle(h1 - h0));
  const double k0 = kappa_at(i), k1 = kappa_at(i + 1);
  p.kappa = k0 + w * (k1 - k0);
  p.v_ref = v_[i] + w * (v_[i + 1] - v_[i]);
  return p;
}

void PathTracker::point_at(double s, double& x, double& y) const {
  const int64_t n = size(), nseg = n - 1;
  // Built until the path reaches past s (s_ rises: the points past hold no smaller s).
  int64_t built = built_.load(std::memory_order_acquire);
  while (built < n && !(built > 0 && s < s_[built - 1])) {
    ensure(built + 64);
    built = built_.load(std::memory_order_acquire);
  }
  int64_t i = std::upper_bound(s_.begin(), s_.begin() + built, s) - s_.begin() - 1;
  i = std::clamp<int64_t>(i, 0, nseg - 1);
  const double t = seg_len_[i] > 0.0 ? (s - s_[i]) / seg_len_[i] : 0.0;
  x = x_[i] + t * (x_[i + 1] - x_[i]);
  y = y_[i] + t * (y_[i + 1] - y_[i]);
}

}  // namespace vdsim
