// csrc/vdsim/fminmax.hpp: fmax_inl and fmin_inl, the physics' inline fmax and fmin.
//
// Expectations from the header's comment (x86-64 glibc's rule, maxsd / minsd): for two
// numbers fmax(x, y) = x > y ? x : y and fmin(x, y) = x < y ? x : y, so of two equal
// values (+0 and -0) y is returned, bit for bit; a NaN argument is ignored; both NaN give
// NaN. Where the arguments differ the result equals C's fmax / fmin, which is checked on
// random pairs against std::fmax / std::fmin (the C library's own).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check.hpp"
#include "vdsim/fminmax.hpp"

using vdsim::fmax_inl;
using vdsim::fmin_inl;

using vdsim_test::bits;

int main() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Equal values: y, bit for bit (the signed zeros tell which).
  CHECK_EQ(bits(fmax_inl(0.0, -0.0)), bits(-0.0));
  CHECK_EQ(bits(fmax_inl(-0.0, 0.0)), bits(0.0));
  CHECK_EQ(bits(fmin_inl(0.0, -0.0)), bits(-0.0));
  CHECK_EQ(bits(fmin_inl(-0.0, 0.0)), bits(0.0));
  // NaN ignored, both NaN: NaN.
  CHECK_EQ(fmax_inl(nan, 2.5), 2.5);
  CHECK_EQ(fmax_inl(2.5, nan), 2.5);
  CHECK_EQ(fmin_inl(nan, -2.5), -2.5);
  CHECK_EQ(fmin_inl(-2.5, nan), -2.5);
  CHECK(std::isnan(fmax_inl(nan, nan)));
  CHECK(std::isnan(fmin_inl(nan, nan)));
  // Infinities order as numbers.
  CHECK_EQ(fmax_inl(-inf, 1.0), 1.0);
  CHECK_EQ(fmax_inl(inf, 1.0), inf);
  CHECK_EQ(fmin_inl(-inf, 1.0), -inf);
  CHECK_EQ(fmin_inl(inf, -inf), -inf);
  // Distinct numbers: C's fmax and fmin, bit for bit.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  int mismatches = 0;
  for (int k = 0; k < 100000; ++k) {
    const double x = u(rng), y = (k % 7 == 0) ? x * 0.5 : u(rng);
    if (x == y) continue;
    mismatches += bits(fmax_inl(x, y)) != bits(std::fmax(x, y));
    mismatches += bits(fmin_inl(x, y)) != bits(std::fmin(x, y));
  }
  CHECK_EQ(mismatches, 0);
  return vdsim_test::check_summary("test_fminmax");
}
