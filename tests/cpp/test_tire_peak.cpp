// csrc/vdsim/tire.hpp: mf_peak_u, the Magic Formula curve's peak slip by bisection.
//
// Expectation from its comment: it stops once an iteration leaves (lo, hi) unchanged,
// which gives the same double as all 200 iterations. The reference below is the plain
// 200-iteration bisection, checked bit for bit over a grid of shape factors C and
// curvatures E, the generic sedan's curves among them (longitudinal C 1.65, E 0.97;
// lateral C 1.3, E -1), and a degenerate curve whose root lies beyond the search cap.
#include <cmath>
#include <cstdint>
#include <utility>

#include "check.hpp"
#include "vdsim/tire.hpp"

namespace {

double reference_peak_u(const vdsim::MFCurve& c) {
  const double target = std::tan(M_PI / (2.0 * c.C));
  double lo = 0.0, hi = 1.0;
  auto f = [&](double u) { return (1.0 - c.E) * u + c.E * std::atan(u) - target; };
  while (f(hi) < 0.0 && hi < 1e6) hi *= 2.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < 0.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

using vdsim_test::bits;

int main() {
  int cases = 0, mismatches = 0;
  for (int ic = 0; ic <= 40; ++ic) {
    for (int ie = 0; ie <= 40; ++ie) {
      vdsim::MFCurve c;
      c.C = 1.05 + 0.0475 * ic;   // 1.05 .. 2.95
      c.E = -2.0 + 0.07475 * ie;  // -2 .. 0.99
      ++cases;
      mismatches += bits(vdsim::mf_peak_u(c)) != bits(reference_peak_u(c));
    }
  }
  CHECK_EQ(cases, 41 * 41);
  CHECK_EQ(mismatches, 0);
  for (const auto& [C, E] : {std::pair{1.65, 0.97}, std::pair{1.3, -1.0}}) {  // the sedan's
    vdsim::MFCurve c;
    c.C = C;
    c.E = E;
    CHECK_EQ(bits(vdsim::mf_peak_u(c)), bits(reference_peak_u(c)));
  }
  vdsim::MFCurve flat;  // E close to 1 and C close to 1: the root beyond the cap of 1e6
  flat.C = 1.0000001;
  flat.E = 0.999;
  CHECK_EQ(bits(vdsim::mf_peak_u(flat)), bits(reference_peak_u(flat)));
  vdsim::MFCurve sedan;
  sedan.C = 1.65;
  sedan.E = 0.97;
  const double u = vdsim::mf_peak_u(sedan);
  // At the peak the shape's argument reaches pi / 2: C atan(u - E (u - atan(u))) = pi / 2.
  CHECK(std::fabs(sedan.C * std::atan(u - sedan.E * (u - std::atan(u))) - M_PI / 2) < 1e-12);
  return vdsim_test::check_summary("test_tire_peak");
}
