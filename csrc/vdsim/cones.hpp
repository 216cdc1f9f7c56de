// The cones of a course: the vehicle's footprint, the disc-footprint test and the cone
// field that counts each cone hit once per episode, searching only cones near the car's
// arc length on the path (path_task.hpp uses it).
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "path_tracker.hpp"

namespace vdsim {

// Vehicle footprint around the CG, body frame [m].
struct Footprint {
  double front = 0.0;       // CG to front bumper
  double rear = 0.0;        // CG to rear bumper
  double half_width = 0.0;  // half body width
  template <class Ar>
  void archive(Ar& ar) { ar(front, rear, half_width); }
};

// True when the disc (cx, cy, radius) intersects the footprint at pose (x, y, psi).
bool disc_hits_footprint(double cx, double cy, double radius, double x, double y, double psi,
                         const Footprint& fp);

// Cones sorted by their projection on the path so that only those near the vehicle are
// tested; each cone counts once per episode. The cones' geometry is immutable once set and
// shared between the fields of the same course (share_from: many envs on one course hold
// one copy); each field keeps its own hits.
class ConeField {
 public:
  void set(const double* xy, int64_t n, const PathTracker& path);
  // The geometry of `other` (shared, not copied), with no hits.
  void share_from(const ConeField& other);
  void reset_hits();
  // Marks cones newly hit at this pose (vehicle at arc length s); returns how many.
  int update(double x, double y, double psi, double s, const Footprint& fp, double radius);
  int64_t size() const { return static_cast<int64_t>(geo_->cx.size()); }
  int total_hits() const { return total_; }
  const std::vector<uint8_t>& hits() const { return hit_; }  // original cone order

  static constexpr double kMargin = 5.0;  // extra arc length searched around the car [m]

  // Every member, for the archive (archive.hpp): the geometry as its pointee (once per
  // blob), this field's hits.
  template <class Ar>
  void archive(Ar& ar) {
    ar(geo_, hit_, total_);
    if constexpr (Ar::kReading) {
      if (!geo_ || hit_.size() != geo_->cx.size())
        throw std::invalid_argument("vdsim archive: a cone field whose hits do not match it");
    }
  }

 private:
  struct Geometry {
    std::vector<double> cx, cy;        // original order
    std::vector<double> sorted_s;      // cone arc lengths, ascending
    std::vector<int64_t> sorted_idx;   // original index of each sorted entry
    template <class Ar>
    void archive(Ar& ar) { ar(cx, cy, sorted_s, sorted_idx); }
  };
  std::shared_ptr<const Geometry> geo_ = std::make_shared<const Geometry>();
  std::vector<uint8_t> hit_;
  int total_ = 0;
};

}  // namespace vdsim
