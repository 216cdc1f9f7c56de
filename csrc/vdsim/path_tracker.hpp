// The reference path of the path task: a polyline with arc length, heading, curvature and
// speed profile, and the projection of the vehicle's CG onto it (path_task.hpp uses it;
// the bindings expose it as PathTracker). Set at reset time; project() runs once per
// control period without allocating.
#pragma once
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "random_course.hpp"

namespace vdsim {

// Into [-pi, pi]; remainder keeps it exact for angles already in range.
inline double wrap_angle(double a) {
  constexpr double kPi = 3.14159265358979323846;
  return std::remainder(a, 2.0 * kPi);
}

// Closest point of the vehicle CG on the reference path.
struct Projection {
  double s = 0.0;        // arc length of the closest point [m] (extends past both ends)
  int64_t index = 0;     // segment index: closest point lies on [index, index + 1]
  double e_y = 0.0;      // signed lateral error, + when the CG is LEFT of the path [m]
  double heading = 0.0;  // path heading at the closest point [rad]
  double kappa = 0.0;    // path curvature there [1/m], + turning left
  double v_ref = 0.0;    // reference speed there [m/s]
};

// Polyline with cumulative arc length, per-point heading (central difference), curvature
// (circle through neighbouring points) and speed profile. The first and last segments
// extend as rays, so s < 0 before the start and s > length() past the end.
class PathTracker {
 public:
  PathTracker() = default;
  PathTracker(const PathTracker& other) { *this = other; }
  PathTracker& operator=(const PathTracker& other);

  void set(const double* xy, const double* speed, int64_t n);  // xy: n x 2, row-major
  // A drawn course written in place (its buffers reused: no allocation once they are big
  // enough): draw(x, y, speed, path) resizes this tracker's point vectors, fills the
  // speeds and the start point, sets up `path` (CoursePathBuilder) and returns whether it
  // succeeded. The other points and their arc lengths are built as far as they are read
  // (ensure), the same doubles as built at once. On failure the tracker is left empty.
  template <class Draw>
  bool refill(Draw&& draw) {
    if (!draw(x_, y_, v_, builder_)) {
      x_.clear(), y_.clear(), v_.clear(), s_.clear(), seg_len_.clear();
      built_.store(0, std::memory_order_release);
      return false;
    }
    built_.store(size_lengths() > 0 ? 1 : 0, std::memory_order_release);
    return true;
  }
  // Local search in a window around hint (segment index); hint < 0 or a minimum at the
  // window's edge falls back to a search over the whole path.
  Projection project(double x, double y, int64_t hint) const;
  void point_at(double s, double& x, double& y) const;  // linear, extrapolated at the ends
  double length() const {
    ensure(size());
    return s_.empty() ? 0.0 : s_.back();
  }
  // s >= length(), without building the path past s where it already reaches beyond it.
  bool past_end(double s) const;
  int64_t size() const { return static_cast<int64_t>(x_.size()); }
  // How many points are built (size() but for a drawn course not yet read to its end).
  int64_t points_built() const { return built_.load(std::memory_order_acquire); }
  // Heading at point i: the central difference's, atan2 of its neighbours' offset (the
  // ends: their segment's). Computed when asked (a projection asks for two): a course
  // set per episode costs no table of them.
  double heading_at(int64_t i) const;
  double x_at(int64_t i) const {
    ensure(i + 1);
    return x_[i];
  }
  double y_at(int64_t i) const {
    ensure(i + 1);
    return y_[i];
  }
  double speed_at(int64_t i) const { return v_[i]; }
  // Curvature at point i: the signed circle through it and its neighbours (Menger; the
  // ends: their neighbour's), computed when asked, as heading_at.
  double kappa_at(int64_t i) const;
  // The first segment of zero length (repeated points), or -1.
  int64_t first_zero_segment() const {
    ensure(size());
    for (size_t i = 0; i < seg_len_.size(); ++i)
      if (!(seg_len_[i] > 0.0)) return static_cast<int64_t>(i);
    return -1;
  }

  // Segments searched either side of the hint: a car moves ~2 segments (0.25 m) per 20 ms
  // at 25 m/s; a minimum on the window's edge falls back to the global search.
  static constexpr int64_t kWindow = 16;

  // Every member, for the archive (archive.hpp), under the grow lock as the copy takes it:
  // the points, the lengths built so far, the builder's state and the unbuilt points'
  // intermediate values (a drawn course grows on after reading as it would have). grow_
  // is a mutex: not written.
  template <class Ar>
  void archive(Ar& ar) {
    std::lock_guard<std::mutex> lock(grow_);
    ar(x_, y_, s_, seg_len_, v_, builder_, built_);
    ar.skip(grow_);
  }

 private:
  // Best segment in [lo, hi); writes squared distance and parameter t.
  int64_t search(double x, double y, int64_t lo, int64_t hi, double& best_d2) const;
  void segment_param(int64_t i, double x, double y, double& t, double& d2) const;

  // Points [0, points) built (at most size()): a drawn course's path grows here, under a
  // lock (copies of a task share their tracker across threads); a built point never
  // changes, so readers of built points need no lock.
  void ensure(int64_t points) const {
    if (points > built_.load(std::memory_order_acquire)) grow(points);
  }
  void grow(int64_t points) const;
  int64_t size_lengths();  // s_ and seg_len_ sized for the points, s_[0] = 0; size()
  void set_lengths(int64_t from, int64_t to) const;  // segments [from, to)

  // Mutable: a drawn course's points and arc lengths past built_ are filled by ensure()
  // from const readers; the values are those of the course built at once.
  mutable std::vector<double> x_, y_, s_, seg_len_;
  std::vector<double> v_;
  mutable CoursePathBuilder builder_;
  mutable std::atomic<int64_t> built_{0};
  mutable std::mutex grow_;
};

}  // namespace vdsim
