// csrc/vdsim/random_course.hpp: libm_square and libm_cube, pow(x, 2) and pow(x, 3) as the
// C library computes them.
//
// Expectation from their comments: the same double as std::pow(x, 2.0) (std::pow(x, 3.0))
// for every x, the call skipped only where the double nearest the exact power is certain
// to be pow's result. The reference is the C library's pow itself (exponent volatile, so
// the compiler cannot fold it), over x spread log-uniformly across both sides of the
// splits' range, the values the courses have (speeds 0.5 .. 40 m/s; the ramp's t in
// [0, 1)), x at the binade edges of x and of its power, powers at or next to a rounding
// midpoint, signed zeros, infinities and NaN. It also checks that the fast path is taken
// for most of the courses' values (the point of the functions).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check.hpp"
#include "vdsim/random_course.hpp"

using vdsim_test::bits;

namespace {

double libm_pow(double x, double y) {
  volatile double e = y;
  return std::pow(x, e);
}

// A power's function against pow: the mismatches over a sweep of x.
struct Power {
  double (*fast)(double);
  double exponent;
  bool same(double x) const { return bits(fast(x)) == bits(libm_pow(x, exponent)); }
};

int64_t log_sweep(const Power& p, std::mt19937_64& gen, double lo, double hi, int count) {
  std::uniform_real_distribution<double> log_mag(std::log(lo), std::log(hi));
  int64_t mismatches = 0;
  for (int i = 0; i < count; ++i)
    mismatches += !p.same((i % 2 ? -1.0 : 1.0) * std::exp(log_mag(gen)));
  return mismatches;
}

// x from 64 doubles below to 64 above each base * 2^e.
int64_t binade_edges(const Power& p, int e_max, std::initializer_list<double> bases) {
  int64_t mismatches = 0;
  for (int e = -e_max; e <= e_max; ++e) {
    for (const double base : bases) {
      double x = std::ldexp(base, e);
      for (int k = 0; k < 64; ++k) x = std::nextafter(x, 0.0);
      for (int k = 0; k < 128; ++k, x = std::nextafter(x, 1e300)) mismatches += !p.same(x);
    }
  }
  return mismatches;
}

// x = (2^bits + j) 2^-bits and its neighbours: an exact power of few bits past the 52nd,
// ties and near-ties for many j.
int64_t near_midpoints(const Power& p, double two_bits, int bits_) {
  int64_t mismatches = 0;
  for (int j = 1; j < 20000; ++j) {
    const double x = std::ldexp(two_bits + j, -bits_);
    mismatches += !p.same(x) + !p.same(std::nextafter(x, 0.0)) + !p.same(std::nextafter(x, 2.0));
  }
  return mismatches;
}

void specials(const Power& p, std::initializer_list<double> xs) {
  for (const double x : xs) CHECK_MSG(p.same(x), "x = " << x << ", exponent " << p.exponent);
  CHECK(std::isnan(p.fast(std::numeric_limits<double>::quiet_NaN())));
}

}  // namespace

int main() {
  std::mt19937_64 gen(20261205);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double denorm = std::numeric_limits<double>::denorm_min();

  // pow(x, 2)
  const Power square{vdsim::libm_square, 2.0};
  CHECK_EQ(log_sweep(square, gen, 1e-160, 1e160, 2000000), 0);
  int64_t mismatches = 0, fast = 0;
  for (int i = 0; i < 2000000; ++i) {  // speeds as the courses have them
    const double x = 0.5 + 39.5 * unit(gen);
    mismatches += !square.same(x);
    fast += bits(x * x) == bits(vdsim::libm_square(x)) ? 1 : 0;
  }
  CHECK_EQ(mismatches, 0);
  CHECK_MSG(fast > 1800000, "x * x was pow's result for only " << fast << " of 2e6");
  CHECK_EQ(binade_edges(square, 100, {1.0, std::sqrt(2.0)}), 0);
  // x = (2^26 + j) 2^-26: x^2 = 1 + j 2^-25 + j^2 2^-52 exactly, a tie when j is odd.
  CHECK_EQ(near_midpoints(square, 67108864.0, 26), 0);
  specials(square, {0.0, -0.0, inf, -inf, 1e-300, 1e300, 1e200, -1e-200, denorm, 1.0, -1.0});

  // pow(x, 3)
  const Power cube{vdsim::libm_cube, 3.0};
  CHECK_EQ(log_sweep(cube, gen, 1e-120, 1e120, 2000000), 0);
  mismatches = fast = 0;
  for (int i = 0; i < 2000000; ++i) {  // the ramp's t = s / 20 in [0, 1)
    const double t = unit(gen);
    mismatches += !cube.same(t);
    double r;
    fast += vdsim::cube_without_pow(t, r) ? 1 : 0;
  }
  CHECK_EQ(mismatches, 0);
  CHECK_MSG(fast > 1700000, "pow(t, 3)'s call was skipped for only " << fast << " of 2e6");
  CHECK_EQ(binade_edges(cube, 90, {1.0, std::cbrt(2.0), std::cbrt(4.0)}), 0);
  // x = (2^17 + j) 2^-17: x^3 = 1 + 3j 2^-17 + 3j^2 2^-34 + j^3 2^-51 exactly.
  CHECK_EQ(near_midpoints(cube, 131072.0, 17), 0);
  specials(cube, {0.0, -0.0, inf, -inf, 1e-300, 1e300, 1e100, -1e-100, 1e-90, 1e90, denorm,
                  1.0, -1.0, 0.5});
  return vdsim_test::check_summary("test_libm_powers");
}
