// csrc/vdsim/random_course.hpp: libm_cube, pow(x, 3) as the C library computes it.
//
// Expectation from its comment: the same double as std::pow(x, 3.0) for every x, the
// call skipped only where the double nearest the exact cube is certain to be pow's
// result. The reference
// is the C library's pow itself (exponent volatile, so the compiler cannot fold it), over
// x spread log-uniformly across 1e-120 .. 1e120 (both sides of the splits' range), the
// ramp's t in [0, 1), x near powers of two and near cube roots of powers of two, x whose
// cube lies near a rounding midpoint, signed zeros, infinities and NaN. It also checks
// that the fast path is taken for most t (the point of the function).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check.hpp"
#include "vdsim/random_course.hpp"

using vdsim_test::bits;

namespace {

double libm_pow3(double x) {
  volatile double three = 3.0;
  return std::pow(x, three);
}

bool same(double x) { return bits(vdsim::libm_cube(x)) == bits(libm_pow3(x)); }

}  // namespace

int main() {
  std::mt19937_64 gen(20261207);
  std::uniform_real_distribution<double> log_mag(std::log(1e-120), std::log(1e120));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t mismatches = 0, fast = 0, n = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = (i % 2 ? -1.0 : 1.0) * std::exp(log_mag(gen));
    mismatches += !same(x);
    ++n;
  }
  CHECK_EQ(mismatches, 0);
  // The ramp's t = s / 20 in [0, 1), and how often the call is skipped.
  mismatches = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double t = unit(gen);
    mismatches += !same(t);
    double r;
    fast += vdsim::cube_without_pow(t, r) ? 1 : 0;
  }
  CHECK_EQ(mismatches, 0);
  CHECK_MSG(fast > 1700000, "the call was skipped for only " << fast << " of 2e6");
  // Near powers of two and their cube roots: the binade edges of x and of x^3.
  mismatches = 0;
  for (int e = -90; e <= 90; ++e) {
    for (const double base : {std::ldexp(1.0, e), std::ldexp(std::cbrt(2.0), e),
                              std::ldexp(std::cbrt(4.0), e)}) {
      double x = base;
      for (int k = 0; k < 64; ++k) x = std::nextafter(x, 0.0);
      for (int k = 0; k < 128; ++k, x = std::nextafter(x, 1e300)) mismatches += !same(x);
    }
  }
  CHECK_EQ(mismatches, 0);
  // Cubes next to a rounding midpoint: x = (2^17 + j) 2^-17 has an exact cube of 52
  // bits or more; with x's 18 bits it is 1 + 3j 2^-17 + 3j^2 2^-34 + j^3 2^-51, whose bits
  // past the 52nd make ties and near-ties for many j.
  mismatches = 0;
  for (int j = 1; j < 20000; ++j) {
    const double x = std::ldexp(131072.0 + j, -17);
    mismatches += !same(x) + !same(std::nextafter(x, 0.0)) + !same(std::nextafter(x, 2.0));
  }
  CHECK_EQ(mismatches, 0);
  const double inf = std::numeric_limits<double>::infinity();
  for (const double x : {0.0, -0.0, inf, -inf, 1e-300, 1e300, 1e100, -1e-100, 1e-90, 1e90,
                         std::numeric_limits<double>::denorm_min(), 1.0, -1.0, 0.5})
    CHECK_MSG(same(x), "x = " << x);
  CHECK(std::isnan(vdsim::libm_cube(std::numeric_limits<double>::quiet_NaN())));
  CHECK(n == 2000000);
  return vdsim_test::check_summary("test_libm_cube");
}
