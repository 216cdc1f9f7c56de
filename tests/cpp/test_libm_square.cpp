// csrc/vdsim/random_course.hpp: libm_square, pow(x, 2) as the C library computes it.
//
// Expectation from its comment: the same double as std::pow(x, 2.0) for every x, the
// call skipped only where x * x is certain to be pow's result. The reference is the C
// library's pow itself (exponent volatile, so the compiler cannot fold it into x * x),
// over x spread log-uniformly across 1e-160 .. 1e160 (both sides of the split's range),
// x near powers of two and near square roots of powers of two, x whose square lies near
// a rounding midpoint, signed zeros, infinities and NaN. It also checks that the fast
// path is taken for most x (the point of the function).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check.hpp"
#include "vdsim/random_course.hpp"

using vdsim_test::bits;

namespace {

double libm_pow2(double x) {
  volatile double two = 2.0;
  return std::pow(x, two);
}

bool same(double x) { return bits(vdsim::libm_square(x)) == bits(libm_pow2(x)); }

}  // namespace

int main() {
  std::mt19937_64 gen(20261205);
  std::uniform_real_distribution<double> log_mag(std::log(1e-160), std::log(1e160));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t mismatches = 0, fast = 0, n = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = (i % 2 ? -1.0 : 1.0) * std::exp(log_mag(gen));
    mismatches += !same(x);
    ++n;
  }
  CHECK_EQ(mismatches, 0);
  // Speeds as the courses have them: 0.5 .. 40 m/s, and how often x * x is taken.
  mismatches = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = 0.5 + 39.5 * unit(gen);
    mismatches += !same(x);
    const double hi = x * x;
    fast += bits(hi) == bits(vdsim::libm_square(x)) ? 1 : 0;
  }
  CHECK_EQ(mismatches, 0);
  CHECK_MSG(fast > 1800000, "x * x was pow's result for only " << fast << " of 2e6");
  // Near powers of two and their square roots: the binade edges of x and of x^2.
  mismatches = 0;
  for (int e = -100; e <= 100; ++e) {
    for (const double base : {std::ldexp(1.0, e), std::ldexp(std::sqrt(2.0), e)}) {
      double x = base;
      for (int k = 0; k < 64; ++k) x = std::nextafter(x, 0.0);
      for (int k = 0; k < 128; ++k, x = std::nextafter(x, 1e300)) mismatches += !same(x);
    }
  }
  CHECK_EQ(mismatches, 0);
  // Squares at or next to a rounding midpoint: x = (2^26 + j) 2^-26 has x^2 = 1 +
  // j 2^-25 + j^2 2^-52 exactly, a tie when j is odd; its neighbours lie just off it.
  mismatches = 0;
  for (int j = 1; j < 20000; ++j) {
    const double x = std::ldexp(67108864.0 + j, -26);
    mismatches += !same(x) + !same(std::nextafter(x, 0.0)) + !same(std::nextafter(x, 2.0));
  }
  CHECK_EQ(mismatches, 0);
  const double inf = std::numeric_limits<double>::infinity();
  for (const double x : {0.0, -0.0, inf, -inf, 1e-300, 1e300, 1e200, -1e-200,
                         std::numeric_limits<double>::denorm_min(), 1.0, -1.0})
    CHECK_MSG(same(x), "x = " << x);
  CHECK(std::isnan(vdsim::libm_square(std::numeric_limits<double>::quiet_NaN())));
  CHECK(n == 2000000);
  return vdsim_test::check_summary("test_libm_square");
}
