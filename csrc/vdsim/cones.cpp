#include "cones.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vdsim {

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
  auto g = std::make_shared<Geometry>();
  g->cx.resize(n);
  g->cy.resize(n);
  std::vector<double> s(n);
  for (int64_t k = 0; k < n; ++k) {
    g->cx[k] = xy[2 * k];
    g->cy[k] = xy[2 * k + 1];
    s[k] = path.project(g->cx[k], g->cy[k], -1).s;
  }
  g->sorted_idx.resize(n);
  std::iota(g->sorted_idx.begin(), g->sorted_idx.end(), int64_t{0});
  std::stable_sort(g->sorted_idx.begin(), g->sorted_idx.end(),
                   [&](int64_t a, int64_t b) { return s[a] < s[b]; });
  g->sorted_s.resize(n);
  for (int64_t k = 0; k < n; ++k) g->sorted_s[k] = s[g->sorted_idx[k]];
  geo_ = std::move(g);
  hit_.assign(n, 0);
  total_ = 0;
}

void ConeField::share_from(const ConeField& other) {
  geo_ = other.geo_;
  hit_.assign(static_cast<size_t>(size()), 0);
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
  const auto& sorted_s_ = geo_->sorted_s;
  const auto& sorted_idx_ = geo_->sorted_idx;
  const auto& cx_ = geo_->cx;
  const auto& cy_ = geo_->cy;
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

}  // namespace vdsim
